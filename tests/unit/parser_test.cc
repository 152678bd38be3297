// Unit tests for the SQL front end: lexer, parser (per statement family), error
// messages and sites, and the canonical printer (FORMAT.md §6.3) with round trips.
#include "parser/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser/ast_printer.h"
#include "parser/lexer.h"

namespace quereus {
namespace {

using namespace ast;

// ------------------------------------------------------------------ helpers

StatementPtr parse_one(const std::string& sql) {
  auto stmts = Parser::parse(sql);
  EXPECT_EQ(stmts.size(), 1u) << sql;
  if (stmts.empty()) return nullptr;
  return std::move(stmts[0]);
}

template <typename T>
std::unique_ptr<T> parse_as(const std::string& sql) {
  StatementPtr s = parse_one(sql);
  return std::unique_ptr<T>(static_cast<T*>(s.release()));
}

const Select& select_of(const StatementPtr& s) {
  return *static_cast<const SelectStmt&>(*s).select;
}

// The canonical name of an expression (FORMAT.md §6.3).
std::string name_of(const std::string& expr_sql) {
  return expr_to_string(*Parser::parse_expression(expr_sql));
}

// The canonical SQL of a statement.
std::string print(const std::string& sql) { return statement_to_string(*parse_one(sql)); }

// Parses and expects an Error; returns it.
Error parse_error(const std::string& sql) {
  try {
    Parser::parse(sql);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a parse error for: " << sql;
  return Error(StatusCode::kOk, "");
}

bool contains_ci(std::string hay, std::string needle) {
  for (auto* s : {&hay, &needle}) {
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return hay.find(needle) != std::string::npos;
}

#define EXPECT_PARSE_ERROR(sql, substring)                                      \
  do {                                                                          \
    Error e_ = parse_error(sql);                                                \
    EXPECT_TRUE(contains_ci(e_.what(), substring)) << "message: " << e_.what(); \
  } while (0)

// ------------------------------------------------------------------ lexer

std::vector<Token> lex(const std::string& sql, LexerOptions o = {}) {
  return Lexer::tokenize(sql, o);
}

TEST(LexerTest, KindsAndText) {
  auto t = lex("SELECT abc, \"Quoted \"\"x\"\"\", `bt`, [br x] FROM t;");
  ASSERT_EQ(t.size(), 12u);
  EXPECT_TRUE(t[0].is(Keyword::kSelect));
  EXPECT_EQ(t[0].text, "SELECT");
  EXPECT_EQ(t[1].kind, TokenKind::kIdentifier);
  EXPECT_EQ(t[1].text, "abc");
  EXPECT_EQ(t[3].kind, TokenKind::kQuotedIdentifier);
  EXPECT_EQ(t[3].text, "Quoted \"x\"");
  EXPECT_EQ(t[5].text, "bt");
  EXPECT_EQ(t[7].text, "br x");
  EXPECT_TRUE(t[8].is(Keyword::kFrom));
  EXPECT_EQ(t[9].kind, TokenKind::kIdentifier);
  EXPECT_EQ(t[10].kind, TokenKind::kSemicolon);
  EXPECT_EQ(t[11].kind, TokenKind::kEof);
  EXPECT_EQ(lex("")[0].kind, TokenKind::kEof);
}

TEST(LexerTest, KeywordsAreCaseInsensitive) {
  EXPECT_TRUE(lex("sElEcT")[0].is(Keyword::kSelect));
  EXPECT_EQ(lookup_keyword("AutoIncrement"), Keyword::kAutoincrement);
  EXPECT_EQ(lookup_keyword("nulls"), Keyword::kNone);  // contextual, not reserved
  EXPECT_EQ(lookup_keyword("column"), Keyword::kNone);
  EXPECT_EQ(keyword_text(Keyword::kXor), "xor");
}

TEST(LexerTest, StringsBlobsNumbers) {
  auto t = lex("'it''s' x'01Ff' X'' 42 3.25 1e3 2.5E-2 0x1F .5 1.");
  EXPECT_EQ(t[0].kind, TokenKind::kString);
  EXPECT_EQ(t[0].text, "it's");
  EXPECT_EQ(t[1].kind, TokenKind::kBlob);
  EXPECT_EQ(t[1].text, std::string("\x01\xff", 2));
  EXPECT_EQ(t[2].kind, TokenKind::kBlob);
  EXPECT_EQ(t[2].text, "");
  EXPECT_EQ(t[3].kind, TokenKind::kInteger);
  EXPECT_EQ(t[4].kind, TokenKind::kFloat);
  EXPECT_EQ(t[4].text, "3.25");
  EXPECT_EQ(t[5].kind, TokenKind::kFloat);
  EXPECT_EQ(t[5].text, "1e3");
  EXPECT_EQ(t[6].text, "2.5E-2");
  EXPECT_EQ(t[7].kind, TokenKind::kInteger);
  EXPECT_EQ(t[7].text, "0x1F");
  EXPECT_EQ(t[8].kind, TokenKind::kFloat);
  EXPECT_EQ(t[8].text, ".5");
  EXPECT_EQ(t[9].kind, TokenKind::kFloat);  // sql.md float_literal: digit+ "." digit*
  EXPECT_EQ(t[9].text, "1.");
  // Before a second dot the number stops at its digits: `1..2` is 1, '.', .2.
  auto u = lex("1..2");
  EXPECT_EQ(u[0].kind, TokenKind::kInteger);
  EXPECT_EQ(u[1].kind, TokenKind::kDot);
  EXPECT_EQ(u[2].kind, TokenKind::kFloat);
  EXPECT_EQ(u[2].text, ".2");
}

TEST(LexerTest, Parameters) {
  auto t = lex("? :name $v :1");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t[i].kind, TokenKind::kParameter);
  EXPECT_EQ(t[0].text, "?");
  EXPECT_EQ(t[1].text, ":name");
  EXPECT_EQ(t[2].text, "$v");
  EXPECT_EQ(t[3].text, ":1");
  // The reference has no ?NNN: '?' then a number.
  auto q = lex("?12");
  EXPECT_EQ(q[0].text, "?");
  EXPECT_EQ(q[1].kind, TokenKind::kInteger);
  LexerOptions sqlite;
  sqlite.numbered_parameters = true;
  sqlite.at_parameters = true;
  auto s = lex("?12 @x", sqlite);
  EXPECT_EQ(s[0].text, "?12");
  EXPECT_EQ(s[1].text, "@x");
}

TEST(LexerTest, Operators) {
  auto t = lex("|| -> ->> == != <> <= >= << >> & | ~ = < > + - * / % ( ) , . ; { }");
  std::vector<TokenKind> want = {
      TokenKind::kConcat,  TokenKind::kArrow,     TokenKind::kArrow2, TokenKind::kEqEq,
      TokenKind::kNe,      TokenKind::kNe,        TokenKind::kLe,     TokenKind::kGe,
      TokenKind::kShl,     TokenKind::kShr,       TokenKind::kAmp,    TokenKind::kPipe,
      TokenKind::kTilde,   TokenKind::kEq,        TokenKind::kLt,     TokenKind::kGt,
      TokenKind::kPlus,    TokenKind::kMinus,     TokenKind::kStar,   TokenKind::kSlash,
      TokenKind::kPercent, TokenKind::kLParen,    TokenKind::kRParen, TokenKind::kComma,
      TokenKind::kDot,     TokenKind::kSemicolon, TokenKind::kLBrace, TokenKind::kRBrace,
      TokenKind::kEof};
  ASSERT_EQ(t.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t[i].kind, want[i]) << i;
}

TEST(LexerTest, CommentsLinesAndColumns) {
  auto t = lex("select -- comment\n  /* block\n /* nested */ */ x\n\t, 'a\nb' y");
  ASSERT_GE(t.size(), 5u);
  EXPECT_EQ(t[0].line, 1);
  EXPECT_EQ(t[0].column, 1);
  EXPECT_EQ(t[1].text, "x");
  EXPECT_EQ(t[1].line, 3);
  EXPECT_EQ(t[1].column, 18);
  EXPECT_EQ(t[2].kind, TokenKind::kComma);
  EXPECT_EQ(t[2].line, 4);
  EXPECT_EQ(t[2].column, 2);
  EXPECT_EQ(t[3].text, "a\nb");
  EXPECT_EQ(t[4].text, "y");
  EXPECT_EQ(t[4].line, 5);
  EXPECT_EQ(t[4].column, 4);
  EXPECT_EQ(t[4].offset, 57u);
  EXPECT_EQ(t[4].length, 1u);
  // Columns count characters: 'é' is two bytes but one column.
  auto u = lex("'é' z");
  EXPECT_EQ(u[1].column, 5);
}

TEST(LexerTest, Errors) {
  auto err = [](const std::string& sql) {
    try {
      Lexer::tokenize(sql);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << sql;
    return Error(StatusCode::kOk, "");
  };
  Error e = err("select 'open");
  EXPECT_EQ(e.code(), StatusCode::kSyntax);
  EXPECT_TRUE(contains_ci(e.raw_message(), "Unterminated string"));
  ASSERT_TRUE(e.site());
  EXPECT_EQ(e.site()->line, 1);
  EXPECT_EQ(e.site()->column, 8);
  EXPECT_TRUE(contains_ci(err("select \"x").raw_message(), "Unterminated"));
  EXPECT_TRUE(contains_ci(err("select /* x").raw_message(), "Unterminated comment"));
  EXPECT_TRUE(contains_ci(err("select x'abc'").raw_message(), "even number"));
  EXPECT_TRUE(contains_ci(err("select x'zz'").raw_message(), "blob"));
  EXPECT_TRUE(contains_ci(err("select 1e+").raw_message(), "exponent"));
  EXPECT_TRUE(contains_ci(err("select @x").raw_message(), "Unexpected character"));
  EXPECT_TRUE(contains_ci(err("select :").raw_message(),
                          "Expected identifier or number after parameter prefix"));
  // A multi-byte character is reported whole, never as a broken byte.
  Error arrow = err("select 1 \xE2\x86\x92 2");
  EXPECT_EQ(arrow.raw_message(), "Unexpected character: \xE2\x86\x92");
  EXPECT_EQ(arrow.site()->column, 10);
  EXPECT_TRUE(contains_ci(err("select !x").raw_message(), "Unexpected character: !"));
}

// ------------------------------------------------------------------ SELECT

TEST(ParserSelect, ResultColumnsAndAliases) {
  auto s =
      parse_one("select distinct *, t.*, a, b as bb, c cc, 1 + 2 as 'str', \"q\".\"x\" from t");
  const Select& sel = select_of(s);
  EXPECT_TRUE(sel.core.distinct);
  ASSERT_EQ(sel.core.columns.size(), 7u);
  EXPECT_EQ(sel.core.columns[0].kind, ResultColumn::Kind::kStar);
  EXPECT_EQ(sel.core.columns[1].kind, ResultColumn::Kind::kTableStar);
  EXPECT_EQ(sel.core.columns[1].table, "t");
  EXPECT_EQ(sel.core.columns[2].alias, "");
  EXPECT_EQ(sel.core.columns[3].alias, "bb");
  EXPECT_EQ(sel.core.columns[4].alias, "cc");
  EXPECT_EQ(sel.core.columns[5].alias, "str");
  auto& q = static_cast<const ColumnRef&>(*sel.core.columns[6].expr);
  EXPECT_EQ(q.table, "q");
  EXPECT_EQ(q.column, "x");
  EXPECT_FALSE(select_of(parse_one("select all 1")).core.distinct);
}

TEST(ParserSelect, FromSources) {
  auto s = parse_one(
      "select * from main.t1 as a join t2 b on a.id = b.id left outer join t3 using (x, y) "
      "right join t4 on 1 full join t5 on 1 cross join generate_series(1, 3) g "
      "inner join (select 1 as v) as sq (w) on 1");
  const TableSource* src = select_of(s).core.from.get();
  // Left-deep: ((((((t1 join t2) left t3) right t4) full t5) cross gs) inner sq)
  std::vector<JoinKind> kinds;
  while (src->kind == TableSource::Kind::kJoin) {
    kinds.push_back(src->join);
    if (src->join == JoinKind::kInner && src->right->kind == TableSource::Kind::kSubquery) {
      EXPECT_EQ(src->right->alias, "sq");
      EXPECT_EQ(src->right->alias_columns, std::vector<std::string>{"w"});
    }
    if (src->join == JoinKind::kLeft) {
      EXPECT_EQ(src->using_columns, (std::vector<std::string>{"x", "y"}));
    }
    if (src->join == JoinKind::kCross) {
      EXPECT_EQ(src->right->kind, TableSource::Kind::kFunction);
      EXPECT_EQ(src->right->function_name, "generate_series");
      EXPECT_EQ(src->right->function_args.size(), 2u);
      EXPECT_EQ(src->right->alias, "g");
      EXPECT_FALSE(src->on);
    }
    src = src->left.get();
  }
  EXPECT_EQ(kinds, (std::vector<JoinKind>{JoinKind::kInner, JoinKind::kCross, JoinKind::kFull,
                                          JoinKind::kRight, JoinKind::kLeft, JoinKind::kInner}));
  EXPECT_EQ(src->kind, TableSource::Kind::kTable);
  EXPECT_EQ(src->table.schema, "main");
  EXPECT_EQ(src->table.name, "t1");
  EXPECT_EQ(src->alias, "a");

  auto lat = parse_one("select * from t join lateral (select 1) x on 1");
  EXPECT_TRUE(select_of(lat).core.from->right->lateral);
}

TEST(ParserSelect, ClausesAndLimits) {
  auto s = parse_one(
      "select g, count(*) from t where a > 1 group by g, h having count(*) > 2 "
      "order by g desc nulls first, h asc, i nulls last limit 5 offset 10");
  const Select& sel = select_of(s);
  EXPECT_TRUE(sel.core.where);
  EXPECT_EQ(sel.core.group_by.size(), 2u);
  EXPECT_TRUE(sel.core.having);
  ASSERT_EQ(sel.order_by.size(), 3u);
  EXPECT_TRUE(sel.order_by[0].desc);
  EXPECT_EQ(sel.order_by[0].nulls, OrderingTerm::Nulls::kFirst);
  EXPECT_FALSE(sel.order_by[1].desc);
  EXPECT_EQ(sel.order_by[2].nulls, OrderingTerm::Nulls::kLast);
  EXPECT_EQ(static_cast<const Literal&>(*sel.limit).text, "5");
  EXPECT_EQ(static_cast<const Literal&>(*sel.offset).text, "10");
  // LIMIT m, n is LIMIT n OFFSET m.
  auto s2 = parse_one("select 1 limit 3, 4");
  EXPECT_EQ(static_cast<const Literal&>(*select_of(s2).limit).text, "4");
  EXPECT_EQ(static_cast<const Literal&>(*select_of(s2).offset).text, "3");
}

TEST(ParserSelect, CompoundsAndValues) {
  auto s = parse_one(
      "select 1 union select 2 union all select 3 intersect select 4 except "
      "values (5) diff select 6 order by 1");
  const Select& sel = select_of(s);
  ASSERT_EQ(sel.compounds.size(), 5u);
  EXPECT_EQ(sel.compounds[0].op, CompoundOp::kUnion);
  EXPECT_EQ(sel.compounds[1].op, CompoundOp::kUnionAll);
  EXPECT_EQ(sel.compounds[2].op, CompoundOp::kIntersect);
  EXPECT_EQ(sel.compounds[3].op, CompoundOp::kExcept);
  EXPECT_EQ(sel.compounds[3].core.values.size(), 1u);
  EXPECT_EQ(sel.compounds[4].op, CompoundOp::kDiff);
  EXPECT_EQ(sel.order_by.size(), 1u);

  auto v = parse_one("values (1, 'a'), (2, 'b') order by 1 limit 1");
  EXPECT_EQ(select_of(v).core.values.size(), 2u);
  EXPECT_EQ(select_of(v).core.values[1].size(), 2u);
  EXPECT_TRUE(select_of(v).limit);

  // Parenthesized legs: a redundant one collapses, a compound one nests.
  auto p = parse_one("(select n from a union select m from b) union (select r from c)");
  const Select& ps = select_of(p);
  ASSERT_TRUE(ps.core.nested);
  EXPECT_EQ(ps.core.nested->compounds.size(), 1u);
  ASSERT_EQ(ps.compounds.size(), 1u);
  EXPECT_FALSE(ps.compounds[0].core.nested);
  EXPECT_EQ(ps.compounds[0].core.columns.size(), 1u);
  auto solo = parse_one("((select 1 as x))");
  EXPECT_FALSE(select_of(solo).core.nested);
  EXPECT_EQ(select_of(solo).core.columns[0].alias, "x");
  auto leg = parse_one("select 1 union (select 2 order by 1 limit 1)");
  ASSERT_TRUE(select_of(leg).compounds[0].core.nested);
  EXPECT_TRUE(select_of(leg).compounds[0].core.nested->limit);
}

TEST(ParserSelect, WithClause) {
  auto s = parse_one(
      "with recursive c(n, m) as (select 1, 2 union all select n + 1, m from c where n < 5), "
      "d as materialized (select 1), e as not materialized (select 2) select * from c");
  const Select& sel = select_of(s);
  ASSERT_TRUE(sel.with);
  EXPECT_TRUE(sel.with->recursive);
  ASSERT_EQ(sel.with->ctes.size(), 3u);
  EXPECT_EQ(sel.with->ctes[0].name, "c");
  EXPECT_EQ(sel.with->ctes[0].columns, (std::vector<std::string>{"n", "m"}));
  EXPECT_EQ(sel.with->ctes[0].select->compounds.size(), 1u);
  EXPECT_EQ(sel.with->ctes[1].materialization, CommonTableExpr::Materialization::kMaterialized);
  EXPECT_EQ(sel.with->ctes[2].materialization, CommonTableExpr::Materialization::kNotMaterialized);
  auto opt = parse_one("with c as (select 1) option (maxrecursion 10) select * from c");
  EXPECT_EQ(select_of(opt).with->max_recursion.value_or(-1), 10);
}

TEST(ParserSelect, DmlAsRelation) {
  auto s = parse_one("select * from (insert into t values (1) returning v) as r");
  const TableSource& src = *select_of(s).core.from;
  ASSERT_TRUE(src.subquery->dml);
  EXPECT_EQ(src.subquery->dml->kind, StmtKind::kInsert);
  EXPECT_PARSE_ERROR("select * from (insert into t values (1)) as s",
                     "must have a RETURNING clause");
  EXPECT_PARSE_ERROR("select 1 + (delete from t)", "must have a RETURNING clause");
  auto c = parse_one("with x as (delete from t returning id) select * from x");
  EXPECT_EQ(select_of(c).with->ctes[0].select->dml->kind, StmtKind::kDelete);
}

// ------------------------------------------------------------------ expressions

TEST(ParserExpr, Precedence) {
  // a or b and c  →  a or (b and c)
  auto e = Parser::parse_expression("a or b and c");
  ASSERT_EQ(e->kind, ExprKind::kBinary);
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kOr);
  EXPECT_EQ(static_cast<BinaryExpr&>(*static_cast<BinaryExpr&>(*e).right).op, BinaryOp::kAnd);
  // not a = b  →  not (a = b)
  e = Parser::parse_expression("not a = b");
  ASSERT_EQ(e->kind, ExprKind::kUnary);
  EXPECT_EQ(static_cast<UnaryExpr&>(*e).operand->kind, ExprKind::kBinary);
  // a = b < c  →  a = (b < c)
  e = Parser::parse_expression("a = b < c");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kEq);
  // 1 + 2 * 3 || 'x'  →  1 + (2 * (3 || 'x'))   (|| binds tighter than * in Quereus)
  e = Parser::parse_expression("1 + 2 * 3 || 'x'");
  auto& add = static_cast<BinaryExpr&>(*e);
  EXPECT_EQ(add.op, BinaryOp::kAdd);
  auto& mul = static_cast<BinaryExpr&>(*add.right);
  EXPECT_EQ(mul.op, BinaryOp::kMul);
  EXPECT_EQ(static_cast<BinaryExpr&>(*mul.right).op, BinaryOp::kConcat);
  // -a || b  →  -(a || b); -a * b  →  (-a) * b
  e = Parser::parse_expression("-a || b");
  EXPECT_EQ(e->kind, ExprKind::kUnary);
  e = Parser::parse_expression("-a * b");
  EXPECT_EQ(e->kind, ExprKind::kBinary);
  // a || b collate nocase  →  a || (b collate nocase)
  e = Parser::parse_expression("a || b collate nocase");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).right->kind, ExprKind::kCollate);
  // x = 1 is null  →  (x = 1) is null
  e = Parser::parse_expression("x = 1 is null");
  EXPECT_EQ(e->kind, ExprKind::kIsNull);
  // a + 1 between 2 and 3 and c
  e = Parser::parse_expression("a + 1 between 2 and 3 and c");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kAnd);
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).left->kind, ExprKind::kBetween);
  // a or b xor c is left-associative at one level
  e = Parser::parse_expression("a or b xor c");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kXor);
}

