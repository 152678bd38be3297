// Unit tests for ast::clone (parser/ast_clone.h): a clone prints like its original for
// every statement family, owns its whole tree (mutating or destroying one side leaves
// the other intact), and keeps the fields the printer does not show (source sites, the
// statement's text range, parameter indices, skipped declaration items).
// The corpus-wide check (every statement of the logic corpora) is in corpus_parse_test.cc.
#include "parser/ast_clone.h"

#include <gtest/gtest.h>

#include <string>

#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {
namespace {

using namespace ast;

StatementPtr parse_one(const std::string& sql) {
  auto stmts = Parser::parse(sql);
  EXPECT_EQ(stmts.size(), 1u) << sql;
  if (stmts.empty()) return nullptr;
  return std::move(stmts[0]);
}

template <class T>
const T& as(const StatementPtr& s) {
  return static_cast<const T&>(*s);
}

void expect_same_site(const SourceSite& a, const SourceSite& b, const char* what) {
  EXPECT_EQ(a.line, b.line) << what;
  EXPECT_EQ(a.column, b.column) << what;
}

// Parses `sql`, clones it, and expects both to print the same; returns the clone.
StatementPtr expect_clone_prints_same(const std::string& sql) {
  StatementPtr original = parse_one(sql);
  if (!original) return nullptr;
  StatementPtr copy = clone(*original);
  EXPECT_NE(copy.get(), original.get());
  EXPECT_EQ(copy->kind, original->kind) << sql;
  EXPECT_EQ(statement_to_string(*copy), statement_to_string(*original)) << sql;
  return copy;
}

TEST(AstClone, CloneIsIndependentOfTheOriginal) {
  StatementPtr original =
      parse_one("select a + b * 2 as x, sum(c) over (order by d) from t where c > 1");
  const std::string before = statement_to_string(*original);
  StatementPtr copy = clone(*original);

  // Rewrite the clone: rename a column, change an alias, drop the WHERE, and change the
  // window's ORDER BY.
  auto& sel = *static_cast<SelectStmt&>(*copy).select;
  auto& sum = static_cast<BinaryExpr&>(*sel.core.columns[0].expr);
  auto& a = static_cast<ColumnRef&>(*sum.left);
  a.column = "renamed";
  sel.core.columns[0].alias = "y";
  sel.core.where.reset();
  auto& call = static_cast<FunctionCall&>(*sel.core.columns[1].expr);
  static_cast<ColumnRef&>(*call.over->order_by[0].expr).column = "e";

  EXPECT_EQ(statement_to_string(*original), before);
  EXPECT_EQ(statement_to_string(*copy),
            "select renamed + b * 2 as y, sum(c) over (order by e) from t");

  // The window spec is copied, not shared.
  const auto& orig_call =
      static_cast<const FunctionCall&>(*as<SelectStmt>(original).select->core.columns[1].expr);
  EXPECT_NE(orig_call.over.get(), call.over.get());
  EXPECT_EQ(orig_call.over.use_count(), 1);

  // Destroying the original leaves the clone whole.
  original.reset();
  EXPECT_EQ(statement_to_string(*copy),
            "select renamed + b * 2 as y, sum(c) over (order by e) from t");
}

TEST(AstClone, ExpressionsAndSelectsOnTheirOwn) {
  ExprPtr e = Parser::parse_expression(
      "case when x between 1 and 2 then cast(y as text) collate nocase else -z end "
      "|| coalesce(:p, ?) like 'a%' escape '!' and w not in (1, 2) and v is not null");
  ExprPtr c = clone(*e);
  EXPECT_EQ(expr_to_string(*c), expr_to_string(*e));
  EXPECT_EQ(clone_or_null(ExprPtr()), nullptr);

  StatementPtr s = parse_one(
      "select * from t where exists (select 1 from u where u.k = t.k) and t.k in (select k "
      "from v) and (select max(k) from w) > 0");
  const Select& sel = *as<SelectStmt>(s).select;
  std::unique_ptr<Select> copy = clone(sel);
  EXPECT_EQ(select_to_string(*copy), select_to_string(sel));
  EXPECT_EQ(clone_or_null(std::unique_ptr<Select>()), nullptr);
}

TEST(AstClone, WindowOverClauses) {
  auto copy = expect_clone_prints_same(
      "select sum(x) over (partition by g, h order by y desc nulls last, z rows between 1 "
      "preceding and current row exclude ties), row_number() over (), count(*) over (order "
      "by y range between unbounded preceding and unbounded following), avg(distinct x) over "
      "(groups 2 preceding) from t");
  const auto& call = static_cast<const FunctionCall&>(
      *as<SelectStmt>(copy).select->core.columns[0].expr);
  ASSERT_TRUE(call.over && call.over->frame);
  EXPECT_EQ(call.over->partition_by.size(), 2u);
  EXPECT_TRUE(call.over->frame->has_end);
  EXPECT_EQ(call.over->frame->exclude, WindowFrame::Exclude::kTies);

  // The spec and the frame clone on their own, too.
  std::unique_ptr<WindowSpec> spec = clone(*call.over);
  EXPECT_EQ(spec->order_by.size(), 2u);
  EXPECT_TRUE(spec->order_by[0].desc);
  EXPECT_EQ(spec->order_by[0].nulls, OrderingTerm::Nulls::kLast);
  ASSERT_TRUE(spec->frame);
  EXPECT_EQ(spec->frame->start.kind, FrameBound::Kind::kPreceding);
  EXPECT_NE(spec->frame->start.offset.get(), call.over->frame->start.offset.get());
}

TEST(AstClone, CommonTableExpressions) {
  auto copy = expect_clone_prints_same(
      "with recursive c(n) as materialized (select 1 union all select n + 1 from c where n < "
      "5), d as not materialized (select n from c) option (maxrecursion 10) select n from d");
  const Select& sel = *as<SelectStmt>(copy).select;
  ASSERT_TRUE(sel.with);
  EXPECT_TRUE(sel.with->recursive);
  EXPECT_EQ(sel.with->max_recursion, 10);
  ASSERT_EQ(sel.with->ctes.size(), 2u);
  EXPECT_EQ(sel.with->ctes[0].columns, std::vector<std::string>{"n"});
  EXPECT_EQ(sel.with->ctes[1].materialization,
            CommonTableExpr::Materialization::kNotMaterialized);

  std::unique_ptr<WithClause> with = clone(*sel.with);
  EXPECT_EQ(with->ctes.size(), 2u);
  expect_same_site(with->ctes[1].site, sel.with->ctes[1].site, "CTE site");

  // A CTE whose body is a DML statement with RETURNING (Select::dml).
  expect_clone_prints_same(
      "with moved as (delete from a where k < 3 returning k) insert into b select k from moved");
}

TEST(AstClone, CompoundSelects) {
  expect_clone_prints_same(
      "select a from t union select b from u except select c from v intersect select d from "
      "w order by 1 desc limit 3 offset 1");
  expect_clone_prints_same("select 1 union all (select 2 union select 3 order by 1 limit 1)");
  expect_clone_prints_same("values (1, 'a'), (2, 'b') union all select 3, 'c'");
  auto copy = expect_clone_prints_same(
      "select id from a union exists left as inA, exists right as inB select id from b");
  const Select& sel = *as<SelectStmt>(copy).select;
  ASSERT_EQ(sel.compounds.size(), 1u);
  ASSERT_EQ(sel.compounds[0].membership.size(), 2u);
  EXPECT_EQ(sel.compounds[0].membership[1].name, "inB");
}

TEST(AstClone, FromClauses) {
  auto copy = expect_clone_prints_same(
      "select * from s.t as x join (select 1 as a) as q(b) on q.b = x.a left join u using "
      "(k) exists left as hasU cross join lateral json_each(x.j) as j(key, value)");
  const Select& sel = *as<SelectStmt>(copy).select;
  ASSERT_TRUE(sel.core.from);
  TableSourcePtr from = clone(*sel.core.from);
  EXPECT_EQ(from->kind, TableSource::Kind::kJoin);
  EXPECT_EQ(from->join, JoinKind::kCross);
  EXPECT_TRUE(from->right->lateral);
  EXPECT_EQ(from->right->alias_columns, (std::vector<std::string>{"key", "value"}));
  ASSERT_EQ(from->left->kind, TableSource::Kind::kJoin);
  ASSERT_EQ(from->left->exists_columns.size(), 1u);
  EXPECT_EQ(from->left->exists_columns[0].side, ExistenceColumn::Side::kLeft);
  EXPECT_EQ(from->left->using_columns, std::vector<std::string>{"k"});
  expect_same_site(from->site, sel.core.from->site, "join site");
  expect_same_site(from->right->site, sel.core.from->right->site, "function source site");
}

TEST(AstClone, UpsertsWithReturning) {
  auto copy = expect_clone_prints_same(
      "insert into t (a, b) values (1, 2), (3, 4) on conflict (a) where a > 0 do update "
      "set b = excluded.b, c = 1 where t.b < excluded.b on conflict do nothing "
      "returning a, b as bb, *");
  const auto& ins = as<InsertStmt>(copy);
  ASSERT_EQ(ins.upserts.size(), 2u);
  EXPECT_FALSE(ins.upserts[0].do_nothing);
  EXPECT_TRUE(ins.upserts[1].do_nothing);
  EXPECT_EQ(ins.upserts[0].set[1].columns, std::vector<std::string>{"c"});
  EXPECT_EQ(ins.returning.size(), 3u);
  EXPECT_EQ(ins.returning[2].kind, ResultColumn::Kind::kStar);
  UpsertClause upsert = clone(ins.upserts[0]);
  EXPECT_EQ(upsert.target.size(), 1u);
  EXPECT_NE(upsert.target_where, nullptr);
  EXPECT_NE(upsert.where, nullptr);
  expect_same_site(upsert.site, ins.upserts[0].site, "upsert site");
  EXPECT_GT(upsert.site.column, 1);

  std::vector<ResultColumn> returning = clone(ins.returning);
  EXPECT_EQ(returning[1].alias, "bb");
  expect_same_site(returning[1].site, ins.returning[1].site, "RETURNING column site");

  expect_clone_prints_same(
      "update t as x set a = a + 1 where k = 2 with context who = 'me' with tags (why = "
      "'fix') with schema s1, s2 returning old.a, new.a");
  expect_clone_prints_same("delete from t as x where x.k = 1 returning *");
  expect_clone_prints_same("replace into t (a) values (1)");
  expect_clone_prints_same("insert or abort into s.t select * from u");
}

TEST(AstClone, CreateTableWithConstraints) {
  auto copy = expect_clone_prints_same(
      "create temp table if not exists s.t ("
      " id integer primary key desc on conflict replace,"
      " a text not null collate nocase default 'x' unique,"
      " b integer constraint b_pos check on insert, update (b > 0) with tags (level = 'warn'),"
      " c integer references p (id) on delete cascade on update set null deferrable initially "
      "deferred,"
      " d integer generated always as (b * 2) stored,"
      " constraint pk2 unique (a collate nocase desc, b) on conflict ignore,"
      " check (a <> '') ,"
      " foreign key (c, d) references q (x, y) not deferrable"
      ") using memory (cache = 10) with tags (owner = 'me')");
  const auto& ct = as<CreateTableStmt>(copy);
  EXPECT_TRUE(ct.temporary);
  EXPECT_TRUE(ct.if_not_exists);
  ASSERT_EQ(ct.columns.size(), 5u);
  ASSERT_EQ(ct.constraints.size(), 3u);
  EXPECT_EQ(ct.columns[3].constraints[0].fk_on_delete, FkAction::kCascade);
  EXPECT_EQ(ct.columns[3].constraints[0].fk_deferral.initially,
            FkDeferral::Initially::kDeferred);
  EXPECT_EQ(ct.columns[2].constraints[0].check_on,
            (std::vector<RowOp>{RowOp::kInsert, RowOp::kUpdate}));

  StatementPtr original = parse_one(statement_to_string(*copy));
  const auto& ot = as<CreateTableStmt>(original);
  ColumnDef col = clone(ot.columns[2]);
  EXPECT_EQ(col.constraints[0].name, "b_pos");
  EXPECT_EQ(col.constraints[0].tags.size(), 1u);
  expect_same_site(col.site, ot.columns[2].site, "column site");
  expect_same_site(col.constraints[0].site, ot.columns[2].constraints[0].site,
                   "column constraint site");
  TableConstraint tc = clone(ot.constraints[0]);
  EXPECT_EQ(tc.name, "pk2");
  EXPECT_EQ(tc.on_conflict, ConflictClause::kIgnore);
  ASSERT_EQ(tc.columns.size(), 2u);
  EXPECT_TRUE(tc.columns[0].desc);
  expect_same_site(tc.site, ot.constraints[0].site, "table constraint site");

  expect_clone_prints_same(
      "create table t (a integer) using memory with context (m integer not null, n text null)");
  expect_clone_prints_same(
      "create table m (h, e) maintained (h, e) as select h, e from src with defaults (z = 0) "
      "with tags (a = 1)");
}

// One statement of every other kind (the corpus check covers them at scale).
TEST(AstClone, EveryStatementKind) {
  const char* kStatements[] = {
      "create unique index if not exists ix on t (a collate nocase desc, b) where a is not null "
      "with tags (k = 1)",
      "create view if not exists v (x, y) as select a, b from t with schema s with defaults "
      "(y = 0) with tags (k = 'v')",
      "create view w as select a as x with inverse (a = x + 1) from t",
      "create materialized view if not exists mv (a) using memory (k = 1) as select a from t "
      "with tags (k = 1)",
      "create assertion pos check (not exists (select 1 from t where a < 0))",
      "drop materialized view if exists s.mv",
      "alter table t rename to u",
      "alter table t rename column a to b",
      "alter table t add column c integer not null default 1 with tags (k = 1)",
      "alter table t drop column c",
      "alter table t add constraint ck check (a > 0)",
      "alter table t drop constraint ck",
      "alter table t rename constraint ck to ck2",
      "alter table t alter primary key (a, b desc)",
      "alter table t alter column a set default 3",
      "alter table t alter column a set data type text",
      "alter table t alter column a set collate nocase",
      "alter table t alter column a drop not null",
      "alter table t alter column a add tags (k = 1)",
      "alter table t set maintained (a) as select a from s",
      "alter table t drop maintained",
      "alter view v drop tags (k)",
      "refresh materialized view mv",
      "begin immediate",
      "commit",
      "rollback to savepoint sp",
      "savepoint sp",
      "release sp",
      "pragma s.cache_size = -2",
      "pragma table_info(t)",
      "analyze s.*",
      "analyze s.t",
      "declare logical schema App version '1.0' using (k = 'v') { table Car (id int primary "
      "key); view v as select id from Car; seed Car values (1), (2) }",
      "declare lens for App over Store { view Car as select id from CarCore }",
      "apply schema main to version '1.0.0' with seed options (allow_destructive = true)",
      "diff schema main",
      "explain schema main",
      "explain schema main version '2.0'",
  };
  for (const char* sql : kStatements) {
    SCOPED_TRACE(sql);
    StatementPtr original;
    try {
      original = parse_one(sql);
    } catch (const Error& e) {
      ADD_FAILURE() << "does not parse: " << e.what();
      continue;
    }
    StatementPtr copy = clone(*original);
    EXPECT_EQ(copy->kind, original->kind);
    EXPECT_EQ(statement_to_string(*copy), statement_to_string(*original));
  }
}

// Fields the printer does not show are copied as well.
TEST(AstClone, KeepsFieldsThePrinterDoesNotShow) {
  auto stmts = Parser::parse("select 1;\n  select a from t where b = ? and c = :name");
  ASSERT_EQ(stmts.size(), 2u);
  const Statement& second = *stmts[1];
  StatementPtr copy = clone(second);
  EXPECT_EQ(copy->text_begin, second.text_begin);
  EXPECT_EQ(copy->text_end, second.text_end);
  EXPECT_GT(copy->text_begin, 0u);
  expect_same_site(copy->site, second.site, "statement site");

  const Select& os = *static_cast<const SelectStmt&>(second).select;
  const Select& cs = *static_cast<const SelectStmt&>(*copy).select;
  expect_same_site(cs.site, os.site, "select site");
  expect_same_site(cs.core.columns[0].site, os.core.columns[0].site, "result column site");
  expect_same_site(cs.core.from->table.site, os.core.from->table.site, "table name site");
  const auto& ow = static_cast<const BinaryExpr&>(*os.core.where);
  const auto& cw = static_cast<const BinaryExpr&>(*cs.core.where);
  expect_same_site(cw.site, ow.site, "WHERE site");
  const auto& oeq = static_cast<const BinaryExpr&>(*ow.right);
  const auto& ceq = static_cast<const BinaryExpr&>(*cw.right);
  expect_same_site(ceq.right->site, oeq.right->site, "parameter site");
  const auto& op1 = static_cast<const Parameter&>(*static_cast<const BinaryExpr&>(*ow.left).right);
  const auto& cp1 = static_cast<const Parameter&>(*static_cast<const BinaryExpr&>(*cw.left).right);
  EXPECT_EQ(cp1.index, op1.index);
  EXPECT_EQ(cp1.index, 1);
  EXPECT_EQ(cp1.spelling, "?");
  const auto& cp2 = static_cast<const Parameter&>(*ceq.right);
  EXPECT_EQ(cp2.name, "name");
  EXPECT_EQ(cp2.index, 0);

  // DECLARE SCHEMA counts the items it skipped; the printer does not show the count.
  auto d = parse_one(
      "declare schema main { table t (a integer) domain email as text check (value like "
      "'%@%'); }");
  auto dc = clone(*d);
  EXPECT_EQ(as<DeclareSchemaStmt>(dc).skipped_items, as<DeclareSchemaStmt>(d).skipped_items);
  EXPECT_EQ(as<DeclareSchemaStmt>(dc).skipped_items, 1);
  const auto& item = *as<DeclareSchemaStmt>(dc).items[0];
  expect_same_site(item.site, as<DeclareSchemaStmt>(d).items[0]->site, "schema item site");
}

}  // namespace
}  // namespace quereus
