// Unit tests for the statement families of the full dialect beyond plain SQL: ALTER
// (every arm of sql-alter.md), materialized views, maintained tables, assertions,
// upsert, mutation context, tags, existence / membership columns, WITH SCHEMA /
// DEFAULTS / INVERSE, and the declarative statements (declare schema, declare logical
// schema, declare lens, seeds, apply / diff / explain schema). Each family checks the
// AST, the canonical print, and that the print re-parses to itself.
#include <gtest/gtest.h>

#include <string>

#include "parser/ast.h"
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

template <typename T>
std::unique_ptr<T> parse_as(const std::string& sql) {
  StatementPtr s = parse_one(sql);
  EXPECT_TRUE(dynamic_cast<T*>(s.get())) << sql;
  return std::unique_ptr<T>(static_cast<T*>(s.release()));
}

// The canonical print, checked to be a fixed point of print → parse → print.
std::string print(const std::string& sql) {
  std::string first = statement_to_string(*parse_one(sql));
  std::string second = statement_to_string(*parse_one(first));
  EXPECT_EQ(first, second) << "not a fixed point for: " << sql;
  return first;
}

std::string parse_error(const std::string& sql) {
  try {
    Parser::parse(sql);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a parse error for: " << sql;
  return "";
}

#define EXPECT_PARSE_ERROR(sql, text)                                              \
  do {                                                                             \
    std::string e_ = parse_error(sql);                                             \
    EXPECT_NE(e_.find(text), std::string::npos) << "message: " << e_;              \
  } while (0)

// ------------------------------------------------------------------ ALTER TABLE

TEST(ParserAlter, EveryTableArm) {
  using A = AlterTableStmt::Action;
  using C = AlterTableStmt::ColumnAction;
  auto r = parse_as<AlterTableStmt>("alter table s.t rename to u");
  EXPECT_EQ(r->action, A::kRenameTable);
  EXPECT_EQ(r->table.schema, "s");
  EXPECT_EQ(r->new_name, "u");

  auto rc = parse_as<AlterTableStmt>("ALTER TABLE t RENAME COLUMN a TO b");
  EXPECT_EQ(rc->action, A::kRenameColumn);
  EXPECT_EQ(rc->name, "a");
  EXPECT_EQ(rc->new_name, "b");
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t rename a to b")->action, A::kRenameColumn);

  auto ac = parse_as<AlterTableStmt>("alter table t add column c text not null default 'x'");
  EXPECT_EQ(ac->action, A::kAddColumn);
  ASSERT_TRUE(ac->column);
  EXPECT_EQ(ac->column->name, "c");
  EXPECT_EQ(ac->column->constraints.size(), 2u);
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t add c integer")->action, A::kAddColumn);
  // `add tags integer` adds a column called "tags" (no list follows TAGS).
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t add tags integer")->column->name, "tags");
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t drop tags")->action, A::kDropColumn);

  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t drop column c")->name, "c");
  auto addc = parse_as<AlterTableStmt>("alter table t add constraint ck check (a > 0)");
  EXPECT_EQ(addc->action, A::kAddConstraint);
  EXPECT_EQ(addc->constraint->name, "ck");
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t add unique (a, b)")->constraint->columns.size(), 2u);
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t add foreign key (a) references p(id)")->action,
            A::kAddConstraint);
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t drop constraint ck")->action, A::kDropConstraint);
  auto rn = parse_as<AlterTableStmt>("alter table t rename constraint a to b");
  EXPECT_EQ(rn->action, A::kRenameConstraint);
  EXPECT_EQ(rn->new_name, "b");

  auto pk = parse_as<AlterTableStmt>("alter table t alter primary key (a desc, b)");
  EXPECT_EQ(pk->action, A::kAlterPrimaryKey);
  ASSERT_EQ(pk->key.size(), 2u);
  EXPECT_TRUE(pk->key[0].desc);
  EXPECT_TRUE(parse_as<AlterTableStmt>("alter table t alter primary key ()")->key.empty());

  struct {
    const char* sql;
    C action;
  } columns[] = {
      {"alter table t alter column c set not null", C::kSetNotNull},
      {"alter table t alter column c drop not null", C::kDropNotNull},
      {"alter table t alter column c set data type integer", C::kSetDataType},
      {"alter table t alter column c set default 0", C::kSetDefault},
      {"alter table t alter column c drop default", C::kDropDefault},
      {"alter table t alter column c set collate nocase", C::kSetCollate},
      {"alter table t alter c set not null", C::kSetNotNull},
  };
  for (const auto& c : columns) {
    auto s = parse_as<AlterTableStmt>(c.sql);
    EXPECT_EQ(s->action, A::kAlterColumn) << c.sql;
    EXPECT_EQ(s->column_action, c.action) << c.sql;
    EXPECT_EQ(s->name, "c") << c.sql;
  }
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t alter column c set data type text")->type_name,
            "text");

  auto sm = parse_as<AlterTableStmt>(
      "alter table t set maintained as select id, x from s with defaults (y = 1)");
  EXPECT_EQ(sm->action, A::kSetMaintained);
  ASSERT_TRUE(sm->maintained);
  EXPECT_EQ(sm->maintained->defaults.size(), 1u);
  EXPECT_EQ(parse_as<AlterTableStmt>("alter table t drop maintained")->action, A::kDropMaintained);

  EXPECT_PARSE_ERROR("alter table t frobnicate", "Expected RENAME, ADD, DROP, ALTER");
  EXPECT_PARSE_ERROR("alter table t alter column c set", "Expected NOT NULL, DATA TYPE");
}

