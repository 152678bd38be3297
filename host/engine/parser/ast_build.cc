// Building syntax in code (see ast_build.h).
#include "parser/ast_build.h"

#include <cstdio>

namespace quereus::ast {

ExprPtr column_ref(std::string table, std::string column) {
  auto c = std::make_unique<ColumnRef>();
  c->table = std::move(table);
  c->column = std::move(column);
  return c;
}

ExprPtr null_literal() { return std::make_unique<Literal>(); }

ExprPtr integer_literal(int64_t v) {
  auto l = std::make_unique<Literal>();
  l->literal_kind = LiteralKind::kInteger;
  l->text = std::to_string(v);
  return l;
}

ExprPtr value_literal(const Value& v) {
  auto lit = std::make_unique<Literal>();
  bool negative = false;
  switch (v.type()) {
    case ValueType::kNull: lit->literal_kind = LiteralKind::kNull; break;
    case ValueType::kBoolean: lit->literal_kind = v.as_int() ? LiteralKind::kTrue : LiteralKind::kFalse; break;
    case ValueType::kInteger: {
      const int64_t i = v.as_int();
      negative = i < 0;
      lit->literal_kind = i == INT64_MIN ? LiteralKind::kReal : LiteralKind::kInteger;  // an exact big integer
      lit->text = i == INT64_MIN ? "9223372036854775808" : std::to_string(negative ? -i : i);
      break;
    }
    case ValueType::kReal: {
      const double d = v.as_real();
      negative = d < 0;
      lit->literal_kind = LiteralKind::kReal;
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", negative ? -d : d);
      lit->text = buf;
      if (lit->text.find_first_not_of("0123456789") == std::string::npos) lit->text += ".0";
      break;
    }
    case ValueType::kBlob: lit->literal_kind = LiteralKind::kBlob; lit->text = v.to_text(); break;
    default: lit->literal_kind = LiteralKind::kString; lit->text = v.to_text(); break;
  }
  return negative ? negate(std::move(lit)) : ExprPtr(std::move(lit));
}

ExprPtr call(std::string name, std::vector<ExprPtr> args) {
  auto f = std::make_unique<FunctionCall>();
  f->name = std::move(name);
  f->args = std::move(args);
  return f;
}

ExprPtr string_literal(std::string v) {
  auto l = std::make_unique<Literal>();
  l->literal_kind = LiteralKind::kString;
  l->text = std::move(v);
  return l;
}

ExprPtr binary(BinaryOp op, ExprPtr left, ExprPtr right) {
  auto b = std::make_unique<BinaryExpr>();
  b->op = op;
  b->left = std::move(left);
  b->right = std::move(right);
  return b;
}

ExprPtr conjoin(ExprPtr a, ExprPtr b) {
  if (!a) return b;
  if (!b) return a;
  return binary(BinaryOp::kAnd, std::move(a), std::move(b));
}

ExprPtr disjoin(ExprPtr a, ExprPtr b) {
  if (!a) return b;
  if (!b) return a;
  return binary(BinaryOp::kOr, std::move(a), std::move(b));
}

namespace {
ExprPtr unary(UnaryOp op, ExprPtr e) {
  auto u = std::make_unique<UnaryExpr>();
  u->op = op;
  u->operand = std::move(e);
  return u;
}
}  // namespace

ExprPtr logical_not(ExprPtr e) { return unary(UnaryOp::kNot, std::move(e)); }
ExprPtr negate(ExprPtr e) { return unary(UnaryOp::kNegate, std::move(e)); }

ExprPtr is_not_null(ExprPtr e) {
  auto n = std::make_unique<IsNullExpr>();
  n->negated = true;
  n->operand = std::move(e);
  return n;
}

ExprPtr exists(std::unique_ptr<Select> q) {
  auto x = std::make_unique<ExistsExpr>();
  x->subquery = std::move(q);
  return x;
}

ExprPtr in_subquery(ExprPtr operand, std::unique_ptr<Select> q) {
  auto x = std::make_unique<InExpr>();
  x->operand = std::move(operand);
  x->subquery = std::move(q);
  return x;
}

ExprPtr scalar_subquery(std::unique_ptr<Select> q) {
  auto x = std::make_unique<SubqueryExpr>();
  x->subquery = std::move(q);
  return x;
}

TableSourcePtr table_source(QualifiedName name, std::string alias) {
  auto t = std::make_unique<TableSource>();
  t->kind = TableSource::Kind::kTable;
  t->table = std::move(name);
  t->alias = std::move(alias);
  return t;
}

TableSourcePtr function_source(std::string name, std::vector<ExprPtr> args) {
  auto t = std::make_unique<TableSource>();
  t->kind = TableSource::Kind::kFunction;
  t->function_name = std::move(name);
  t->function_args = std::move(args);
  return t;
}

TableSourcePtr subquery_source(std::unique_ptr<Select> q, std::string alias, std::vector<std::string> columns) {
  auto t = std::make_unique<TableSource>();
  t->kind = TableSource::Kind::kSubquery;
  t->subquery = std::move(q);
  t->alias = std::move(alias);
  t->alias_columns = std::move(columns);
  return t;
}

ResultColumn result_column(ExprPtr e, std::string alias) {
  ResultColumn rc;
  rc.expr = std::move(e);
  rc.alias = std::move(alias);
  return rc;
}

ResultColumn star() {
  ResultColumn rc;
  rc.kind = ResultColumn::Kind::kStar;
  return rc;
}

std::unique_ptr<Select> select(std::vector<ResultColumn> columns, TableSourcePtr from, ExprPtr where) {
  auto s = std::make_unique<Select>();
  s->core.columns = std::move(columns);
  s->core.from = std::move(from);
  s->core.where = std::move(where);
  return s;
}

}  // namespace quereus::ast