TEST(ParserExpr, Predicates) {
  auto e = Parser::parse_expression("x not between 1 and 2");
  ASSERT_EQ(e->kind, ExprKind::kBetween);
  EXPECT_TRUE(static_cast<BetweenExpr&>(*e).negated);
  e = Parser::parse_expression("x not in (1, 2, 3)");
  ASSERT_EQ(e->kind, ExprKind::kIn);
  EXPECT_TRUE(static_cast<InExpr&>(*e).negated);
  EXPECT_EQ(static_cast<InExpr&>(*e).list.size(), 3u);
  e = Parser::parse_expression("x in (select y from t)");
  EXPECT_TRUE(static_cast<InExpr&>(*e).subquery);
  e = Parser::parse_expression("x in ()");
  EXPECT_TRUE(static_cast<InExpr&>(*e).list.empty());
  e = Parser::parse_expression("x not like 'a%' escape '!'");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kNotLike);
  EXPECT_TRUE(static_cast<BinaryExpr&>(*e).escape);
  e = Parser::parse_expression("x glob 'a*'");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kGlob);
  e = Parser::parse_expression("x not glob 'a*'");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kNotGlob);
  e = Parser::parse_expression("x regexp 'a' or y match 'b'");
  EXPECT_EQ(static_cast<BinaryExpr&>(*static_cast<BinaryExpr&>(*e).left).op, BinaryOp::kRegexp);
  e = Parser::parse_expression("x not regexp 'a'");
  ASSERT_EQ(e->kind, ExprKind::kUnary);
  EXPECT_EQ(expr_to_string(*e), "not (x regexp 'a')");
  e = Parser::parse_expression("x is not null");
  EXPECT_TRUE(static_cast<IsNullExpr&>(*e).negated);
  e = Parser::parse_expression("x isnull");
  EXPECT_FALSE(static_cast<IsNullExpr&>(*e).negated);
  e = Parser::parse_expression("x notnull");
  EXPECT_TRUE(static_cast<IsNullExpr&>(*e).negated);
  e = Parser::parse_expression("x is true");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kIs);
  EXPECT_EQ(static_cast<Literal&>(*static_cast<BinaryExpr&>(*e).right).literal_kind,
            LiteralKind::kTrue);
  e = Parser::parse_expression("x is not false");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kIsNot);
  e = Parser::parse_expression("x is y");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kIs);
  e = Parser::parse_expression("x is distinct from y");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kIsNot);
  e = Parser::parse_expression("not exists (select 1)");
  ASSERT_EQ(e->kind, ExprKind::kExists);
  EXPECT_TRUE(static_cast<ExistsExpr&>(*e).negated);
  e = Parser::parse_expression("exists (select 1)");
  EXPECT_FALSE(static_cast<ExistsExpr&>(*e).negated);
  e = Parser::parse_expression("a & b | c << 1 >> 2");
  EXPECT_EQ(static_cast<BinaryExpr&>(*e).op, BinaryOp::kShr);
}