TEST(ParserAlter, TagVerbsOnEverySite) {
  using T = AlterTableStmt::TagTarget;
  auto t = parse_as<AlterTableStmt>("alter table t set tags (display_name = 'Orders', audit = true)");
  EXPECT_EQ(t->action, AlterTableStmt::Action::kTags);
  EXPECT_EQ(t->tag_target, T::kTable);
  EXPECT_EQ(t->tag_verb, TagVerb::kSet);
  ASSERT_EQ(t->tags.size(), 2u);
  EXPECT_EQ(t->tags[0].name, "display_name");
  EXPECT_TRUE(parse_as<AlterTableStmt>("alter table t set tags ()")->tags.empty());
  auto d = parse_as<AlterTableStmt>("alter table t drop tags (a, \"quereus.id\")");
  EXPECT_EQ(d->tag_verb, TagVerb::kDrop);
  ASSERT_EQ(d->tags.size(), 2u);
  EXPECT_EQ(d->tags[1].name, "quereus.id");
  EXPECT_FALSE(d->tags[1].value);
  auto c = parse_as<AlterTableStmt>("alter table t alter column c add tags (k = null)");
  EXPECT_EQ(c->tag_target, T::kColumn);
  EXPECT_EQ(c->tag_verb, TagVerb::kAdd);
  auto k = parse_as<AlterTableStmt>("alter table t alter constraint ck set tags (k = -1.5)");
  EXPECT_EQ(k->tag_target, T::kConstraint);

  auto v = parse_as<AlterTagsStmt>("alter view v set tags (a = 1)");
  EXPECT_EQ(v->object, ObjectKind::kView);
  EXPECT_EQ(parse_as<AlterTagsStmt>("alter materialized view mv drop tags (a)")->object,
            ObjectKind::kMaterializedView);
  EXPECT_EQ(parse_as<AlterTagsStmt>("alter index ix add tags (a = 'x')")->object, ObjectKind::kIndex);
  EXPECT_PARSE_ERROR("alter view v rename to w", "Expected SET TAGS, ADD TAGS, or DROP TAGS");
  EXPECT_PARSE_ERROR("alter table t set tags (a = b)", "Expected tag value");

  EXPECT_EQ(print("ALTER TABLE t ALTER COLUMN c DROP TAGS (a, b)"),
            "alter table t alter column c drop tags (a, b)");
  EXPECT_EQ(print("alter index ix set tags (\"quereus.id\" = 'x')"),
            "alter index ix set tags (\"quereus.id\" = 'x')");
}

TEST(ParserAlter, CanonicalPrint) {
  EXPECT_EQ(print("ALTER TABLE t RENAME a TO b"), "alter table t rename column a to b");
  EXPECT_EQ(print("alter table t add c integer null"), "alter table t add column c integer null");
  EXPECT_EQ(print("alter table t add constraint u unique (a) on conflict ignore"),
            "alter table t add constraint u unique (a) on conflict ignore");
  EXPECT_EQ(print("alter table t alter column c set default (1 + 2)"),
            "alter table t alter column c set default (1 + 2)");
  EXPECT_EQ(print("alter table t alter column c set collate NOCASE"),
            "alter table t alter column c set collate nocase");
  EXPECT_EQ(print("alter table t alter primary key (b desc)"), "alter table t alter primary key (b desc)");
  EXPECT_EQ(print("alter table t set maintained (a) as select 1"),
            "alter table t set maintained (a) as select 1");
}

