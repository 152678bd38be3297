// Planner: AST → bound relational plan (see planner.h for its place in the pipeline).
#include "planner/planner.h"

#include <set>

#include "common/status.h"
#include "core/database_impl.h"
#include "optimizer/optimizer.h"
#include "parser/ast_printer.h"
#include "schema/catalog.h"

namespace quereus {

// State of binding the expressions that sit above an aggregation.
struct AggBinding {
  const Scope* input = nullptr;            // scope of the rows being aggregated
  std::vector<std::string> group_texts;    // canonical text of each GROUP BY expression
  std::vector<ScalarPtr> group_exprs;
  AggregateNode* node = nullptr;
  std::map<std::string, int> agg_slots;    // canonical call text → output slot
};

// Window calls collected while binding a select list; they become one WindowNode.
struct WindowBinding {
  static constexpr int kPlaceholderBase = 1 << 20;
  std::shared_ptr<WindowNode> node;
  int base = kPlaceholderBase;  // slots are remapped once the input width is final
  std::vector<std::shared_ptr<ColumnScalar>> refs;
};

namespace {

const std::set<std::string>& window_only_functions() {
  static const std::set<std::string> names = {"row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
                                              "ntile", "lag", "lead", "first_value", "last_value", "nth_value"};
  return names;
}

[[noreturn]] void fail(StatusCode code, const std::string& msg, const SourceSite& site) {
  if (site.line > 0) throw Error(code, msg, site);
  throw Error(code, msg);
}

qrs_logical_type arith_type(const ScalarExpr& l, const ScalarExpr& r) {
  if (l.type == QRS_LT_INTEGER && r.type == QRS_LT_INTEGER) return QRS_LT_INTEGER;
  if ((l.type == QRS_LT_REAL || l.type == QRS_LT_INTEGER) && (r.type == QRS_LT_REAL || r.type == QRS_LT_INTEGER))
    return QRS_LT_REAL;
  return QRS_LT_ANY;
}

bool is_comparison(ast::BinaryOp op) {
  using Op = ast::BinaryOp;
  switch (op) {
    case Op::kEq: case Op::kEqEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt:
    case Op::kGe: case Op::kIs: case Op::kIsNot: case Op::kLike: case Op::kNotLike:
    case Op::kGlob: case Op::kNotGlob: case Op::kMatch: case Op::kRegexp:
      return true;
    default: return false;
  }
}

}  // namespace

void dedupe_names(std::vector<std::string>& names) {
  std::map<std::string, int> seen;
  std::set<std::string> used(names.begin(), names.end());
  for (auto& n : names) {
    int& count = seen[n];
    if (count++ == 0) continue;
    std::string candidate;
    do {
      candidate = n + ":" + std::to_string(count - 1);
      ++count;
    } while (used.count(candidate));
    --count;
    used.insert(candidate);
    n = candidate;
  }
}

std::string Planner::column_name(const ast::ResultColumn& rc) {
  if (!rc.alias.empty()) return rc.alias;
  if (rc.expr && rc.expr->kind == ast::ExprKind::kColumn)
    return static_cast<const ast::ColumnRef&>(*rc.expr).column;
  return rc.expr ? expr_to_string(*rc.expr) : "*";
}

const Collation* Planner::resolve_collation(std::string_view name) const {
  auto c = db_.registry().find_collation(name);
  if (!c) throw Error(StatusCode::kError, "Unknown collation: " + std::string(name));
  return c.get();
}

const Collation* Planner::comparison_collation(const ScalarExpr& l, const ScalarExpr& r) {
  if (l.explicit_collation) return l.collation;
  if (r.explicit_collation) return r.collation;
  if (l.collation) return l.collation;
  return r.collation;
}

Scope Planner::table_scope(const TableEntry& table, const std::string& alias) const {
  Scope s;
  const TableSchema& ts = table.schema;
  for (size_t i = 0; i < ts.columns.size(); ++i) {
    Scope::Column c;
    c.table = alias.empty() ? ts.name : alias;
    c.schema = ts.schema_name;
    c.name = ts.columns[i].name;
    c.slot = static_cast<int>(i);
    c.attr.name = ts.columns[i].name;
    c.attr.type = ts.columns[i].logical_type;
    c.attr.collation = ts.columns[i].collation.get();
    c.attr.nullable = !ts.columns[i].not_null;
    s.columns.push_back(c);
  }
  return s;
}

// An aggregate call: a registered aggregate of that arity, not used as a window function.
bool Planner::is_aggregate_call(const ast::FunctionCall& f) const {
  return !f.over && db_.registry().find_aggregate(to_lower(f.name), static_cast<int>(f.args.size()));
}

bool Planner::contains_aggregate(const ast::Expr& e) const {
  using K = ast::ExprKind;
  switch (e.kind) {
    case K::kFunction: {
      auto& f = static_cast<const ast::FunctionCall&>(e);
      if (is_aggregate_call(f)) return true;
      for (auto& a : f.args) if (contains_aggregate(*a)) return true;
      return false;
    }
    case K::kUnary: return contains_aggregate(*static_cast<const ast::UnaryExpr&>(e).operand);
    case K::kBinary: {
      auto& b = static_cast<const ast::BinaryExpr&>(e);
      return contains_aggregate(*b.left) || contains_aggregate(*b.right);
    }
    case K::kCast: return contains_aggregate(*static_cast<const ast::CastExpr&>(e).operand);
    case K::kCollate: return contains_aggregate(*static_cast<const ast::CollateExpr&>(e).operand);
    case K::kCase: {
      auto& c = static_cast<const ast::CaseExpr&>(e);
      if (c.base && contains_aggregate(*c.base)) return true;
      for (auto& [w, t] : c.whens) if (contains_aggregate(*w) || contains_aggregate(*t)) return true;
      return c.else_expr && contains_aggregate(*c.else_expr);
    }
    case K::kBetween: {
      auto& b = static_cast<const ast::BetweenExpr&>(e);
      return contains_aggregate(*b.operand) || contains_aggregate(*b.low) || contains_aggregate(*b.high);
    }
    case K::kIn: {
      auto& in = static_cast<const ast::InExpr&>(e);
      if (contains_aggregate(*in.operand)) return true;
      for (auto& x : in.list) if (contains_aggregate(*x)) return true;
      return false;
    }
    case K::kIsNull: return contains_aggregate(*static_cast<const ast::IsNullExpr&>(e).operand);
    default: return false;
  }
}

// ---------------------------------------------------------------- expressions

ScalarPtr Planner::bind_expr(const ast::Expr& e, const Scope& scope) {
  using K = ast::ExprKind;
  if (scope.agg) {
    AggBinding& ab = *scope.agg;
    std::string text = expr_to_string(e);
    for (size_t i = 0; i < ab.group_texts.size(); ++i)
      if (ab.group_texts[i] == text) {
        auto c = std::make_shared<ColumnScalar>(0, static_cast<int>(i), 0);
        c->type = ab.group_exprs[i]->type;
        c->collation = ab.group_exprs[i]->collation;
        return c;
      }
    bool is_agg_call = false;
    if (e.kind == K::kFunction) {
      auto& f = static_cast<const ast::FunctionCall&>(e);
      is_agg_call = is_aggregate_call(f);
      if (is_agg_call) {
        auto it = ab.agg_slots.find(text);
        int slot;
        if (it != ab.agg_slots.end()) {
          slot = it->second;
        } else {
          AggregateCall call;
          call.fn = db_.registry().find_aggregate(to_lower(f.name), static_cast<int>(f.args.size()));
          call.distinct = f.distinct;
          call.star = f.star;
          for (auto& a : f.args) {
            if (contains_aggregate(*a)) fail(StatusCode::kError, "misuse of aggregate function " + to_lower(f.name) + "()", a->site);
            call.args.push_back(bind_expr(*a, *ab.input));
          }
          slot = static_cast<int>(ab.group_exprs.size() + ab.node->aggs.size());
          ab.node->aggs.push_back(std::move(call));
          ab.agg_slots[text] = slot;
        }
        auto c = std::make_shared<ColumnScalar>(0, slot, 0);
        std::string lname = to_lower(f.name);
        if (lname == "count") c->type = QRS_LT_INTEGER;
        else if (lname == "min" || lname == "max") {
          auto& first = ab.node->aggs[slot - ab.group_exprs.size()];
          if (!first.args.empty()) { c->type = first.args[0]->type; c->collation = first.args[0]->collation; }
        }
        return c;
      }
    }
    if (e.kind == K::kColumn) {
      // A bare column under aggregation: any value of the group (SQLite semantics).
      Scope probe = *ab.input;
      probe.agg = nullptr;
      ScalarPtr inner = bind_expr(e, probe);
      auto* col = static_cast<const ColumnScalar*>(inner.get());
      if (col->level > 0) {
        auto c = std::make_shared<ColumnScalar>(col->level, col->slot, col->attr_id);
        c->type = col->type;
        c->collation = col->collation;
        return c;
      }
      auto it = ab.agg_slots.find("\x01" + text);
      int slot;
      if (it != ab.agg_slots.end()) slot = it->second;
      else {
        AggregateCall call;
        call.args.push_back(inner);
        slot = static_cast<int>(ab.group_exprs.size() + ab.node->aggs.size());
        ab.node->aggs.push_back(std::move(call));
        ab.agg_slots["\x01" + text] = slot;
      }
      auto c = std::make_shared<ColumnScalar>(0, slot, col->attr_id);
      c->type = inner->type;
      c->collation = inner->collation;
      return c;
    }
  }

  switch (e.kind) {
    case K::kLiteral: {
      auto& l = static_cast<const ast::Literal&>(e);
      Value v;
      qrs_logical_type t = QRS_LT_ANY;
      switch (l.literal_kind) {
        case ast::LiteralKind::kNull: break;
        case ast::LiteralKind::kInteger: {
          Value n = l.text.size() > 2 && (l.text[1] == 'x' || l.text[1] == 'X')
                        ? Value::Integer(static_cast<int64_t>(std::stoull(l.text.substr(2), nullptr, 16)))
                        : parse_number(l.text, false);
          v = n;
          t = n.type() == ValueType::kInteger ? QRS_LT_INTEGER : QRS_LT_REAL;
          break;
        }
        case ast::LiteralKind::kReal:
          v = Value::Real(std::strtod(l.text.c_str(), nullptr));
          t = QRS_LT_REAL;
          break;
        case ast::LiteralKind::kString: v = Value::Text(l.text); t = QRS_LT_TEXT; break;
        case ast::LiteralKind::kBlob: v = Value::Blob(l.text); t = QRS_LT_BLOB; break;
        case ast::LiteralKind::kTrue: v = Value::Boolean(true); t = QRS_LT_BOOLEAN; break;
        case ast::LiteralKind::kFalse: v = Value::Boolean(false); t = QRS_LT_BOOLEAN; break;
      }
      auto s = std::make_shared<LiteralScalar>(std::move(v));
      s->type = t;
      return s;
    }
    case K::kColumn: {
      auto& c = static_cast<const ast::ColumnRef&>(e);
      int level = 0;
      for (const Scope* s = &scope; s; s = s->outer, ++level) {
        const Scope::Column* found = nullptr;
        for (auto& col : s->columns) {
          if (!iequals(col.name, c.column)) continue;
          if (!c.table.empty() && !iequals(col.table, c.table)) continue;
          if (!c.schema.empty() && !iequals(col.schema, c.schema)) continue;
          if (found) fail(StatusCode::kError, "ambiguous column name: " + c.column, e.site);
          found = &col;
        }
        if (found) {
          auto r = std::make_shared<ColumnScalar>(level, found->slot, found->attr.id);
          r->type = found->attr.type;
          r->collation = found->attr.collation;
          if (level > 0)
            for (const Scope* t = &scope; t; t = t->outer) {
              t->correlated = true;
              if (t == s) break;
            }
          return r;
        }
      }
      std::string full = c.table.empty() ? c.column : c.table + "." + c.column;
      fail(StatusCode::kError, "Column not found: " + full, e.site);
    }
    case K::kParameter: {
      auto& p = static_cast<const ast::Parameter&>(e);
      auto s = std::make_shared<ParamScalar>(p.index);
      if (p.index == 0) s->name = p.name;
      return s;
    }
    case K::kUnary: {
      auto& u = static_cast<const ast::UnaryExpr&>(e);
      auto operand = bind_expr(*u.operand, scope);
      auto s = std::make_shared<UnaryScalar>(u.op, operand);
      s->type = u.op == ast::UnaryOp::kNot ? QRS_LT_BOOLEAN
                : u.op == ast::UnaryOp::kBitNot ? QRS_LT_INTEGER : operand->type;
      return s;
    }
    case K::kBinary: {
      auto& b = static_cast<const ast::BinaryExpr&>(e);
      auto l = bind_expr(*b.left, scope);
      auto r = bind_expr(*b.right, scope);
      auto s = std::make_shared<BinaryScalar>(b.op, l, r);
      if (b.escape) s->escape = bind_expr(*b.escape, scope);
      using Op = ast::BinaryOp;
      if (is_comparison(b.op) || b.op == Op::kAnd || b.op == Op::kOr || b.op == Op::kXor) {
        s->type = QRS_LT_BOOLEAN;
        if (is_comparison(b.op)) {
          if (l->explicit_collation && r->explicit_collation && l->collation != r->collation)
            fail(StatusCode::kError, "conflicting COLLATE clauses in comparison", e.site);
          s->compare_collation = comparison_collation(*l, *r);
        }
      } else if (b.op == Op::kConcat) {
        s->type = QRS_LT_TEXT;
        s->collation = l->collation ? l->collation : r->collation;
        s->explicit_collation = l->explicit_collation || r->explicit_collation;
      } else if (b.op == Op::kBitAnd || b.op == Op::kBitOr || b.op == Op::kShl || b.op == Op::kShr) {
        s->type = QRS_LT_INTEGER;
      } else {
        s->type = arith_type(*l, *r);
      }
      return s;
    }
    case K::kFunction: return bind_function(static_cast<const ast::FunctionCall&>(e), scope);
    case K::kCast: {
      auto& c = static_cast<const ast::CastExpr&>(e);
      auto s = std::make_shared<CastScalar>();
      s->operand = bind_expr(*c.operand, scope);
      s->target = logical_type_from_name(c.type_name);
      s->type = s->target;
      if (s->target == QRS_LT_TEXT) s->collation = s->operand->collation;
      return s;
    }
    case K::kCollate: {
      auto& c = static_cast<const ast::CollateExpr&>(e);
      auto inner = bind_expr(*c.operand, scope);
      const Collation* coll = resolve_collation(c.collation);
      // Re-wrap: a COLLATE changes only the collation attached to the value.
      struct CollateScalar : ScalarExpr {
        CollateScalar() : ScalarExpr(ScalarKind::kCast) {}
        Value eval(const EvalEnv& env) const override { return inner->eval(env); }
        bool is_constant() const override { return inner->is_constant(); }
        ScalarPtr inner;
      };
      auto s = std::make_shared<CollateScalar>();
      s->inner = inner;
      s->type = inner->type;
      s->collation = coll;
      s->explicit_collation = true;
      return s;
    }
    case K::kCase: {
      auto& c = static_cast<const ast::CaseExpr&>(e);
      auto s = std::make_shared<CaseScalar>();
      if (c.base) s->base = bind_expr(*c.base, scope);
      for (auto& [w, t] : c.whens) s->whens.emplace_back(bind_expr(*w, scope), bind_expr(*t, scope));
      if (c.else_expr) s->else_expr = bind_expr(*c.else_expr, scope);
      if (s->base) s->collation = s->base->collation;
      qrs_logical_type t = QRS_LT_ANY;
      bool first = true;
      for (auto& [w, then] : s->whens) {
        if (first) { t = then->type; first = false; }
        else if (then->type != t) t = QRS_LT_ANY;
      }
      s->type = t;
      return s;
    }
    case K::kBetween: {
      auto& b = static_cast<const ast::BetweenExpr&>(e);
      auto s = std::make_shared<BetweenScalar>();
      s->negated = b.negated;
      s->operand = bind_expr(*b.operand, scope);
      s->low = bind_expr(*b.low, scope);
      s->high = bind_expr(*b.high, scope);
      s->compare_collation = comparison_collation(*s->operand, *s->low);
      s->type = QRS_LT_BOOLEAN;
      return s;
    }
    case K::kIn: {
      auto& in = static_cast<const ast::InExpr&>(e);
      auto operand = bind_expr(*in.operand, scope);
      if (in.subquery) {
        auto s = bind_subquery(*in.subquery, scope, ScalarKind::kInSubquery, operand, in.negated);
        return s;
      }
      auto s = std::make_shared<InListScalar>();
      s->negated = in.negated;
      s->operand = operand;
      for (auto& x : in.list) s->list.push_back(bind_expr(*x, scope));
      s->collation = operand->collation;
      s->type = QRS_LT_BOOLEAN;
      return s;
    }
    case K::kExists: {
      auto& ex = static_cast<const ast::ExistsExpr&>(e);
      return bind_subquery(*ex.subquery, scope, ScalarKind::kExists, nullptr, ex.negated);
    }
    case K::kSubquery: {
      auto& sq = static_cast<const ast::SubqueryExpr&>(e);
      return bind_subquery(*sq.subquery, scope, ScalarKind::kSubquery, nullptr, false);
    }
    case K::kIsNull: {
      auto& n = static_cast<const ast::IsNullExpr&>(e);
      auto s = std::make_shared<IsNullScalar>(bind_expr(*n.operand, scope), n.negated);
      s->type = QRS_LT_BOOLEAN;
      return s;
    }
  }
  throw Error(StatusCode::kInternal, "unhandled expression kind");
}

ScalarPtr Planner::bind_subquery(const ast::Select& sel, const Scope& scope, ScalarKind kind,
                                 ScalarPtr operand, bool negated) {
  Scope inner_outer = scope;
  inner_outer.agg = nullptr;
  inner_outer.correlated = false;
  // A subquery sees the current scope's columns as level 1.
  QueryPlan qp = plan_select(sel, &inner_outer);
  auto s = std::make_shared<SubqueryScalar>(kind);
  static const OptimizerOptions kDefaults;
  s->plan = Optimizer(kDefaults).optimize(qp.root);
  s->correlated = inner_outer.correlated;
  if (s->correlated)
    for (const Scope* t = &scope; t; t = t->outer) t->correlated = true;
  s->negated = negated;
  s->operand = operand;
  if (kind == ScalarKind::kSubquery) {
    if (qp.root->columns.size() != 1)
      throw Error(StatusCode::kError, "sub-select returns " + std::to_string(qp.root->columns.size()) +
                                          " columns - expected 1");
    s->type = qp.root->columns[0].type;
    s->collation = qp.root->columns[0].collation;
  } else {
    s->type = QRS_LT_BOOLEAN;
    if (kind == ScalarKind::kInSubquery) {
      if (qp.root->columns.size() != 1)
        throw Error(StatusCode::kError, "sub-select returns " + std::to_string(qp.root->columns.size()) +
                                            " columns - expected 1");
      s->collation = operand && operand->collation ? operand->collation : qp.root->columns[0].collation;
    }
  }
  return s;
}

ScalarPtr Planner::bind_function(const ast::FunctionCall& f, const Scope& scope) {
  std::string name = to_lower(f.name);
  int argc = static_cast<int>(f.args.size());
  if (f.over) return bind_window(f, scope);
  if (window_only_functions().count(name))
    fail(StatusCode::kError, name + "() may only be used as a window function (with OVER)", f.site);
  const ScalarFunction* fn = db_.registry().find_scalar(name, argc);
  if (!fn) {
    if (db_.registry().find_aggregate(name, argc))
      fail(StatusCode::kError, "misuse of aggregate function " + name + "()", f.site);
    if (db_.registry().has_function_named(name))
      fail(StatusCode::kError, "wrong number of arguments to function " + name + "()", f.site);
    fail(StatusCode::kError, "Function not found: " + name + "/" + std::to_string(argc), f.site);
  }
  auto s = std::make_shared<FunctionScalar>();
  s->fn = fn;
  for (auto& a : f.args) s->args.push_back(bind_expr(*a, scope));
  if (name == "lower" || name == "upper" || name == "trim" || name == "ltrim" || name == "rtrim" ||
      name == "substr" || name == "substring" || name == "replace") {
    s->type = QRS_LT_TEXT;
    if (!s->args.empty()) s->collation = s->args[0]->collation;
  } else if (name == "length" || name == "instr" || name == "count") {
    s->type = QRS_LT_INTEGER;
  } else if ((name == "coalesce" || name == "ifnull" || name == "min" || name == "max" || name == "nullif") &&
             !s->args.empty()) {
    s->type = s->args[0]->type;
    for (auto& a : s->args)
      if (a->collation) { s->collation = a->collation; break; }
  }
  return s;
}

ScalarPtr Planner::bind_window(const ast::FunctionCall& f, const Scope& scope) {
  if (!scope.win) fail(StatusCode::kError, "window functions are not allowed here", f.site);
  WindowBinding& wb = *scope.win;
  Scope inner = scope;
  inner.win = nullptr;  // no window calls inside window calls
  WindowCall call;
  call.name = to_lower(f.name);
  call.distinct = f.distinct;
  int argc = static_cast<int>(f.args.size());
  if (!window_only_functions().count(call.name)) {
    call.aggregate = db_.registry().find_aggregate(call.name, argc);
    if (!call.aggregate) fail(StatusCode::kError, "Function not found: " + call.name + "/" + std::to_string(argc) + " (window)", f.site);
  }
  for (auto& a : f.args) call.args.push_back(bind_expr(*a, inner));
  const ast::WindowSpec& w = *f.over;
  for (auto& p : w.partition_by) call.partition_by.push_back(bind_expr(*p, inner));
  for (auto& o : w.order_by) {
    SortKey k;
    k.expr = bind_expr(*o.expr, inner);
    k.desc = o.desc;
    k.nulls_first = o.nulls != ast::OrderingTerm::Nulls::kLast;
    call.order_by.push_back(k);
  }
  if (w.frame) {
    call.has_frame = true;
    call.unit = static_cast<int>(w.frame->unit);
    call.start_kind = static_cast<int>(w.frame->start.kind);
    if (w.frame->start.offset) call.start_offset = bind_expr(*w.frame->start.offset, inner);
    if (w.frame->has_end) {
      call.end_kind = static_cast<int>(w.frame->end.kind);
      if (w.frame->end.offset) call.end_offset = bind_expr(*w.frame->end.offset, inner);
    } else {
      call.end_kind = static_cast<int>(ast::FrameBound::Kind::kCurrentRow);
    }
    call.exclude = static_cast<int>(w.frame->exclude);
    if (w.frame->unit == ast::WindowFrame::Unit::kRange && (call.start_offset || call.end_offset) &&
        call.order_by.size() != 1)
      fail(StatusCode::kError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", f.site);
  }
  qrs_logical_type type = QRS_LT_ANY;
  if (call.name == "row_number" || call.name == "rank" || call.name == "dense_rank" || call.name == "ntile" ||
      call.name == "count")
    type = QRS_LT_INTEGER;
  else if (call.name == "percent_rank" || call.name == "cume_dist" || call.name == "avg" || call.name == "total")
    type = QRS_LT_REAL;
  else if (!call.args.empty() && call.name != "sum")
    type = call.args[0]->type;
  int slot = wb.base + static_cast<int>(wb.node->calls.size());
  wb.node->calls.push_back(std::move(call));
  auto c = std::make_shared<ColumnScalar>(0, slot, 0);
  c->type = type;
  wb.refs.push_back(c);
  return c;
}

// ---------------------------------------------------------------- FROM

Planner::Source Planner::plan_from(const ast::TableSource& src, const Scope* outer) {
  using K = ast::TableSource::Kind;
  Source out;
  switch (src.kind) {
    case K::kTable: {
      // CTE first (unqualified names only), innermost WITH first.
      if (src.table.schema.empty()) {
        for (size_t level = cte_stack_.size(); level-- > 0;) {
          auto it = cte_stack_[level].find(to_lower(src.table.name));
          if (it == cte_stack_[level].end()) continue;
          const ast::CommonTableExpr& cte = *it->second->cte;
          QueryPlan qp;
          if (it->second->working) {
            // A recursive CTE's self reference: the previous iteration's rows.
            qp.root = it->second->working;
            for (auto& c : it->second->working->columns) qp.names.push_back(c.name);
          } else {
            // The body sees the CTEs declared before it (and itself, when recursive).
            std::vector<std::map<std::string, std::shared_ptr<CteBinding>>> saved(cte_stack_.begin() + level, cte_stack_.end());
            cte_stack_.resize(level);
            std::shared_ptr<CteBinding> self = it->second;
            std::map<std::string, std::shared_ptr<CteBinding>> visible;
            for (auto& [n, b] : saved[0])
              if (b->order < self->order || (b->recursive && b.get() == self.get())) visible[n] = b;
            cte_stack_.push_back(visible);
            try {
              qp = plan_cte(cte, *self, outer);
            } catch (...) {
              cte_stack_.resize(level);
              cte_stack_.insert(cte_stack_.end(), saved.begin(), saved.end());
              throw;
            }
            cte_stack_.resize(level);
            cte_stack_.insert(cte_stack_.end(), saved.begin(), saved.end());
          }
          std::string alias = src.alias.empty() ? cte.name : src.alias;
          if (!cte.columns.empty() && cte.columns.size() != qp.root->columns.size())
            fail(StatusCode::kError, "CTE '" + cte.name + "' has " + std::to_string(qp.root->columns.size()) +
                                         " columns but " + std::to_string(cte.columns.size()) + " column names",
                 cte.site);
          out.node = qp.root;
          for (size_t i = 0; i < qp.root->columns.size(); ++i) {
            Scope::Column c;
            c.table = alias;
            c.name = cte.columns.empty() ? qp.names[i] : cte.columns[i];
            c.slot = static_cast<int>(i);
            c.attr = qp.root->columns[i];
            c.attr.name = c.name;
            out.scope.columns.push_back(c);
          }
          return out;
        }
      }
      auto entry = db_.require_table(src.table.schema, src.table.name);
      auto scan = std::make_shared<TableScanNode>();
      scan->table = entry;
      out.scope = table_scope(*entry, src.alias);
      for (auto& c : out.scope.columns) {
        c.attr.id = mint_attr();
        scan->columns.push_back(c.attr);
      }
      std::vector<int> key;
      for (auto& k : entry->schema.primary_key) key.push_back(k.column);
      scan->keys.push_back(key);
      out.node = scan;
      return out;
    }
    case K::kSubquery: {
      QueryPlan qp = plan_select(*src.subquery, outer);
      out.node = qp.root;
      for (size_t i = 0; i < qp.root->columns.size(); ++i) {
        Scope::Column c;
        c.table = src.alias;
        c.name = qp.names[i];
        c.slot = static_cast<int>(i);
        c.attr = qp.root->columns[i];
        out.scope.columns.push_back(c);
      }
      return out;
    }
    case K::kFunction: {
      const TableFunction* fn = db_.registry().find_table_function(src.function_name);
      if (!fn) fail(StatusCode::kError, "Table-valued function not found: " + src.function_name, src.site);
      int argc = static_cast<int>(src.function_args.size());
      if (argc < fn->min_args || (fn->num_args >= 0 && argc > fn->num_args))
        fail(StatusCode::kError, "wrong number of arguments to table function " + fn->name, src.site);
      auto node = std::make_shared<TableFunctionNode>();
      node->fn = fn;
      Scope arg_scope;
      arg_scope.outer = outer;
      for (auto& a : src.function_args) node->args.push_back(bind_expr(*a, arg_scope));
      std::string alias = src.alias.empty() ? fn->name : src.alias;
      for (size_t i = 0; i < fn->columns.size(); ++i) {
        Scope::Column c;
        c.table = alias;
        c.name = fn->columns[i].name;
        c.slot = static_cast<int>(i);
        c.attr.id = mint_attr();
        c.attr.name = c.name;
        c.attr.type = static_cast<qrs_logical_type>(fn->columns[i].type);
        c.attr.nullable = fn->columns[i].nullable;
        node->columns.push_back(c.attr);
        out.scope.columns.push_back(c);
      }
      out.node = node;
      return out;
    }
    case K::kJoin: {
      if (!src.exists_columns.empty()) {
        throw Error(StatusCode::kUnsupported, "Join existence columns (EXISTS … AS) are not supported yet",
                    src.exists_columns.front().site);
      }
      Source l = plan_from(*src.left, outer);
      Source r = plan_from(*src.right, outer);
      auto join = std::make_shared<JoinNode>();
      join->join = src.join;
      join->left = l.node;
      join->right = r.node;
      join->columns = l.node->columns;
      bool pad_left = src.join == ast::JoinKind::kRight || src.join == ast::JoinKind::kFull;
      bool pad_right = src.join == ast::JoinKind::kLeft || src.join == ast::JoinKind::kFull;
      if (pad_left) for (auto& c : join->columns) c.nullable = true;
      int lw = static_cast<int>(l.node->columns.size());
      for (auto c : r.node->columns) {
        if (pad_right) c.nullable = true;
        join->columns.push_back(c);
      }
      out.scope = l.scope;
      for (auto c : r.scope.columns) {
        c.slot += lw;
        out.scope.columns.push_back(c);
      }
      out.scope.outer = outer;
      if (src.on) {
        join->on = bind_expr(*src.on, out.scope);
      } else if (!src.using_columns.empty()) {
        ScalarPtr cond;
        for (auto& name : src.using_columns) {
          const Scope::Column* lc = nullptr;
          const Scope::Column* rc = nullptr;
          for (auto& c : l.scope.columns) if (iequals(c.name, name)) lc = &c;
          for (auto& c : r.scope.columns) if (iequals(c.name, name)) rc = &c;
          if (!lc || !rc) fail(StatusCode::kError, "cannot join using column " + name + " - column not present in both tables", src.site);
          auto a = std::make_shared<ColumnScalar>(0, lc->slot, lc->attr.id);
          a->collation = lc->attr.collation;
          auto b = std::make_shared<ColumnScalar>(0, rc->slot + lw, rc->attr.id);
          b->collation = rc->attr.collation;
          auto eq = std::make_shared<BinaryScalar>(ast::BinaryOp::kEq, a, b);
          eq->type = QRS_LT_BOOLEAN;
          eq->compare_collation = comparison_collation(*a, *b);
          if (!cond) cond = eq;
          else {
            auto both = std::make_shared<BinaryScalar>(ast::BinaryOp::kAnd, cond, eq);
            both->type = QRS_LT_BOOLEAN;
            cond = both;
          }
        }
        join->on = cond;
      }
      out.node = join;
      return out;
    }
  }
  throw Error(StatusCode::kInternal, "unhandled FROM kind");
}

// ---------------------------------------------------------------- SELECT

QueryPlan Planner::plan_core(const ast::SelectCore& core, const Scope* outer,
                             const std::vector<ast::OrderingTerm>* order_by, RelPtr* sorted_root) {
  QueryPlan qp;
  if (core.nested) {
    qp = plan_select(*core.nested, outer);
    if (order_by && !order_by->empty()) {
      qp.root = sort_output(qp.root, qp.names, *order_by, outer);
      if (sorted_root) *sorted_root = qp.root;
    }
    return qp;
  }
  if (!core.values.empty()) {
    auto values = std::make_shared<ValuesNode>();
    size_t width = core.values[0].size();
    Scope empty;
    empty.outer = outer;
    for (auto& row : core.values) {
      if (row.size() != width) throw Error(StatusCode::kError, "all VALUES must have the same number of terms");
      std::vector<ScalarPtr> bound;
      for (auto& e : row) bound.push_back(bind_expr(*e, empty));
      values->rows.push_back(std::move(bound));
    }
    for (size_t i = 0; i < width; ++i) {
      Attribute a;
      a.id = mint_attr();
      a.name = "column_" + std::to_string(i);
      a.type = values->rows[0][i]->type;
      for (auto& row : values->rows)
        if (row[i]->type != a.type) a.type = QRS_LT_ANY;
      values->columns.push_back(a);
      qp.names.push_back(a.name);
    }
    qp.root = values;
    return qp;
  }

  Source src;
  if (core.from) {
    src = plan_from(*core.from, outer);
  } else {
    src.node = std::make_shared<SingleRowNode>();
  }
  src.scope.outer = outer;
  RelPtr node = src.node;

  if (core.where) {
    if (contains_aggregate(*core.where)) fail(StatusCode::kError, "misuse of aggregate function in WHERE", core.where->site);
    auto f = std::make_shared<FilterNode>();
    f->input = node;
    f->predicate = bind_expr(*core.where, src.scope);
    f->columns = node->columns;
    f->keys = node->keys;
    node = f;
  }

  bool aggregate = !core.group_by.empty() || core.having;
  for (auto& rc : core.columns)
    if (rc.kind == ast::ResultColumn::Kind::kExpr && contains_aggregate(*rc.expr)) aggregate = true;
  if (order_by)
    for (auto& t : *order_by)
      if (contains_aggregate(*t.expr)) aggregate = true;

  // Expand the select list (stars) into expressions over the current scope.
  struct Item { const ast::Expr* expr = nullptr; const Scope::Column* star_col = nullptr; std::string name; };
  std::vector<Item> items;
  for (auto& rc : core.columns) {
    if (rc.kind == ast::ResultColumn::Kind::kExpr && !rc.inverse.empty()) {
      throw Error(StatusCode::kUnsupported, "WITH INVERSE result-column inverses are not supported yet", rc.site);
    }
    if (rc.kind == ast::ResultColumn::Kind::kExpr) {
      items.push_back({rc.expr.get(), nullptr, column_name(rc)});
      continue;
    }
    bool any = false;
    for (auto& c : src.scope.columns) {
      if (rc.kind == ast::ResultColumn::Kind::kTableStar && !iequals(c.table, rc.table)) continue;
      items.push_back({nullptr, &c, c.name});
      any = true;
    }
    if (!any && rc.kind == ast::ResultColumn::Kind::kTableStar)
      fail(StatusCode::kError, "no such table: " + rc.table, rc.site);
    if (!any && !core.from) fail(StatusCode::kError, "no tables specified", rc.site);
  }

  Scope post;  // the scope the select list is bound in
  AggBinding ab;
  std::shared_ptr<AggregateNode> agg;
  if (aggregate) {
    agg = std::make_shared<AggregateNode>();
    agg->input = node;
    ab.input = &src.scope;
    ab.node = agg.get();
    for (auto& g : core.group_by) {
      const ast::Expr* ge = g.get();
      // GROUP BY may name a select-list alias or ordinal.
      if (ge->kind == ast::ExprKind::kLiteral &&
          static_cast<const ast::Literal*>(ge)->literal_kind == ast::LiteralKind::kInteger) {
        int n = std::atoi(static_cast<const ast::Literal*>(ge)->text.c_str());
        if (n >= 1 && n <= static_cast<int>(items.size()) && items[n - 1].expr) ge = items[n - 1].expr;
      } else if (ge->kind == ast::ExprKind::kColumn) {
        auto& cr = static_cast<const ast::ColumnRef&>(*ge);
        bool is_source_col = false;
        for (auto& c : src.scope.columns) if (iequals(c.name, cr.column)) is_source_col = true;
        if (!is_source_col && cr.table.empty())
          for (size_t i = 0; i < core.columns.size(); ++i)
            if (core.columns[i].kind == ast::ResultColumn::Kind::kExpr && iequals(core.columns[i].alias, cr.column))
              ge = core.columns[i].expr.get();
      }
      if (contains_aggregate(*ge)) fail(StatusCode::kError, "aggregate functions are not allowed in the GROUP BY clause", ge->site);
      ab.group_texts.push_back(expr_to_string(*ge));
      ab.group_exprs.push_back(bind_expr(*ge, src.scope));
    }
    agg->group_by = ab.group_exprs;
    post.outer = outer;
    post.agg = &ab;
    node = agg;
  } else {
    post = src.scope;
  }

  // Window calls in the select list / ORDER BY are computed by a WindowNode that sits
  // between the (aggregated) rows and the projection, appending one column per call.
  WindowBinding wb;
  wb.node = std::make_shared<WindowNode>();
  post.win = &wb;

  std::vector<ScalarPtr> exprs;
  std::vector<Attribute> attrs;
  for (auto& it : items) {
    ScalarPtr e;
    Attribute a;
    if (it.star_col) {
      if (aggregate) {
        ast::ColumnRef ref;
        ref.table = it.star_col->table;
        ref.column = it.star_col->name;
        e = bind_expr(ref, post);
      } else {
        auto c = std::make_shared<ColumnScalar>(0, it.star_col->slot, it.star_col->attr.id);
        c->type = it.star_col->attr.type;
        c->collation = it.star_col->attr.collation;
        e = c;
      }
      a = it.star_col->attr;
    } else {
      e = bind_expr(*it.expr, post);
      a.type = e->type;
      a.collation = e->collation;
      if (auto* col = dynamic_cast<const ColumnScalar*>(e.get()); col && col->level == 0 && !aggregate) {
        a = node->columns.size() > static_cast<size_t>(col->slot) ? node->columns[col->slot] : a;
      } else {
        a.id = mint_attr();
      }
    }
    a.name = it.name;
    exprs.push_back(e);
    attrs.push_back(a);
    qp.names.push_back(it.name);
  }

  post.win = nullptr;
  ScalarPtr having;
  if (core.having) having = bind_expr(*core.having, post);
  post.win = &wb;

  // Aggregate output columns (only their count matters for slots).
  if (agg) {
    for (size_t i = 0; i < agg->group_by.size() + agg->aggs.size(); ++i) {
      Attribute a;
      a.id = mint_attr();
      a.name = "_agg" + std::to_string(i);
      if (i < agg->group_by.size()) { a.type = agg->group_by[i]->type; a.collation = agg->group_by[i]->collation; }
      agg->columns.push_back(a);
    }
    if (agg->group_by.empty()) agg->keys.push_back({});
  }

  // ORDER BY terms are bound now (they may add aggregates), then sorted after projection.
  std::vector<SortKey> sort_keys;
  std::vector<ScalarPtr> extra;  // hidden sort columns appended to the projection
  if (order_by && !order_by->empty()) {
    for (auto& t : *order_by) {
      SortKey sk;
      sk.desc = t.desc;
      sk.nulls_first = t.nulls == ast::OrderingTerm::Nulls::kDefault ? !t.desc : t.nulls == ast::OrderingTerm::Nulls::kFirst;
      sk.nulls_first = t.nulls == ast::OrderingTerm::Nulls::kDefault ? true : sk.nulls_first;
      const ast::Expr* te = t.expr.get();
      int out_index = -1;
      if (te->kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal*>(te)->literal_kind == ast::LiteralKind::kInteger) {
        int n = std::atoi(static_cast<const ast::Literal*>(te)->text.c_str());
        if (n < 1 || n > static_cast<int>(exprs.size()))
          fail(StatusCode::kError, "ORDER BY term out of range - should be between 1 and " + std::to_string(exprs.size()), te->site);
        out_index = n - 1;
      } else if (te->kind == ast::ExprKind::kColumn && static_cast<const ast::ColumnRef*>(te)->table.empty()) {
        auto& cr = static_cast<const ast::ColumnRef&>(*te);
        for (size_t i = 0; i < core.columns.size() && i < items.size(); ++i)
          if (core.columns[i].kind == ast::ResultColumn::Kind::kExpr && iequals(core.columns[i].alias, cr.column)) {
            out_index = static_cast<int>(i);
            break;
          }
      }
      ScalarPtr key;
      if (out_index < 0) {
        // Match a select-list expression textually, else bind over the input.
        std::string text = expr_to_string(*te);
        for (size_t i = 0; i < items.size(); ++i)
          if (items[i].expr && expr_to_string(*items[i].expr) == text) { out_index = static_cast<int>(i); break; }
      }
      if (out_index >= 0) {
        auto c = std::make_shared<ColumnScalar>(0, out_index, attrs[out_index].id);
        c->type = exprs[out_index]->type;
        c->collation = exprs[out_index]->collation;
        key = c;
      } else {
        if (core.distinct) fail(StatusCode::kError, "ORDER BY term does not match any column in the result set", te->site);
        ScalarPtr bound = bind_expr(*te, post);
        int slot = static_cast<int>(exprs.size() + extra.size());
        extra.push_back(bound);
        auto c = std::make_shared<ColumnScalar>(0, slot, 0);
        c->type = bound->type;
        c->collation = bound->collation;
        c->explicit_collation = bound->explicit_collation;
        key = c;
      }
      if (te->kind == ast::ExprKind::kCollate && out_index >= 0) {
        auto& ce = static_cast<const ast::CollateExpr&>(*te);
        auto wrapped = std::make_shared<ColumnScalar>(*static_cast<const ColumnScalar*>(key.get()));
        wrapped->collation = resolve_collation(ce.collation);
        key = wrapped;
      }
      sk.expr = key;
      sort_keys.push_back(sk);
    }
  }

  if (having) {
    auto f = std::make_shared<FilterNode>();
    f->input = node;
    f->predicate = having;
    f->columns = node->columns;
    f->keys = node->keys;
    node = f;
  }

  if (!wb.node->calls.empty()) {
    int base = static_cast<int>(node->columns.size());
    for (auto& r : wb.refs) r->slot = base + (r->slot - WindowBinding::kPlaceholderBase);
    wb.node->input = node;
    wb.node->columns = node->columns;
    for (size_t i = 0; i < wb.node->calls.size(); ++i) {
      Attribute a;
      a.id = mint_attr();
      a.name = "_win" + std::to_string(i);
      a.type = wb.refs[i]->type;
      wb.node->columns.push_back(a);
    }
    node = wb.node;
  }

  auto proj = std::make_shared<ProjectNode>();
  proj->input = node;
  proj->exprs = exprs;
  for (auto& x : extra) proj->exprs.push_back(x);
  proj->columns = attrs;
  for (size_t i = 0; i < extra.size(); ++i) {
    Attribute a;
    a.id = mint_attr();
    a.name = "_sort" + std::to_string(i);
    proj->columns.push_back(a);
  }
  // Keys survive a projection when every key column is projected as a plain column.
  for (auto& key : node->keys) {
    std::vector<int> mapped;
    bool ok = true;
    for (int k : key) {
      int found = -1;
      for (size_t i = 0; i < exprs.size(); ++i)
        if (auto* c = dynamic_cast<const ColumnScalar*>(exprs[i].get()); c && c->level == 0 && c->slot == k) found = static_cast<int>(i);
      if (found < 0) { ok = false; break; }
      mapped.push_back(found);
    }
    if (ok) proj->keys.push_back(mapped);
  }
  node = proj;

  if (core.distinct) {
    auto d = std::make_shared<DistinctNode>();
    d->input = node;
    d->columns = node->columns;
    d->keys = node->keys;
    std::vector<int> all;
    for (size_t i = 0; i < node->columns.size(); ++i) all.push_back(static_cast<int>(i));
    d->keys.push_back(all);
    node = d;
  }

  if (!sort_keys.empty()) {
    auto s = std::make_shared<SortNode>();
    s->input = node;
    s->sort_keys = sort_keys;
    s->columns = node->columns;
    s->keys = node->keys;
    node = s;
    if (!extra.empty()) {
      auto trim = std::make_shared<ProjectNode>();
      trim->input = node;
      for (size_t i = 0; i < exprs.size(); ++i) {
        auto c = std::make_shared<ColumnScalar>(0, static_cast<int>(i), attrs[i].id);
        c->type = attrs[i].type;
        c->collation = attrs[i].collation;
        trim->exprs.push_back(c);
      }
      trim->columns = attrs;
      trim->keys = node->keys;
      node = trim;
    }
    if (sorted_root) *sorted_root = node;
  }
  qp.root = node;
  return qp;
}

void Planner::push_with(const ast::WithClause& with) {
  std::map<std::string, std::shared_ptr<CteBinding>> m;
  int order = 0;
  for (auto& cte : with.ctes) {
    auto b = std::make_shared<CteBinding>();
    b->cte = &cte;
    b->recursive = with.recursive;
    b->order = order++;
    m[to_lower(cte.name)] = b;
  }
  cte_stack_.push_back(std::move(m));
}

void Planner::pop_with() { cte_stack_.pop_back(); }

// Plans a CTE body. A recursive CTE (a compound whose last arm references the CTE) becomes
// a RecursiveCteNode over a working table; anything else plans as an ordinary query.
QueryPlan Planner::plan_cte(const ast::CommonTableExpr& cte, CteBinding& binding, const Scope* outer) {
  const ast::Select& sel = *cte.select;
  bool union_arm = !sel.compounds.empty() && (sel.compounds.back().op == ast::CompoundOp::kUnion ||
                                              sel.compounds.back().op == ast::CompoundOp::kUnionAll);
  if (!binding.recursive || !union_arm) {
    CteBinding hidden = binding;
    binding.recursive = false;  // a non-recursive body does not see itself
    QueryPlan qp = plan_select(sel, outer);
    binding = hidden;
    return qp;
  }
  if (!sel.order_by.empty())
    throw Error(StatusCode::kUnsupported, "ORDER BY on a recursive CTE body is not supported yet");
  // Initial term: the core and every compound arm but the last.
  // Plan the anchor by temporarily viewing the select without its recursive arm.
  const ast::SelectCore& rec_core = sel.compounds.back().core;
  CteBinding saved = binding;
  binding.recursive = false;
  QueryPlan init = plan_core(sel.core, outer, nullptr, nullptr);
  for (size_t i = 0; i + 1 < sel.compounds.size(); ++i) {
    QueryPlan rhs = plan_core(sel.compounds[i].core, outer, nullptr, nullptr);
    auto so = std::make_shared<SetOpNode>();
    so->op = sel.compounds[i].op;
    so->left = init.root;
    so->right = rhs.root;
    so->columns = init.root->columns;
    init.root = so;
  }
  binding = saved;
  auto working = std::make_shared<WorkingTableNode>();
  working->name = cte.name;
  working->rows = std::make_shared<std::vector<Row>>();
  for (size_t i = 0; i < init.root->columns.size(); ++i) {
    Attribute a = init.root->columns[i];
    a.id = mint_attr();
    a.name = cte.columns.empty() ? init.names[i] : (i < cte.columns.size() ? cte.columns[i] : init.names[i]);
    a.nullable = true;
    working->columns.push_back(a);
  }
  binding.working = working;
  QueryPlan rec;
  try {
    rec = plan_core(rec_core, outer, nullptr, nullptr);
  } catch (...) {
    binding.working.reset();
    throw;
  }
  binding.working.reset();
  if (rec.root->columns.size() != working->columns.size())
    throw Error(StatusCode::kError, "SELECTs to the left and right of UNION do not have the same number of result columns");
  auto node = std::make_shared<RecursiveCteNode>();
  node->name = cte.name;
  node->union_all = sel.compounds.back().op == ast::CompoundOp::kUnionAll;
  node->initial = init.root;
  node->recursive = rec.root;
  node->working = working->rows;
  node->columns = working->columns;
  QueryPlan qp;
  qp.root = node;
  if (sel.limit || sel.offset) {
    auto l = std::make_shared<LimitNode>();
    l->input = node;
    Scope empty;
    empty.outer = outer;
    if (sel.limit) l->limit = bind_expr(*sel.limit, empty);
    if (sel.offset) l->offset = bind_expr(*sel.offset, empty);
    l->columns = node->columns;
    qp.root = l;
  }
  qp.names = init.names;
  return qp;
}

RelPtr Planner::sort_output(RelPtr node, const std::vector<std::string>& names,
                            const std::vector<ast::OrderingTerm>& order_by, const Scope* outer) {
  Scope out_scope;
  out_scope.outer = outer;
  for (size_t i = 0; i < node->columns.size(); ++i) {
    Scope::Column c;
    c.name = names[i];
    c.slot = static_cast<int>(i);
    c.attr = node->columns[i];
    out_scope.columns.push_back(c);
  }
  auto s = std::make_shared<SortNode>();
  s->input = node;
  s->columns = node->columns;
  s->keys = node->keys;
  for (auto& t : order_by) {
    SortKey sk;
    sk.desc = t.desc;
    sk.nulls_first = t.nulls != ast::OrderingTerm::Nulls::kLast;
    const ast::Expr* te = t.expr.get();
    if (te->kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal*>(te)->literal_kind == ast::LiteralKind::kInteger) {
      int n = std::atoi(static_cast<const ast::Literal*>(te)->text.c_str());
      if (n < 1 || n > static_cast<int>(names.size()))
        fail(StatusCode::kError, "ORDER BY term out of range - should be between 1 and " + std::to_string(names.size()), te->site);
      auto c = std::make_shared<ColumnScalar>(0, n - 1, 0);
      c->collation = node->columns[n - 1].collation;
      sk.expr = c;
    } else {
      sk.expr = bind_expr(*te, out_scope);
    }
    s->sort_keys.push_back(sk);
  }
  return s;
}

QueryPlan Planner::plan_select(const ast::Select& sel, const Scope* outer) {
  // WITH DEFAULTS is inert outside a write-through target (sql-select.md); WITH SCHEMA
  // changes name resolution and is not implemented yet, so it is refused, not ignored.
  if (!sel.schema_path.empty()) {
    throw Error(StatusCode::kUnsupported, "WITH SCHEMA search paths are not supported yet", sel.site);
  }
  for (const auto& leg : sel.compounds) {
    if (!leg.membership.empty()) {
      throw Error(StatusCode::kUnsupported, "Set-operation membership columns (EXISTS LEFT/RIGHT AS) are not supported yet",
                  leg.membership.front().site);
    }
  }
  const Scope* effective_outer = outer;
  struct CtePop {
    std::vector<std::map<std::string, std::shared_ptr<CteBinding>>>& stack;
    bool pushed;
    ~CtePop() { if (pushed) stack.pop_back(); }
  } cte_pop{cte_stack_, false};
  if (sel.with) {
    push_with(*sel.with);
    cte_pop.pushed = true;
  }

  bool compound = !sel.compounds.empty();
  RelPtr sorted;
  QueryPlan first = plan_core(sel.core, effective_outer, compound ? nullptr : &sel.order_by, &sorted);
  RelPtr node = first.root;
  std::vector<std::string> names = first.names;
  if (compound) {
    for (const auto& leg : sel.compounds) {
      const ast::CompoundOp op = leg.op;
      const ast::SelectCore& core = leg.core;
      QueryPlan rhs = plan_core(core, effective_outer, nullptr, nullptr);
      if (rhs.root->columns.size() != node->columns.size())
        throw Error(StatusCode::kError, "SELECTs to the left and right of " +
                                            std::string(op == ast::CompoundOp::kUnion ? "UNION" :
                                                        op == ast::CompoundOp::kUnionAll ? "UNION ALL" :
                                                        op == ast::CompoundOp::kIntersect ? "INTERSECT" :
                                                        op == ast::CompoundOp::kExcept ? "EXCEPT" : "DIFF") +
                                            " do not have the same number of result columns");
      auto s = std::make_shared<SetOpNode>();
      s->op = op;
      s->left = node;
      s->right = rhs.root;
      s->columns = node->columns;
      for (size_t i = 0; i < s->columns.size(); ++i) {
        s->columns[i].id = mint_attr();
        s->columns[i].name = names[i];
        if (s->columns[i].type != rhs.root->columns[i].type) s->columns[i].type = QRS_LT_ANY;
        s->columns[i].nullable = s->columns[i].nullable || rhs.root->columns[i].nullable;
      }
      node = s;
    }
    if (!sel.order_by.empty()) node = sort_output(node, names, sel.order_by, outer);
  }

  if (sel.limit || sel.offset) {
    auto l = std::make_shared<LimitNode>();
    l->input = node;
    Scope empty;
    empty.outer = outer;
    if (sel.limit) l->limit = bind_expr(*sel.limit, empty);
    if (sel.offset) l->offset = bind_expr(*sel.offset, empty);
    l->columns = node->columns;
    l->keys = node->keys;
    node = l;
  }
  dedupe_names(names);
  QueryPlan qp;
  qp.root = node;
  qp.names = names;
  return qp;
}

}  // namespace quereus