TEST(ParserExpr, PrimaryForms) {
  auto e = Parser::parse_expression("case x when 1 then 'a' when 2 then 'b' else 'c' end");
  auto& c = static_cast<CaseExpr&>(*e);
  EXPECT_TRUE(c.base);
  EXPECT_EQ(c.whens.size(), 2u);
  EXPECT_TRUE(c.else_expr);
  e = Parser::parse_expression("cast(a as decimal(10,2))");
  EXPECT_EQ(static_cast<CastExpr&>(*e).type_name, "decimal(10, 2)");
  e = Parser::parse_expression("count(*)");
  EXPECT_TRUE(static_cast<FunctionCall&>(*e).star);
  e = Parser::parse_expression("count(distinct a)");
  EXPECT_TRUE(static_cast<FunctionCall&>(*e).distinct);
  e = Parser::parse_expression("replace('a', 'b', 'c')");
  EXPECT_EQ(static_cast<FunctionCall&>(*e).name, "replace");
  e = Parser::parse_expression("(replace('a', 'b', 'c'))");
  EXPECT_EQ(e->kind, ExprKind::kFunction);
  e = Parser::parse_expression("like('a%', x)");
  EXPECT_EQ(static_cast<FunctionCall&>(*e).name, "like");
  e = Parser::parse_expression("s.t.c");
  auto& col = static_cast<ColumnRef&>(*e);
  EXPECT_EQ(col.schema, "s");
  EXPECT_EQ(col.table, "t");
  EXPECT_EQ(col.column, "c");
  e = Parser::parse_expression("(select 1)");
  EXPECT_EQ(e->kind, ExprKind::kSubquery);
  e = Parser::parse_expression("x collate natural");  // any word names a collation
  EXPECT_EQ(static_cast<CollateExpr&>(*e).collation, "natural");
  EXPECT_EQ(expr_to_string(*e), "x collate \"natural\"");
  e = Parser::parse_expression("key + 1");  // contextual keyword as a column
  EXPECT_EQ(static_cast<ColumnRef&>(*static_cast<BinaryExpr&>(*e).left).column, "key");
}