// ------------------------------------------------------------------ DDL extensions

TEST(ParserDdlExt, TagsOnEveryDdlSite) {
  auto t = parse_as<CreateTableStmt>(
      "create table Orders (id integer primary key with tags (display_name = 'Product ID'), "
      "email text, constraint uq unique (email) with tags (error_message = 'dup')) "
      "with tags (display_name = 'Customer Orders', audit = true)");
  ASSERT_EQ(t->columns.size(), 2u);
  EXPECT_EQ(t->columns[0].tags.size(), 1u);
  ASSERT_EQ(t->constraints.size(), 1u);
  EXPECT_EQ(t->constraints[0].tags.size(), 1u);
  EXPECT_EQ(t->tags.size(), 2u);
  auto i = parse_as<CreateIndexStmt>("create index ix on p (name) with tags (purpose = 'search')");
  EXPECT_EQ(i->tags.size(), 1u);
  auto v = parse_as<CreateViewStmt>("create view v as select 1 with tags (cacheable = true)");
  EXPECT_EQ(v->tags.size(), 1u);
  EXPECT_EQ(print("create table t (a integer not null with tags (x = 1)) with tags (y = 'z')"),
            "create table t (a integer not null with tags (x = 1)) with tags (y = 'z')");
}

TEST(ParserDdlExt, MutationContextDeclaration) {
  auto t = parse_as<CreateTableStmt>(
      "create table t (id integer primary key, n integer default markup) using memory "
      "with context (markup integer, note text null)");
  ASSERT_EQ(t->context.size(), 2u);
  EXPECT_EQ(t->context[0].name, "markup");
  EXPECT_EQ(t->context[0].type_name, "integer");
  ASSERT_EQ(t->context[1].constraints.size(), 1u);
  EXPECT_EQ(t->context[1].constraints[0].kind, ColumnConstraint::Kind::kNull);
  EXPECT_EQ(print("create table t (a integer) using memory with context (m integer not null)"),
            "create table t (a integer) using memory with context (m integer not null)");
  // WITH TAGS and WITH CONTEXT in either order.
  auto both = parse_as<CreateTableStmt>("create table t (a integer) with tags (x = 1) with context (m integer)");
  EXPECT_EQ(both->tags.size(), 1u);
  EXPECT_EQ(both->context.size(), 1u);
}

TEST(ParserDdlExt, MaterializedViewsAndMaintainedTables) {
  auto mv = parse_as<CreateMaterializedViewStmt>(
      "create materialized view if not exists mv (a, b) using memory(x = 1) as "
      "select d, sum(amt) from sales group by d with tags (k = 'v')");
  EXPECT_TRUE(mv->if_not_exists);
  EXPECT_EQ(mv->columns.size(), 2u);
  EXPECT_EQ(mv->module_name, "memory");
  EXPECT_EQ(mv->module_args.size(), 1u);
  EXPECT_EQ(mv->tags.size(), 1u);
  EXPECT_EQ(print("CREATE MATERIALIZED VIEW mv AS SELECT id FROM t"),
            "create materialized view mv as select id from t");

  auto mt = parse_as<CreateTableStmt>(
      "create table X (handle text collate nocase primary key, email text) using memory "
      "maintained (handle, email) as select h, e from src with defaults (z = 0) with tags (a = 1)");
  ASSERT_TRUE(mt->maintained);
  EXPECT_EQ(mt->maintained_columns.size(), 2u);
  EXPECT_EQ(mt->maintained->defaults.size(), 1u);
  EXPECT_EQ(mt->tags.size(), 1u);
  EXPECT_EQ(print("create table x (a integer primary key) maintained as select 1 as a"),
            "create table x (a integer primary key) maintained as select 1 as a");

  EXPECT_EQ(parse_as<RefreshMaterializedViewStmt>("refresh materialized view s.mv")->view.schema, "s");
  EXPECT_EQ(print("REFRESH MATERIALIZED VIEW mv"), "refresh materialized view mv");
  EXPECT_EQ(print("drop materialized view if exists mv"), "drop materialized view if exists mv");
}