TEST(ParserExpr, Literals) {
  auto lit = [](const std::string& sql) {
    auto e = Parser::parse_expression(sql);
    EXPECT_EQ(e->kind, ExprKind::kLiteral) << sql;
    return *static_cast<Literal*>(e.release());
  };
  EXPECT_EQ(lit("42").literal_kind, LiteralKind::kInteger);
  EXPECT_EQ(lit("1.0").literal_kind, LiteralKind::kReal);
  EXPECT_EQ(lit("1.0").text, "1.0");
  EXPECT_EQ(lit("9223372036854775807").literal_kind, LiteralKind::kInteger);
  EXPECT_EQ(lit("9223372036854775808").literal_kind, LiteralKind::kReal);
  EXPECT_EQ(lit("9223372036854775808").text, "9223372036854775808");
  EXPECT_EQ(lit("0x7FFFFFFFFFFFFFFF").literal_kind, LiteralKind::kInteger);
  EXPECT_EQ(lit("'a''b'").text, "a'b");
  EXPECT_EQ(lit("x'00ff'").literal_kind, LiteralKind::kBlob);
  EXPECT_EQ(lit("NULL").literal_kind, LiteralKind::kNull);
  EXPECT_EQ(lit("TRUE").literal_kind, LiteralKind::kTrue);
  EXPECT_EQ(lit("false").literal_kind, LiteralKind::kFalse);
}

TEST(ParserExpr, JsonArrows) {
  EXPECT_EQ(name_of("a -> 'b'"), "json_extract(a, '$.b')");
  EXPECT_EQ(name_of("a -> '$.b'"), "json_extract(a, '$.b')");
  EXPECT_EQ(name_of("a -> 0"), "json_extract(a, '$[0]')");
  EXPECT_EQ(name_of("a ->> 'b'"), "cast(json_extract(a, '$.b') as text)");
  EXPECT_EQ(name_of("a -> 'b' -> 'c'"), "json_extract(json_extract(a, '$.b'), '$.c')");
}

TEST(ParserExpr, Parameters) {
  auto s = parse_one("select ?, :a, ?, $b, (select ?) from t where x = ?");
  const Select& sel = select_of(s);
  auto idx = [&](size_t i) { return static_cast<const Parameter&>(*sel.core.columns[i].expr); };
  EXPECT_EQ(idx(0).index, 1);
  EXPECT_EQ(idx(1).index, 0);
  EXPECT_EQ(idx(1).name, "a");
  EXPECT_EQ(idx(1).spelling, ":a");
  EXPECT_EQ(idx(2).index, 2);
  EXPECT_EQ(idx(3).name, "b");
  EXPECT_EQ(
      static_cast<const Parameter&>(*static_cast<const BinaryExpr&>(*sel.core.where).right).index,
      4);
  // Numbering restarts with each statement.
  auto two = Parser::parse("select ?; select ?");
  auto& p2 = static_cast<const Parameter&>(*select_of(two[1]).core.columns[0].expr);
  EXPECT_EQ(p2.index, 1);
}

TEST(ParserExpr, Windows) {
  auto e = Parser::parse_expression(
      "sum(x) over (partition by a, b order by c desc rows between unbounded preceding and 1 "
      "following exclude current row)");
  auto& f = static_cast<FunctionCall&>(*e);
  ASSERT_TRUE(f.over);
  EXPECT_EQ(f.over->partition_by.size(), 2u);
  EXPECT_EQ(f.over->order_by.size(), 1u);
  ASSERT_TRUE(f.over->frame);
  EXPECT_EQ(f.over->frame->unit, WindowFrame::Unit::kRows);
  EXPECT_TRUE(f.over->frame->has_end);
  EXPECT_EQ(f.over->frame->start.kind, FrameBound::Kind::kUnboundedPreceding);
  EXPECT_EQ(f.over->frame->end.kind, FrameBound::Kind::kFollowing);
  EXPECT_EQ(f.over->frame->exclude, WindowFrame::Exclude::kCurrentRow);
  e = Parser::parse_expression("row_number() over ()");
  EXPECT_TRUE(static_cast<FunctionCall&>(*e).over);
  EXPECT_EQ(name_of("rank() over (order by x range 2 preceding)"),
            "rank() over (order by x range 2 preceding)");
}

// ------------------------------------------------------------------ DML