TEST(ParserDdlExt, Assertions) {
  auto a = parse_as<CreateAssertionStmt>(
      "create assertion s.a1 check ((select count(*) from t) >= 0)");
  EXPECT_EQ(a->name.schema, "s");
  EXPECT_TRUE(a->check);
  EXPECT_EQ(print("CREATE ASSERTION a CHECK (NOT EXISTS (SELECT 1 FROM t WHERE x < 0))"),
            "create assertion a check (not exists (select 1 from t where x < 0))");
  EXPECT_EQ(print("drop assertion if exists a"), "drop assertion if exists a");
  EXPECT_PARSE_ERROR("create assertion a (x > 0)", "Expected CHECK after assertion name");
}

// ------------------------------------------------------------------ DML extensions

TEST(ParserDmlExt, Upsert) {
  auto i = parse_as<InsertStmt>(
      "insert into t (id, name) values (1, 'a') on conflict (id) do update set name = "
      "excluded.name where t.name <> excluded.name returning *");
  ASSERT_EQ(i->upserts.size(), 1u);
  const UpsertClause& u = i->upserts[0];
  EXPECT_FALSE(u.do_nothing);
  ASSERT_EQ(u.target.size(), 1u);
  EXPECT_EQ(u.set.size(), 1u);
  EXPECT_TRUE(u.where);
  EXPECT_EQ(i->returning.size(), 1u);
  auto n = parse_as<InsertStmt>("insert into t values (1) on conflict do nothing");
  EXPECT_TRUE(n->upserts[0].do_nothing);
  EXPECT_TRUE(n->upserts[0].target.empty());
  auto multi = parse_as<InsertStmt>(
      "insert into t values (1, 2) on conflict (a) do nothing on conflict (b) where b > 0 do "
      "update set c = 1");
  ASSERT_EQ(multi->upserts.size(), 2u);
  EXPECT_TRUE(multi->upserts[1].target_where);
  EXPECT_EQ(print("INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = excluded.v"),
            "insert into t values (1) on conflict (id) do update set v = excluded.v");
  EXPECT_PARSE_ERROR("insert or replace into t values (1) on conflict do nothing",
                     "Cannot use both 'INSERT OR ...' and 'ON CONFLICT' in the same statement");
  EXPECT_PARSE_ERROR("insert into t values (1) on conflict do", "Expected NOTHING or UPDATE after DO");
}

TEST(ParserDmlExt, MutationContextTagsAndSchemaPath) {
  auto i = parse_as<InsertStmt>("insert into t (id) with context markup = 42, b = 'x' values (1)");
  ASSERT_EQ(i->context.size(), 2u);
  EXPECT_EQ(i->context[0].name, "markup");
  auto after = parse_as<InsertStmt>("insert into t (id, a) values (1, 3) with context a = 100");
  EXPECT_EQ(after->context.size(), 1u);
  auto paren = parse_as<InsertStmt>("insert into t values (1) with context (a = 1, b = 2)");
  EXPECT_EQ(paren->context.size(), 2u);
  auto u = parse_as<UpdateStmt>("update t with context allow = 1 set a = 2 where id = 1");
  EXPECT_EQ(u->context.size(), 1u);
  auto d = parse_as<DeleteStmt>(
      "delete from t where id = 1 with context allow_delete = 1 with tags (why = 'gc') with "
      "schema main, aux");
  EXPECT_EQ(d->context.size(), 1u);
  EXPECT_EQ(d->tags.size(), 1u);
  EXPECT_EQ(d->schema_path.size(), 2u);
  EXPECT_EQ(print("DELETE FROM t WHERE id = 1 WITH CONTEXT a = 1"),
            "delete from t where id = 1 with context a = 1");
  EXPECT_PARSE_ERROR("insert into t values (1) with context a = 1, a = 2",
                     "mutation context variable 'a' supplied more than once");
}

// ------------------------------------------------------------------ query extensions

TEST(ParserQueryExt, ExistenceAndMembershipColumns) {
  auto s = parse_one(
      "select a.id, aOnly, bOnly from a full join b on b.k = a.k exists left as aOnly, exists "
      "right as bOnly");
  const Select& sel = *static_cast<const SelectStmt&>(*s).select;
  ASSERT_EQ(sel.core.from->kind, TableSource::Kind::kJoin);
  ASSERT_EQ(sel.core.from->exists_columns.size(), 2u);
  EXPECT_EQ(sel.core.from->exists_columns[0].side, ExistenceColumn::Side::kLeft);
  EXPECT_EQ(sel.core.from->exists_columns[1].name, "bOnly");
  EXPECT_EQ(print("select c.id from c left join o on o.c = c.id exists as hasOrder"),
            "select c.id from c left join o on o.c = c.id exists as hasOrder");

  auto m = parse_one("select id from a union exists left as inA, exists right as inB select id from b");
  const Select& ms = *static_cast<const SelectStmt&>(*m).select;
  ASSERT_EQ(ms.compounds.size(), 1u);
  EXPECT_EQ(ms.compounds[0].membership.size(), 2u);
  EXPECT_EQ(print("select 1 union all exists right as r select 2"),
            "select 1 union all exists right as r select 2");
  EXPECT_PARSE_ERROR("select 1 diff exists left as a select 2", "not allowed on DIFF");
  // EXISTS (subquery) still starts a predicate.
  EXPECT_NO_THROW(Parser::parse("select exists (select 1)"));
}

TEST(ParserQueryExt, WithSchemaDefaultsInverse) {
  auto s = parse_one("select * from users with schema main, aux order by id");
  const Select& sel = *static_cast<const SelectStmt&>(*s).select;
  EXPECT_EQ(sel.schema_path.size(), 2u);
  EXPECT_EQ(sel.order_by.size(), 1u);
  EXPECT_EQ(print("select * from users with schema main order by id"),
            "select * from users order by id with schema main");

  auto v = parse_as<CreateViewStmt>(
      "create view NewUsers (uid, label) as select id, name from Users with defaults "
      "(created = epoch_ms('now'))");
  EXPECT_EQ(v->select->defaults.size(), 1u);
  EXPECT_PARSE_ERROR("select 1 with defaults (a = 1, a = 2)", "Duplicate column 'a' in WITH DEFAULTS");

  auto inv = parse_one(
      "select first || ' ' || last as full_name with inverse (first = substr(new.full_name, 1, "
      "2), last = new.full_name) from people");
  const Select& is = *static_cast<const SelectStmt&>(*inv).select;
  EXPECT_EQ(is.core.columns[0].inverse.size(), 2u);
  EXPECT_PARSE_ERROR("select code20 as a with inverse (code20 = new.a, code20 = new.a) from t",
                     "Duplicate column 'code20' in WITH INVERSE");
  EXPECT_EQ(print("select x + 1 as y with inverse (x = new.y - 1) from t"),
            "select x + 1 as y with inverse (x = new.y - 1) from t");
  // committed.<table> is an ordinary qualified source.
  EXPECT_EQ(print("select * from committed.t"), "select * from committed.t");
}

// ------------------------------------------------------------------ declarative

TEST(ParserDeclarative, DeclareSchema) {
  auto d = parse_as<DeclareSchemaStmt>(R"(
    declare schema main version '1.2.3' using (default_vtab_module = 'memory') {
      table users { id integer primary key, email text not null unique }
      table sessions (id text primary key) using memory;
      table customer with tags ("quereus.id" = 'tbl') { customer_id integer primary key }
      table explicit_table using memory { id integer primary key }
      index users_email on users(email);
      unique index ue on users(email) where email is not null
      view v as select id from users
      materialized view mv as select id from users
      create materialized view ix as select id from users order by id;
      seed users ((1, 'a'), (2, 'b'))
      seed sessions (id) values ('x'), ('y');
      assertion nonneg check (not exists (select 1 from users where id < 0))
      domain email_address as text check (like(value, '%@%'));
    })");
  EXPECT_FALSE(d->logical);
  EXPECT_EQ(d->name, "main");
  EXPECT_EQ(d->version, "1.2.3");
  EXPECT_EQ(d->options.size(), 1u);
  ASSERT_EQ(d->items.size(), 12u);
  EXPECT_EQ(d->skipped_items, 1);
  EXPECT_EQ(d->items[0]->kind, StmtKind::kCreateTable);
  EXPECT_EQ(static_cast<const CreateTableStmt&>(*d->items[2]).tags.size(), 1u);
  EXPECT_EQ(static_cast<const CreateTableStmt&>(*d->items[3]).module_name, "memory");
  EXPECT_EQ(d->items[4]->kind, StmtKind::kCreateIndex);
  EXPECT_TRUE(static_cast<const CreateIndexStmt&>(*d->items[5]).unique);
  EXPECT_EQ(d->items[6]->kind, StmtKind::kCreateView);
  EXPECT_EQ(d->items[7]->kind, StmtKind::kCreateMaterializedView);
  EXPECT_EQ(d->items[8]->kind, StmtKind::kCreateMaterializedView);
  const auto& seed = static_cast<const SeedStmt&>(*d->items[9]);
  EXPECT_EQ(seed.table, "users");
  EXPECT_EQ(seed.rows.size(), 2u);
  EXPECT_EQ(static_cast<const SeedStmt&>(*d->items[10]).columns.size(), 1u);
  EXPECT_EQ(d->items[11]->kind, StmtKind::kCreateAssertion);

  EXPECT_EQ(print("declare schema s2 {}"), "declare schema s2 {}");
  EXPECT_EQ(print("declare schema m { table t (a integer) seed t ((1)) }"),
            "declare schema m { table t (a integer); seed t values (1) }");
  // An item keyword at an item's top level ends the previous item; inside parentheses
  // it is still an alias.
  auto items = parse_as<DeclareSchemaStmt>(
      "declare schema main { view v1 as select id from t1 where exists (select 1 from t2 "
      "materialized) materialized view m2 as select id from t1 }");
  EXPECT_EQ(items->items.size(), 2u);
  EXPECT_EQ(Parser::parse("select a from t1 materialized").size(), 1u);
}