TEST(ParserDml, Insert) {
  auto i = parse_as<InsertStmt>(
      "insert or ignore into main.t (a, b) values (1, 2), (3, 4) returning a, b as bb");
  EXPECT_EQ(i->or_action, ConflictClause::kIgnore);
  EXPECT_EQ(i->table.schema, "main");
  EXPECT_EQ(i->columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(i->source->core.values.size(), 2u);
  EXPECT_EQ(i->returning.size(), 2u);
  auto r = parse_as<InsertStmt>("replace into t select * from u");
  EXPECT_TRUE(r->replace);
  EXPECT_EQ(r->source->core.columns.size(), 1u);
  auto w = parse_as<InsertStmt>("with x as (select 1) insert into t select * from x");
  EXPECT_TRUE(w->with);
  auto nested = parse_as<InsertStmt>("insert into t delete from u returning *");
  EXPECT_TRUE(nested->source->dml);
  EXPECT_PARSE_ERROR("insert into t default values", "Expected VALUES, SELECT, or DML");
  EXPECT_PARSE_ERROR("insert into t as old values (1)", "Expected VALUES, SELECT, or DML");
  EXPECT_PARSE_ERROR("INSERT INTO;", "Expected table name");
}

TEST(ParserDml, UpdateAndDelete) {
  auto u = parse_as<UpdateStmt>("update t set a = 1, b = b + 1 where id = 2 returning *");
  EXPECT_EQ(u->table.name, "t");
  ASSERT_EQ(u->assignments.size(), 2u);
  EXPECT_EQ(u->assignments[1].columns, std::vector<std::string>{"b"});
  EXPECT_TRUE(u->where);
  EXPECT_EQ(u->returning.size(), 1u);
  EXPECT_PARSE_ERROR("update or ignore t set a = 1", "Expected table name");
  EXPECT_PARSE_ERROR("update t set (a, b) = (select 1, 2)", "Expected column name");
  // UPDATE … FROM parses to its correlated form: SET values and WHERE read the FROM.
  auto uf = parse_as<UpdateStmt>("update t set a = u.b from u where u.k = t.k");
  ASSERT_EQ(uf->assignments.size(), 1u);
  EXPECT_EQ(uf->assignments[0].value->kind, ExprKind::kSubquery);
  ASSERT_TRUE(uf->where);
  EXPECT_EQ(uf->where->kind, ExprKind::kExists);
  EXPECT_PARSE_ERROR("UPDATE;", "Expected table name");
  auto d = parse_as<DeleteStmt>("delete from t where x returning old.x");
  EXPECT_EQ(d->table.name, "t");
  EXPECT_TRUE(d->where);
  auto d2 = parse_as<DeleteStmt>("delete t");
  EXPECT_EQ(d2->table.name, "t");
  EXPECT_PARSE_ERROR("DELETE;", "Expected table name");
}

// ------------------------------------------------------------------ DDL

TEST(ParserDdl, CreateTable) {
  auto c = parse_as<CreateTableStmt>(
      "create table if not exists s.t ("
      " id integer primary key desc on conflict replace,"
      " name varchar(10) not null collate NOCASE default 'x',"
      " amount decimal(10, 2) null default -1.5 check (amount > 0),"
      " g int generated always as (id * 2) stored,"
      " h as (id + 1),"
      " parent integer references p(id) on delete cascade on update set null,"
      " constraint ck check on insert, update (name <> ''),"
      " primary key (id desc, name),"
      " unique (name),"
      " foreign key (parent) references p (id) on delete no action not deferrable,"
      ") using memory (a = 1, 'pos', k = v)");
  EXPECT_TRUE(c->if_not_exists);
  EXPECT_EQ(c->table.schema, "s");
  ASSERT_EQ(c->columns.size(), 6u);
  EXPECT_EQ(c->columns[0].type_name, "integer");
  auto& pk = c->columns[0].constraints[0];
  EXPECT_EQ(pk.kind, ColumnConstraint::Kind::kPrimaryKey);
  EXPECT_TRUE(pk.desc);
  EXPECT_EQ(pk.on_conflict, ConflictClause::kReplace);
  EXPECT_EQ(c->columns[1].type_name, "varchar(10)");
  EXPECT_EQ(c->columns[1].constraints[1].collation, "NOCASE");
  EXPECT_EQ(c->columns[1].constraints[2].kind, ColumnConstraint::Kind::kDefault);
  EXPECT_EQ(c->columns[2].type_name, "decimal(10, 2)");
  EXPECT_EQ(c->columns[2].constraints[0].kind, ColumnConstraint::Kind::kNull);
  EXPECT_EQ(c->columns[2].constraints[1].expr->kind, ExprKind::kUnary);
  EXPECT_EQ(c->columns[2].constraints[2].kind, ColumnConstraint::Kind::kCheck);
  EXPECT_TRUE(c->columns[3].constraints[0].generated_stored);
  EXPECT_EQ(c->columns[4].constraints[0].kind, ColumnConstraint::Kind::kGenerated);
  EXPECT_FALSE(c->columns[4].constraints[0].generated_stored);
  auto& fk = c->columns[5].constraints[0];
  EXPECT_EQ(fk.kind, ColumnConstraint::Kind::kForeignKey);
  EXPECT_EQ(fk.fk_table.name, "p");
  EXPECT_EQ(fk.fk_columns, std::vector<std::string>{"id"});
  EXPECT_EQ(fk.fk_on_delete, FkAction::kCascade);
  EXPECT_EQ(fk.fk_on_update, FkAction::kSetNull);
  ASSERT_EQ(c->constraints.size(), 4u);
  EXPECT_EQ(c->constraints[0].name, "ck");
  EXPECT_EQ(c->constraints[0].check_on, (std::vector<RowOp>{RowOp::kInsert, RowOp::kUpdate}));
  EXPECT_EQ(c->constraints[1].columns.size(), 2u);
  EXPECT_TRUE(c->constraints[1].columns[0].desc);
  EXPECT_EQ(c->constraints[3].fk_on_delete, FkAction::kNoAction);
  EXPECT_EQ(c->constraints[3].fk_deferral.deferrable, FkDeferral::Deferrable::kNotDeferrable);
  EXPECT_EQ(c->module_name, "memory");
  ASSERT_EQ(c->module_args.size(), 3u);
  EXPECT_EQ(c->module_args[0].key, "a");
  EXPECT_EQ(c->module_args[1].key, "");
  EXPECT_EQ(static_cast<Literal&>(*c->module_args[2].value).text, "v");

  auto single = parse_as<CreateTableStmt>("create temp table t (k integer, primary key ())");
  EXPECT_TRUE(single->temporary);
  EXPECT_TRUE(single->constraints[0].columns.empty());
  // DEFAULT takes an expression but stops before NOT NULL.
  auto d = parse_as<CreateTableStmt>("create table t (a integer default 0 not null)");
  EXPECT_EQ(d->columns[0].constraints.size(), 2u);

  EXPECT_PARSE_ERROR("CREATE TABLE t_parse_empty ()", "Expected column");
  EXPECT_PARSE_ERROR("create table t (a integer b integer)", "Expected ',' between table elements");
  EXPECT_PARSE_ERROR("create table t (a integer primary key autoincrement)", "AUTOINCREMENT");
  EXPECT_PARSE_ERROR("create table t as select 1", "CREATE TABLE AS SELECT is not supported");
  EXPECT_PARSE_ERROR("CREATE;", "Expected TABLE,");
}

TEST(ParserDdl, IndexViewDrop) {
  auto i = parse_as<CreateIndexStmt>(
      "create unique index if not exists ix on t (a collate nocase desc, b asc) where a > 0");
  EXPECT_TRUE(i->unique);
  EXPECT_TRUE(i->if_not_exists);
  EXPECT_EQ(i->index.name, "ix");
  EXPECT_EQ(i->table.name, "t");
  ASSERT_EQ(i->columns.size(), 2u);
  EXPECT_EQ(i->columns[0].collation, "nocase");
  EXPECT_TRUE(i->columns[0].desc);
  EXPECT_TRUE(i->where);
  EXPECT_PARSE_ERROR("create index ix on t (lower(name))",
                     "Indices on expressions are not supported");

  auto v = parse_as<CreateViewStmt>("create view if not exists v (x, y) as select 1, 2");
  EXPECT_TRUE(v->if_not_exists);
  EXPECT_EQ(v->columns.size(), 2u);
  EXPECT_EQ(v->select->core.columns.size(), 2u);

  EXPECT_EQ(parse_one("drop table if exists s.t")->kind, StmtKind::kDrop);
  EXPECT_TRUE(parse_as<DropStmt>("drop table if exists s.t")->if_exists);
  EXPECT_EQ(parse_as<DropStmt>("drop index ix")->name.name, "ix");
  EXPECT_EQ(parse_as<DropStmt>("drop index ix")->object, ObjectKind::kIndex);
  EXPECT_TRUE(parse_as<DropStmt>("drop view if exists v")->if_exists);
  EXPECT_EQ(parse_as<DropStmt>("drop materialized view mv")->object, ObjectKind::kMaterializedView);
  EXPECT_EQ(parse_as<DropStmt>("drop assertion if exists a1")->object, ObjectKind::kAssertion);
  EXPECT_PARSE_ERROR("DROP TRIGGER some_trigger",
                     "Expected TABLE, VIEW, MATERIALIZED VIEW, INDEX, or ASSERTION after DROP");
}

TEST(ParserDdl, TransactionsPragmaAnalyze) {
  EXPECT_EQ(parse_as<BeginStmt>("begin")->mode, "");
  EXPECT_EQ(parse_as<BeginStmt>("begin deferred transaction")->mode, "deferred");
  EXPECT_EQ(parse_as<BeginStmt>("BEGIN EXCLUSIVE")->mode, "exclusive");
  EXPECT_EQ(parse_one("commit transaction")->kind, StmtKind::kCommit);
  EXPECT_EQ(parse_one("end")->kind, StmtKind::kCommit);
  EXPECT_EQ(parse_as<RollbackStmt>("rollback")->savepoint, "");
  EXPECT_EQ(parse_as<RollbackStmt>("rollback transaction to savepoint sp")->savepoint, "sp");
  EXPECT_EQ(parse_as<RollbackStmt>("rollback to sp")->savepoint, "sp");
  EXPECT_EQ(parse_as<SavepointStmt>("savepoint sp1")->name, "sp1");
  EXPECT_EQ(parse_as<ReleaseStmt>("release savepoint sp1")->name, "sp1");
  EXPECT_EQ(parse_as<ReleaseStmt>("release sp1")->name, "sp1");
  auto p = parse_as<PragmaStmt>("pragma main.foreign_keys = on");
  EXPECT_EQ(p->name.schema, "main");
  EXPECT_EQ(p->name.name, "foreign_keys");
  EXPECT_EQ(static_cast<Literal&>(*p->value).text, "on");
  EXPECT_FALSE(parse_as<PragmaStmt>("pragma x")->value);
  EXPECT_EQ(static_cast<UnaryExpr&>(*parse_as<PragmaStmt>("pragma x(-5)")->value).op,
            UnaryOp::kNegate);
  auto a = parse_as<AnalyzeStmt>("analyze main.*");
  EXPECT_TRUE(a->all_in_schema);
  EXPECT_EQ(a->schema, "main");
  EXPECT_EQ(parse_as<AnalyzeStmt>("analyze t")->table, "t");
  EXPECT_EQ(parse_as<AnalyzeStmt>("analyze")->table, "");
}

// ------------------------------------------------------------------ batches, spans, sites

TEST(ParserBatch, SpansSitesAndEmptyStatements) {
  std::string sql =
      " ;; select 1 ;\n\n  insert into t values (1);;\nwith c as (select 1) select * from c";
  auto stmts = Parser::parse(sql);
  ASSERT_EQ(stmts.size(), 3u);
  EXPECT_EQ(sql.substr(stmts[0]->text_begin, stmts[0]->text_end - stmts[0]->text_begin),
            "select 1");
  EXPECT_EQ(sql.substr(stmts[1]->text_begin, stmts[1]->text_end - stmts[1]->text_begin),
            "insert into t values (1)");
  EXPECT_EQ(sql.substr(stmts[2]->text_begin), "with c as (select 1) select * from c");
  EXPECT_EQ(stmts[1]->site.line, 3);
  EXPECT_EQ(stmts[1]->site.column, 3);
  EXPECT_EQ(stmts[2]->site.line, 4);
  EXPECT_EQ(stmts[2]->site.column, 1);
  // Expression sites are their first token.
  const Select& sel = select_of(stmts[0]);
  EXPECT_EQ(sel.core.columns[0].expr->site.column, 12);
  EXPECT_TRUE(Parser::parse("").empty());
  EXPECT_TRUE(Parser::parse(" ; -- only a comment\n ;").empty());
}

// ------------------------------------------------------------------ errors

TEST(ParserErrors, CorpusMessages) {
  // 90.1-parse-errors.sqllogic
  EXPECT_PARSE_ERROR("SELECT abs(1", "Unterminated '('");
  EXPECT_PARSE_ERROR("WITH AS (SELECT 1) SELECT 1", "Expected CTE name");
  EXPECT_PARSE_ERROR("WITH c SELECT * FROM c", "Expected 'AS' after CTE name");
  EXPECT_PARSE_ERROR("WITH c (1) AS (SELECT 1) SELECT * FROM c",
                     "Expected column name in CTE definition");
  EXPECT_PARSE_ERROR("WITH c AS SELECT 1", "Expected '(' before CTE query");
  EXPECT_PARSE_ERROR("SELECT 'unterminated", "Unterminated string");
  EXPECT_PARSE_ERROR("SELECT CASE WHEN 1 THEN 2", "Expected 'END'");
  EXPECT_PARSE_ERROR("SELECT * FROM t WHERE", "Expected expression");
  EXPECT_PARSE_ERROR("SELECT 1 WHERE 1 = @x", "Unexpected character");
  parse_error("SELECT 1 WHERE 1 = ?1");
  EXPECT_PARSE_ERROR("SELECT :", "Expected identifier or number after parameter prefix");
  // Other corpus expectations
  EXPECT_PARSE_ERROR("select * from (p1 join p2 on p1.id = p2.p1_id) join p3 on 1",
                     "Expected table name");
  EXPECT_PARSE_ERROR("select id from t where (a, b) in ((1, 10))", "Expected ')'");
  EXPECT_PARSE_ERROR("select count(*) as cnt from cj_a, cj_b", "multiple FROM sources");
  EXPECT_PARSE_ERROR("select * from uj_l natural join uj_r", "NATURAL");
  EXPECT_PARSE_ERROR("select * from uj_l natural left join uj_r", "NATURAL");
  EXPECT_PARSE_ERROR("select count(*) filter (where val > 15) as c from af", "filter");
  EXPECT_PARSE_ERROR("select row_number() over w as rn from nw window w as (order by id)",
                     "Window name references are not yet supported");
}

TEST(ParserErrors, MessagesNameExpectedAndFoundWithSite) {
  Error e = parse_error("select (1 + 2\n from t");
  EXPECT_EQ(e.code(), StatusCode::kSyntax);
  EXPECT_EQ(e.raw_message(),
            "Expected ')' after expression but found 'from' (unterminated '(' opened at line 1, "
            "column 8)");
  ASSERT_TRUE(e.site());
  EXPECT_EQ(e.site()->line, 2);
  EXPECT_EQ(e.site()->column, 2);
  EXPECT_TRUE(contains_ci(e.what(), "(at line 2, column 2)"));

  Error e2 = parse_error("select 1 from");
  EXPECT_EQ(e2.raw_message(), "Expected table name but found end of input");
  Error e3 = parse_error("frobnicate the table");
  EXPECT_TRUE(contains_ci(e3.raw_message(), "Expected statement type"));
  EXPECT_TRUE(contains_ci(e3.raw_message(), "found 'frobnicate'"));
  Error e4 = parse_error("select 1 2");
  EXPECT_TRUE(contains_ci(e4.raw_message(), "Expected ';' between statements but found '2'"));
  Error e5 = parse_error("select * from t join u");
  EXPECT_TRUE(contains_ci(e5.raw_message(), "Expected 'ON' or 'USING' after JOIN"));
  // Deliberately rejected features are UNSUPPORTED, still with a site.
  Error e6 = parse_error("select 1 from a, b");
  EXPECT_EQ(e6.code(), StatusCode::kUnsupported);
  EXPECT_EQ(e6.site()->column, 16);
}

// ------------------------------------------------------------------ printer

TEST(PrinterTest, FormatExamples) {
  EXPECT_EQ(name_of("count(*)"), "count(*)");
  EXPECT_EQ(name_of("COUNT()"), "count(*)");
  EXPECT_EQ(name_of("(a + b)"), "a + b");
  EXPECT_EQ(name_of("t == 'world'"), "t == 'world'");
  EXPECT_EQ(name_of("b <> X'01FF'"), "b != x'01ff'");
  EXPECT_EQ(name_of("CAST(i AS TEXT)"), "cast(i as text)");
  EXPECT_EQ(name_of("CASE WHEN n > 0 THEN 'pos' WHEN n < 0 THEN 'neg' ELSE 'zero' END"),
            "case when n > 0 then 'pos' when n < 0 then 'neg' else 'zero' end");
  EXPECT_EQ(name_of("(SELECT MAX(val) FROM inner_t)"), "(select max(val) from inner_t)");
  EXPECT_EQ(name_of("NOT NOT 1"), "not not 1");
  EXPECT_EQ(name_of("-(a + b)"), "-(a + b)");
  EXPECT_EQ(name_of("isisodate(NULL)"), "isisodate(null)");
  EXPECT_EQ(name_of("LOWER('Quereus')"), "lower('Quereus')");
  EXPECT_EQ(name_of("i / 2.0"), "i / 2.0");
  EXPECT_EQ(name_of("1e3"), "1e3");
  EXPECT_EQ(name_of("NOT (n = 0)"), "not (n = 0)");
  EXPECT_EQ(name_of("i > 1 XOR n IS NULL"), "i > 1 xor n is null");
  EXPECT_EQ(name_of("- -1"), "--1");  // the reference's name, though it is not re-parseable
  EXPECT_EQ(name_of("like('abc%', 'abcde')"), "like('abc%', 'abcde')");
  EXPECT_EQ(name_of("t.a + 1"), "t.a + 1");
  EXPECT_EQ(name_of("x collate NOCASE"), "x collate nocase");
  EXPECT_EQ(name_of("x between 1 and 2"), "x between 1 and 2");
  EXPECT_EQ(name_of("x not between 1 and 2"), "x not between 1 and 2");
  EXPECT_EQ(name_of("x in (1,2)"), "x in (1, 2)");
  EXPECT_EQ(name_of("x not in (1,2)"), "not x in (1, 2)");
  EXPECT_EQ(name_of("x not like 'a%'"), "not (x like 'a%')");
  EXPECT_EQ(name_of("exists (select 1)"), "exists (select 1)");
  EXPECT_EQ(name_of("x is true"), "x is true");
  EXPECT_EQ(name_of("x is not false"), "x is not false");
  EXPECT_EQ(name_of("(a and b) is null"), "(a and b) is null");
  EXPECT_EQ(name_of("? + :n + $m"), "? + :n + $m");
  EXPECT_EQ(name_of("count(DISTINCT x)"), "count(distinct x)");
  EXPECT_EQ(name_of("\"select\" + \"My Col\" + plain_1"), "\"select\" + \"My Col\" + plain_1");
  EXPECT_EQ(name_of("'it''s'"), "'it''s'");
  EXPECT_EQ(name_of("null"), "null");
  EXPECT_EQ(name_of("TRUE"), "true");
}

TEST(PrinterTest, Parentheses) {
  EXPECT_EQ(name_of("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(name_of("a + (b * c)"), "a + b * c");
  EXPECT_EQ(name_of("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(name_of("(a - b) - c"), "a - b - c");
  EXPECT_EQ(name_of("a + (b + c)"), "a + b + c");
  EXPECT_EQ(name_of("(a or b) and c"), "(a or b) and c");
  EXPECT_EQ(name_of("a = (b = c)"), "a = (b = c)");
  EXPECT_EQ(name_of("(a || b) || c"), "a || b || c");
  EXPECT_EQ(name_of("not (a and b)"), "not (a and b)");
  // Names follow the reference even where its text would re-parse differently;
  // statement printing parenthesizes correctly.
  EXPECT_EQ(name_of("a * (b / c)"), "a * b / c");
  EXPECT_EQ(print("select a * (b / c)"), "select a * (b / c)");
  EXPECT_EQ(print("select a + (b - c)"), "select a + (b - c)");
  EXPECT_EQ(print("select - -1"), "select -(-1)");
  EXPECT_EQ(print("select (-a) || b"), "select (-a) || b");
  EXPECT_EQ(print("select -a || b"), "select -(a || b)");
  EXPECT_EQ(print("select (a = 1) between 0 and 1"), "select (a = 1) between 0 and 1");
  EXPECT_EQ(print("select (a || b) collate nocase"), "select (a || b) collate nocase");
  EXPECT_EQ(print("select (not a) = b"), "select (not a) = b");
}

TEST(PrinterTest, Statements) {
  EXPECT_EQ(
      print("SELECT DISTINCT a AS \"x y\", b c FROM t AS tt LEFT OUTER JOIN u USING (k) "
            "WHERE a > 1 GROUP BY a HAVING COUNT(*) > 1 ORDER BY a DESC NULLS LAST LIMIT 1, 2"),
      "select distinct a as \"x y\", b as c from t as tt left join u using (k) where a > 1 "
      "group by a having count(*) > 1 order by a desc nulls last limit 2 offset 1");
  EXPECT_EQ(print("INSERT INTO t(a,b) VALUES (1,'x') RETURNING *"),
            "insert into t (a, b) values (1, 'x') returning *");
  EXPECT_EQ(print("UPDATE t SET a=1 WHERE b=2"), "update t set a = 1 where b = 2");
  EXPECT_EQ(print("DELETE FROM t WHERE a IN (SELECT b FROM u)"),
            "delete from t where a in (select b from u)");
  EXPECT_EQ(print("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT DEFAULT (1 + 2) NOT NULL)"),
            "create table t (id INTEGER primary key, v TEXT default (1 + 2) not null)");
  EXPECT_EQ(print("WITH c(n) AS (SELECT 1) SELECT n FROM c"),
            "with c (n) as (select 1) select n from c");
  EXPECT_EQ(print("begin"), "begin");
  EXPECT_EQ(print("pragma x = 'y'"), "pragma x = 'y'");
  EXPECT_EQ(quote_identifier("abc"), "abc");
  EXPECT_EQ(quote_identifier("Order"), "\"Order\"");
  EXPECT_EQ(quote_identifier("a b"), "\"a b\"");
  EXPECT_EQ(quote_identifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(quote_identifier("1a"), "\"1a\"");
  EXPECT_EQ(quote_identifier(""), "\"\"");
}

TEST(PrinterTest, RoundTripIsAFixedPoint) {
  const char* statements[] = {
      "select a.b, count(*), sum(distinct x) over (partition by g order by y desc nulls last "
      "rows between 1 preceding and current row) from t as a left outer join u on a.id = u.id "
      "where not a is null and x not in (1,2) and y not like 'a%' escape '\\' group by 1 "
      "having count(*) > 1 order by 1 limit 5, 10",
      "select - -1, not not 1, -(a+b), a || -b, (-a) || b, a*(b/c), a+(b-c), x collate NOCASE, "
      "cast(x as VARCHAR(10)), case when n>0 then 'pos' else 'neg' end, (select max(v) from t), "
      "exists (select 1), not exists(select 1), x is true, x is not false, (a=b) is null, "
      "j -> 'a', j ->> 0, ?, :nm, $v, x'01FF', 'it''s', 1.50, 1e3, 0x1F, 99999999999999999999",
      "select (a or b) and c, a or (b and c), a and (b or c), not (a and b), (a = b) = c, "
      "a = (b = c), a - (b - c), (a - b) - c, a / (b * c), a & (b | c), x is (y = z), "
      "(x is y) = z, a between (b and c) and d, (a < b) < c, a < (b < c), ~(1 + 2), -(-(a))",
      "with recursive c(n) as (select 1 union all select n+1 from c where n < 5) select * from c",
      "(select n from cl union select p from cr) union select r from cr",
      "select value from a union (select value from b except select 'x') order by value",
      "values (1,2),(3,4) order by 1 limit 1",
      "insert or replace into t (a,b) values (1,2) returning *",
      "replace into t select * from u",
      "update t set a = a + 1, b = 'x' where id = 1 returning a as aa, t.*",
      "delete from t where x in (select y from u) returning old.x",
      "create table if not exists main.t (id integer primary key desc on conflict replace, "
      "v varchar(10) not null collate nocase default 'x', d decimal(10, 2) default -1.5, "
      "g int generated always as (id * 2) stored, h as (id+1), r integer references p(id) "
      "on delete cascade on update set null deferrable initially deferred, "
      "constraint ck check on insert, update (v <> ''), primary key (), unique (v, d), "
      "foreign key (r) references p(id) on delete restrict) using memory(a = 1, 'pos', k = memory)",
      "create temp table tt (a)",
      "create unique index if not exists ix on t (a collate nocase desc, b) where a > 0",
      "create view v (a, b) as select 1, 2",
      "drop view if exists v",
      "drop index ix",
      "drop table if exists t",
      "begin immediate transaction",
      "rollback to savepoint sp",
      "release sp",
      "pragma main.x(5)",
      "analyze main.*",
      "select * from t join lateral json_each(t.arr) as j on 1 cross join u",
      "select * from (select 1) as s(a) join (values (1)) v on 1",
      "select * from (insert into t values (1) returning *) as r",
      "select \"from\", \"a b\" from \"select\" where \"order\" = 1",
      "select case when a then b end, case x when 1 then 2 else 3 end",
      "select not (a not like b), not (x is true), -(x is null), (a not like b) is null, "
      "not (a not in (1)), (not a) in (1), (a between 1 and 2) between 3 and 4, a not regexp b",
      "select x from t where not a = b and not (c or d) or e is not null",
      "select rank() over (), f(x) over (order by y range between unbounded preceding and "
      "unbounded following exclude ties)",
  };
  for (const char* sql : statements) {
    SCOPED_TRACE(sql);
    auto first = Parser::parse(sql);
    ASSERT_EQ(first.size(), 1u);
    std::string p1 = statement_to_string(*first[0]);
    auto second = Parser::parse(p1);
    ASSERT_EQ(second.size(), 1u) << p1;
    EXPECT_EQ(statement_to_string(*second[0]), p1);
  }
}

}  // namespace
}  // namespace quereus