TEST(ParserDeclarative, LogicalSchemaAndLens) {
  auto l = parse_as<DeclareSchemaStmt>(
      "declare logical schema App { table Car (id int primary key, make text, topSpeed int); }");
  EXPECT_TRUE(l->logical);
  EXPECT_EQ(l->items.size(), 1u);
  auto lens = parse_as<DeclareLensStmt>(
      "declare lens for App over Store { view Car as select id, make, topSpeed from CarCore "
      "join CarSpeed using (id); view Audit as select id, upper(who) as label from Store.AuditLog }");
  EXPECT_EQ(lens->logical_schema, "App");
  EXPECT_EQ(lens->basis_schema, "Store");
  ASSERT_EQ(lens->views.size(), 2u);
  EXPECT_EQ(lens->views[1].name, "Audit");
  EXPECT_EQ(print("declare lens for a over b { }"), "declare lens for a over b {}");
  EXPECT_PARSE_ERROR("declare lens for a over b { view t as select 1 union select 2 }",
                     "must be a single SELECT");
  EXPECT_PARSE_ERROR("declare lens for a over b { view t as select 1; view T as select 2 }",
                     "declared more than once");
}

TEST(ParserDeclarative, ApplyDiffExplain) {
  auto a = parse_as<ApplySchemaStmt>(
      "apply schema main to version '1.0.0' with seed options (allow_destructive = true, "
      "rename_policy = 'require-hint')");
  EXPECT_EQ(a->to_version, "1.0.0");
  EXPECT_TRUE(a->with_seed);
  EXPECT_EQ(a->options.size(), 2u);
  EXPECT_EQ(print("APPLY SCHEMA main WITH SEED"), "apply schema main with seed");
  EXPECT_EQ(parse_as<DiffSchemaStmt>("diff schema main")->name, "main");
  EXPECT_EQ(parse_as<ExplainSchemaStmt>("explain schema main")->name, "main");
  EXPECT_FALSE(parse_as<ExplainSchemaStmt>("explain schema main")->version);
  EXPECT_EQ(parse_as<ExplainSchemaStmt>("explain schema main version '2.0'")->version, "2.0");
  EXPECT_EQ(print("EXPLAIN SCHEMA main VERSION '2.0'"), "explain schema main version '2.0'");
  EXPECT_PARSE_ERROR("apply schema main options (dry_run = true)",
                     "Unsupported apply schema option 'dry_run'");
  EXPECT_PARSE_ERROR("apply schema main options (allow_destructive = 'yes')",
                     "Expected 'true' or 'false'");
  EXPECT_PARSE_ERROR("apply schema main options (rename_policy = 'sometimes')",
                     "Invalid rename_policy");
  EXPECT_PARSE_ERROR("explain select 1", "EXPLAIN is supported only as EXPLAIN SCHEMA");
  // A declaration block needs no ';' before the next statement.
  EXPECT_EQ(Parser::parse("declare schema s2 {} apply schema s2").size(), 2u);
}

}  // namespace
}  // namespace quereus
