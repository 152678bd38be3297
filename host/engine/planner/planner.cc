// Planner: AST → bound relational plan (see planner.h for its place in the pipeline).
#include "planner/planner.h"

#include <functional>
#include <algorithm>
#include <map>
#include <cctype>
#include <optional>
#include <set>

#include "common/status.h"
#include "common/limits.h"
#include "eval/exec_context.h"
#include "parser/ast_printer.h"
#include "planner/plan_reads.h"
#include "planner/planning_context.h"
#include "planner/scalar_rewrite.h"
#include "catalog/registry.h"
#include "planner/type_coercion.h"
#include "catalog/catalog.h"
#include "catalog/lens.h"
#include "types/logical_type.h"
#include "types/param_types.h"
#include "parser/ast_visit.h"
#include "parser/ast_walk.h"

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
  // Copies of refs a subquery reads through a select-list alias (`order by (select rn)`),
  // remapped with them.
  std::vector<std::shared_ptr<ColumnScalar>> lifted;
  // A grouped query's select-list aliases and the expressions they name: a window
  // specification may name a grouping key or an aggregate by its alias (sql-select.md 3.3),
  // as the lowest-precedence name.
  std::vector<std::pair<std::string, const ast::Expr*>> aliases;
  // A grouped query's select-list aggregates outside any window call (fingerprints): the
  // window runs above the aggregation, so an aggregate in a window specification or
  // argument must be one of them (window-functions.md, "Grouped queries").
  bool grouped = false;
  std::set<std::string> select_aggregates;
};

namespace {

// Build-time checks of a select's `WITH INVERSE (target = expr, …)` clauses
// (vu-inverses.md, "Authored inverses"), wherever the select appears: each target is a
// column of the FROM sources, put at most once across the select list; each expression
// reads the written view row through `new.<output column>` only (a subquery inside it
// reads its own sources freely, and `new.` there still names the view row); an aggregate
// result column cannot carry one.
void validate_inverses(const ast::SelectCore& core, const Scope& from, const std::vector<std::string>& outputs,
                       const std::function<bool(const ast::Expr&)>& aggregates) {
  std::map<std::string, std::string> put_by;  // base column (lower-case) → result column
  for (const ast::ResultColumn& rc : core.columns) {
    if (rc.inverse.empty() || !rc.expr) continue;
    const std::string col = Planner::column_name(rc);
    if (aggregates(*rc.expr))
      throw Error(StatusCode::kError, "WITH INVERSE cannot apply to an aggregate result column ('" + col + "')", rc.site);
    for (const ast::NamedExpr& put : rc.inverse) {
      bool found = std::any_of(from.columns.begin(), from.columns.end(),
                               [&](const Scope::Column& c) { return iequals(c.name, put.name); });
      if (!found)
        throw Error(StatusCode::kError,
                    "WITH INVERSE target '" + put.name + "' does not resolve to a column of the FROM sources (result column '" +
                        col + "')",
                    put.site);
      auto [at, fresh] = put_by.emplace(to_lower(put.name), col);
      if (!fresh)
        throw Error(StatusCode::kError,
                    "result columns '" + at->second + "' and '" + col + "' both author a WITH INVERSE put to base column '" +
                        put.name + "'",
                    put.site);
      if (!put.value) continue;
      auto is_image = [](const ast::ColumnRef& ref) { return ref.schema.empty() && iequals(ref.table, "new"); };
      // At the expression's own level every column reference is `new.<column>`.
      std::function<void(const ast::Expr&)> own_level = [&](const ast::Expr& e) {
        if (e.kind == ast::ExprKind::kColumn) {
          auto& ref = static_cast<const ast::ColumnRef&>(e);
          if (!is_image(ref))
            throw Error(StatusCode::kError,
                        "WITH INVERSE put to '" + put.name + "' references '" +
                            (ref.table.empty() ? ref.column : ref.table + "." + ref.column) +
                            "' without the NEW qualifier (the expression reads the written view row as new.<column>)",
                        e.site);
          return;
        }
        ast::for_each_child(e, [&](const ast::ExprPtr& x) { own_level(*x); }, [](const ast::Select&) {});
      };
      own_level(*put.value);
      // At any depth, `new.<column>` names an output column of this select.
      const ast::ColumnRef* stray = nullptr;
      ast::any_expr_deep(*put.value, [&](const ast::Expr& e) {
        if (e.kind != ast::ExprKind::kColumn) return false;
        auto& ref = static_cast<const ast::ColumnRef&>(e);
        if (!is_image(ref) ||
            std::any_of(outputs.begin(), outputs.end(), [&](const std::string& o) { return iequals(o, ref.column); }))
          return false;
        stray = &ref;
        return true;
      });
      if (stray)
        throw Error(StatusCode::kError,
                    "WITH INVERSE put to '" + put.name + "': 'new." + stray->column +
                        "' does not resolve to an output column of the select",
                    stray->site);
    }
  }
}

const std::set<std::string>& window_only_functions() {
  static const std::set<std::string> names = {"row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
                                              "ntile", "lag", "lead", "first_value", "last_value", "nth_value"};
  return names;
}

// Whether a window-only function takes `argc` arguments (the runtime reads them unchecked).
bool window_only_arity_ok(const std::string& name, int argc) {
  if (name == "ntile" || name == "first_value" || name == "last_value") return argc == 1;
  if (name == "nth_value") return argc == 2;
  if (name == "lag" || name == "lead") return argc >= 1 && argc <= 3;
  return argc == 0;  // row_number, rank, dense_rank, percent_rank, cume_dist
}

// The scope over a planned relation's output under `table` (and `schema`), its columns
// named by `names` when given (a FROM alias's or a view's column list), else as planned.
Scope output_scope(const QueryPlan& qp, const std::string& table, const std::string& schema,
                   const std::vector<std::string>& names) {
  Scope scope;
  for (size_t i = 0; i < qp.root->columns.size(); ++i) {
    Scope::Column c;
    c.table = table;
    c.schema = schema;
    c.name = names.empty() ? qp.names[i] : names[i];
    c.slot = static_cast<int>(i);
    c.attr = qp.root->columns[i];
    c.attr.name = c.name;
    scope.columns.push_back(c);
  }
  return scope;
}

[[noreturn]] void fail(StatusCode code, const std::string& msg, const SourceSite& site) {
  if (site.line > 0) throw Error(code, msg, site);
  throw Error(code, msg);
}

// A frame whose end lies before its start on every row is refused, as SQLite refuses it
// ("unsupported frame specification"): a start of UNBOUNDED FOLLOWING, an end of UNBOUNDED
// PRECEDING, CURRENT ROW … n PRECEDING, and n FOLLOWING … CURRENT ROW / m PRECEDING —
// including the short form `ROWS n FOLLOWING`, whose end is CURRENT ROW. (They gave every
// row an empty frame.) `n FOLLOWING … m FOLLOWING` and `n PRECEDING … m PRECEDING` stay:
// whether they are empty depends on the offsets, as in SQLite.
void check_frame_bounds(const ast::WindowFrame& frame, const SourceSite& site) {
  using BK = ast::FrameBound::Kind;
  auto spell = [](const ast::FrameBound& b) -> std::string {
    switch (b.kind) {
      case BK::kUnboundedPreceding: return "UNBOUNDED PRECEDING";
      case BK::kPreceding: return (b.offset ? expr_to_string(*b.offset) : "n") + " PRECEDING";
      case BK::kCurrentRow: return "CURRENT ROW";
      case BK::kFollowing: return (b.offset ? expr_to_string(*b.offset) : "n") + " FOLLOWING";
      case BK::kUnboundedFollowing: return "UNBOUNDED FOLLOWING";
    }
    return "?";
  };
  const BK start = frame.start.kind;
  const BK end = frame.has_end ? frame.end.kind : BK::kCurrentRow;
  std::string why;
  if (start == BK::kUnboundedFollowing)
    why = "a frame cannot start at UNBOUNDED FOLLOWING";
  else if (end == BK::kUnboundedPreceding)
    why = "a frame cannot end at UNBOUNDED PRECEDING";
  else if ((start == BK::kCurrentRow && end == BK::kPreceding) ||
           (start == BK::kFollowing && (end == BK::kPreceding || end == BK::kCurrentRow)))
    why = "a frame from " + spell(frame.start) + " to " +
          (frame.has_end ? spell(frame.end) : std::string("CURRENT ROW")) +
          " ends before it starts";
  if (why.empty()) return;
  if (!frame.has_end && start == BK::kFollowing)
    why += " (without BETWEEN the frame ends at CURRENT ROW; write BETWEEN n FOLLOWING AND …)";
  fail(StatusCode::kError, "unsupported frame specification: " + why, site);
}

// The announced type of arithmetic (docs: types-inference, "Binary operator result
// types"): the temporal operation table first, then numeric promotion, else ANY.
qrs_logical_type arith_type(ast::BinaryOp op, const ScalarExpr& l, const ScalarExpr& r) {
  using Op = ast::BinaryOp;
  qrs_logical_type a = l.type, b = r.type;
  bool instant_a = a == QRS_LT_DATE || a == QRS_LT_DATETIME, instant_b = b == QRS_LT_DATE || b == QRS_LT_DATETIME;
  if (op == Op::kSub && ((instant_a && instant_b) || (a == QRS_LT_TIME && b == QRS_LT_TIME))) return QRS_LT_TIMESPAN;
  if ((op == Op::kAdd || op == Op::kSub) && is_temporal_type(a) && b == QRS_LT_TIMESPAN) return a;
  if (op == Op::kAdd && a == QRS_LT_TIMESPAN && is_temporal_type(b)) return b;
  if ((op == Op::kMul || op == Op::kDiv) && a == QRS_LT_TIMESPAN && is_numeric_type(b)) return QRS_LT_TIMESPAN;
  if (op == Op::kMul && is_numeric_type(a) && b == QRS_LT_TIMESPAN) return QRS_LT_TIMESPAN;
  if (op == Op::kDiv && a == QRS_LT_TIMESPAN && b == QRS_LT_TIMESPAN) return QRS_LT_REAL;
  if (!is_numeric_type(a) || !is_numeric_type(b)) return QRS_LT_ANY;
  if (a == QRS_LT_INTEGER && b == QRS_LT_INTEGER) return op == Op::kDiv ? QRS_LT_NUMERIC : QRS_LT_INTEGER;
  if (a == QRS_LT_REAL && b == QRS_LT_REAL) return QRS_LT_REAL;
  return QRS_LT_NUMERIC;
}

// A comparison of two values (not a pattern match): its operands are coerced to
// comparable types at plan time.
bool compares_values(ast::BinaryOp op) {
  using Op = ast::BinaryOp;
  switch (op) {
    case Op::kEq: case Op::kEqEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt:
    case Op::kGe: case Op::kIs: case Op::kIsNot:
      return true;
    default: return false;
  }
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

// `AS t(a, b)` must name every column of the source it renames.
void check_alias_columns(const ast::TableSource& src, size_t width) {
  if (src.alias_columns.empty() || src.alias_columns.size() == width) return;
  fail(StatusCode::kError, "'" + src.alias + "' has " + std::to_string(width) + " columns but " +
                               std::to_string(src.alias_columns.size()) + " column names were given",
       src.site);
}

// The side of each `EXISTS [LEFT|RIGHT] AS name` flag of a join (sql-select.md, "Existence
// columns on outer joins"): only a null-extended side can be flagged, so INNER / CROSS
// joins and the preserved side of LEFT / RIGHT are rejected, and FULL needs the side.
std::vector<JoinNode::Side> existence_sides(const ast::TableSource& join) {
  using Side = ast::ExistenceColumn::Side;
  using K = ast::JoinKind;
  std::vector<JoinNode::Side> sides;
  for (const ast::ExistenceColumn& ec : join.exists_columns) {
    const std::string flag = "Existence column '" + ec.name + "'";
    switch (join.join) {
      case K::kInner: case K::kCross:
        fail(StatusCode::kError, flag + " requires an outer join: an " +
                                     std::string(join.join == K::kInner ? "INNER" : "CROSS") +
                                     " join null-extends neither side, so the flag would always be true",
             ec.site);
      case K::kFull:
        if (ec.side == Side::kDefault)
          fail(StatusCode::kError, flag + " on a FULL join must name its side (EXISTS LEFT AS or EXISTS RIGHT AS)",
               ec.site);
        break;
      case K::kLeft:
        if (ec.side == Side::kLeft)
          fail(StatusCode::kError, flag + " names the preserved (left) side of a LEFT join; only the right side is null-extended",
               ec.site);
        break;
      case K::kRight:
        if (ec.side == Side::kRight)
          fail(StatusCode::kError, flag + " names the preserved (right) side of a RIGHT join; only the left side is null-extended",
               ec.site);
        break;
    }
    bool left = ec.side == Side::kLeft || (ec.side == Side::kDefault && join.join == K::kRight);
    sides.push_back(left ? JoinNode::Side::kLeft : JoinNode::Side::kRight);
  }
  return sides;
}

[[noreturn]] void fail_ungrouped(const Scope& scope, const std::string& column, const SourceSite& site) {
  std::string msg = "Column '" + column + "' must appear in the GROUP BY clause or be used in an aggregate function";
  if (scope.implicit_group) msg += " (a query without GROUP BY cannot mix aggregate and non-aggregate columns)";
  msg += "; add it to the GROUP BY, or read it through an aggregate (e.g. min(" + column + "))";
  fail(StatusCode::kError, msg, site);
}

// Identifies an expression when matching GROUP BY keys and repeated aggregates:
// identifiers compare case-insensitively, quoted literals exactly.
// The statement printer's text: the names printer drops parentheses the grammar needs,
// so two different trees (`x * (y % z)`, `x * y % z`) would print alike.
std::string expr_fingerprint(const ast::Expr& e) {
  std::string s = expr_to_sql(e);
  bool in_literal = false;
  for (char& ch : s) {
    if (ch == '\'') in_literal = !in_literal;
    else if (!in_literal) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return s;
}

bool same_value(const ScalarPtr& a, const ScalarPtr& b) {
  if (a == b) return true;
  auto* ca = dynamic_cast<const ColumnScalar*>(a.get());
  auto* cb = dynamic_cast<const ColumnScalar*>(b.get());
  return ca && cb && ca->level == cb->level && ca->slot == cb->slot;
}

// `e`, bound at some level, read from a subquery `shift` levels further in: every column
// reference moves out by `shift`, and a window call's placeholder is recorded in
// `win->lifted` to be remapped with the others. Null when `e` holds a correlated subquery
// (its body's references would need moving too) or a placeholder with no `win` to record
// it in, so the alias stays out of reach there.
ScalarPtr lift_levels(const ScalarPtr& e, int shift, WindowBinding* win) {
  return rewrite_columns(e, [&](const ColumnScalar& c, const ScalarPtr&) -> ScalarPtr {
    auto n = copy_column(c);
    if (n->level == 0 && n->slot >= WindowBinding::kPlaceholderBase) {
      if (!win) return nullptr;
      win->lifted.push_back(n);
    }
    n->level += shift;
    return n;
  });
}

// The select-list alias `name` at this level, or null. Aliases of different values collide.
ScalarPtr find_alias(const Scope& scope, const std::string& name, const SourceSite& site) {
  ScalarPtr found;
  for (auto& a : scope.aliases) {
    if (!iequals(a.name, name)) continue;
    if (found && !same_value(found, a.expr)) fail(StatusCode::kError, "ambiguous column name: " + name, site);
    found = a.expr;
  }
  return found;
}

// A literal's value and announced type.
ScalarPtr bind_literal(const ast::Literal& l) {
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
    case ast::LiteralKind::kReal: {
      // The parser leaves a decimal integer too big for int64 as kReal; it is an
      // exact (big) INTEGER all the same.
      bool digits = !l.text.empty() && l.text.find_first_not_of("0123456789") == std::string::npos;
      v = digits ? parse_number(l.text, false) : Value::Real(std::strtod(l.text.c_str(), nullptr));
      t = v.is_integer() ? QRS_LT_INTEGER : QRS_LT_REAL;
      break;
    }
    case ast::LiteralKind::kString: v = Value::Text(l.text); t = QRS_LT_TEXT; break;
    case ast::LiteralKind::kBlob: v = Value::Blob(l.text); t = QRS_LT_BLOB; break;
    case ast::LiteralKind::kTrue: v = Value::Boolean(true); t = QRS_LT_BOOLEAN; break;
    case ast::LiteralKind::kFalse: v = Value::Boolean(false); t = QRS_LT_BOOLEAN; break;
  }
  auto s = std::make_shared<LiteralScalar>(std::move(v));
  s->type = t;
  return s;
}

// A column reference: the innermost scope that names it (a column, else a select-list
// alias), marking the scopes in between correlated.
ScalarPtr bind_column_ref(const ast::ColumnRef& c, const Scope& scope) {
  const ast::Expr& e = c;
  int level = 0;
  for (const Scope* s = &scope; s; s = s->outer, ++level) {
    const Scope::Column* found = nullptr;
    const Scope::Column* ungrouped = nullptr;
    for (auto& col : s->columns) {
      // A quoted "t.c" is the qualified name of t.c (sql-select.md §3.4).
      bool dotted = c.table.empty() && !col.table.empty() && iequals(col.table + "." + col.name, c.column);
      if (!dotted && !iequals(col.name, c.column)) continue;
      if (!c.table.empty() && !iequals(col.table, c.table)) continue;
      if (!c.schema.empty() && !iequals(col.schema, c.schema)) continue;
      if (col.ungrouped) {
        ungrouped = &col;
        continue;
      }
      if (found) fail(StatusCode::kError, "ambiguous column name: " + c.column, e.site);
      found = &col;
    }
    ScalarPtr alias;
    if (!found && c.table.empty() && c.schema.empty()) alias = find_alias(*s, c.column, e.site);
    // From a subquery (`order by (select x)`) an alias is its expression read from the
    // enclosing row, as SQLite resolves it; it was reachable only when it was a bare column.
    if (alias && level > 0) alias = lift_levels(alias, level, s->win);
    if (!found && !alias && ungrouped) fail_ungrouped(*s, c.column, e.site);
    if (!found && !alias) continue;
    if (found && s->used) s->used->insert(found->slot);
    if (found && s->qualified_self && !c.table.empty())
      for (const Scope* t = &scope; t && t != s; t = t->outer)
        for (auto& col : t->columns)
          if (iequals(col.name, c.column))
            fail(StatusCode::kError, c.table + "." + c.column + " isn't a column", e.site);
    if (level > 0)
      for (const Scope* t = &scope; t; t = t->outer) {
        t->correlated = true;
        if (t == s) break;
      }
    if (alias) return alias;
    auto r = std::make_shared<ColumnScalar>(level, found->slot, found->attr.id);
    r->type = found->attr.type;
    r->set_collation(found->attr.collation, found->attr.collation_source);
    return r;
  }
  std::string full = c.table.empty() ? c.column : c.table + "." + c.column;
  if (e.site.line > 0) throw UnknownColumnError(StatusCode::kError, "Column not found: " + full, e.site);
  throw UnknownColumnError(StatusCode::kError, "Column not found: " + full);
}

// Whether `e` holds a subquery (which may write: it is not dropped unevaluated).
bool holds_subquery(const ScalarPtr& e) {
  if (!e) return false;
  if (e->kind == ScalarKind::kSubquery || e->kind == ScalarKind::kExists || e->kind == ScalarKind::kInSubquery)
    return true;
  for (const ScalarPtr* o : e->operands())
    if (holds_subquery(*o)) return true;
  return false;
}

// The part of an EXISTS subquery's plan that decides whether it has a row. EXISTS reads
// no column, so a select list, ORDER BY, DISTINCT or window functions over the rows change
// nothing, nor does a GROUP BY without HAVING (a group exists exactly when a row does).
// Without them the subquery stops at its first row, where a sort, a window or a grouping
// read every row first, for every outer row (difftest seeds 554149177, 554150252).
// Nodes whose expressions hold a subquery stay.
RelPtr existence_part(RelPtr n) {
  for (;;) {
    RelPtr next;
    switch (n->kind) {
      case RelKind::kProject: {
        auto& p = static_cast<ProjectNode&>(*n);
        if (std::none_of(p.exprs.begin(), p.exprs.end(), holds_subquery)) next = p.input;
        break;
      }
      case RelKind::kSort: {
        auto& o = static_cast<SortNode&>(*n);
        auto reads_subquery = [](const SortKey& k) { return holds_subquery(k.expr); };
        if (std::none_of(o.sort_keys.begin(), o.sort_keys.end(), reads_subquery)) next = o.input;
        break;
      }
      case RelKind::kDistinct: next = static_cast<DistinctNode&>(*n).input; break;
      case RelKind::kWindow: {
        auto& w = static_cast<WindowNode&>(*n);
        bool plain = true;
        for (const WindowCall& c : w.calls) {
          for (const auto& a : c.args) plain = plain && !holds_subquery(a);
          for (const auto& x : c.partition_by) plain = plain && !holds_subquery(x);
          for (const auto& k : c.order_by) plain = plain && !holds_subquery(k.expr);
          plain = plain && !holds_subquery(c.start_offset) && !holds_subquery(c.end_offset);
        }
        if (plain) next = w.input;
        break;
      }
      case RelKind::kAggregate: {
        auto& a = static_cast<AggregateNode&>(*n);
        bool plain = !a.group_by.empty() && std::none_of(a.group_by.begin(), a.group_by.end(), holds_subquery);
        for (const AggregateCall& c : a.aggs)
          plain = plain && std::none_of(c.args.begin(), c.args.end(), holds_subquery);
        if (plain) next = a.input;
        break;
      }
      default: break;
    }
    if (!next) return n;
    n = std::move(next);
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

// Entered once per view or CTE body planned (see kMaxExpansions in planner.h).
class Planner::ExpansionGuard {
 public:
  ExpansionGuard(Planner& p, const std::string& what, const SourceSite& site) : p_(p) {
    const int64_t max_depth = p_.db_.limits().max_view_depth;
    if (p_.expansion_depth_ >= max_depth)
      fail(StatusCode::kTooBig, "Views and common table expressions nest too deeply at " + what + " (maximum depth " +
                                    std::to_string(max_depth) + ", the limit max_view_depth)", site);
    if (++p_.expansions_ > kMaxExpansions)
      fail(StatusCode::kTooBig, "Statement expands views and common table expressions more than " +
                                    std::to_string(kMaxExpansions) + " times (at " + what + ")", site);
    ++p_.expansion_depth_;
  }
  ~ExpansionGuard() { --p_.expansion_depth_; }
  ExpansionGuard(const ExpansionGuard&) = delete;
  ExpansionGuard& operator=(const ExpansionGuard&) = delete;

 private:
  Planner& p_;
};

std::string Planner::column_name(const ast::ResultColumn& rc) {
  if (!rc.alias.empty()) return rc.alias;
  if (rc.expr && rc.expr->kind == ast::ExprKind::kColumn)
    return static_cast<const ast::ColumnRef&>(*rc.expr).column;
  return rc.expr ? expr_to_string(*rc.expr) : "*";
}

const Collation* Planner::resolve_collation(std::string_view name) const {
  auto c = db_.registry().find_collation(name);
  // The reference's query-time wording (sql-select.md 4.4) beside the DDL-time one.
  if (!c)
    throw Error(StatusCode::kError, "Unknown collation: " + std::string(name) + " (no such collation sequence: " +
                                        std::string(name) + ")");
  return c.get();
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
    c.attr.collation_source = ts.columns[i].collation_declared ? CollationSource::kDeclared : CollationSource::kDefault;
    c.attr.nullable = !ts.columns[i].not_null;
    s.columns.push_back(c);
  }
  return s;
}

// An aggregate call: a registered aggregate of that arity, not used as a window function.
bool Planner::is_aggregate_call(const ast::FunctionCall& f) const {
  return !f.over && db_.registry().find_aggregate(to_lower(f.name), static_cast<int>(f.args.size()));
}

// Not looking inside subqueries: an aggregate there belongs to the subquery.
bool Planner::contains_aggregate(const ast::Expr& e) const {
  if (e.kind == ast::ExprKind::kFunction && is_aggregate_call(static_cast<const ast::FunctionCall&>(e))) return true;
  bool found = false;
  ast::for_each_child_expr(e, [&](const ast::ExprPtr& x) { found = found || contains_aggregate(*x); });
  return found;
}

// Calls on(call) for each aggregate call in `e`, not looking inside subqueries (theirs) nor
// inside an aggregate's arguments; a window call's arguments and specification are
// searched only when `into_windows`.
void Planner::visit_aggregates(const ast::Expr& e, bool into_windows,
                               const std::function<void(const ast::FunctionCall&)>& on) const {
  if (e.kind == ast::ExprKind::kFunction) {
    const auto& f = static_cast<const ast::FunctionCall&>(e);
    if (is_aggregate_call(f)) return on(f);
    if (f.over && !into_windows) return;
  }
  ast::for_each_child_expr(e, [&](const ast::ExprPtr& x) { visit_aggregates(*x, into_windows, on); });
}

// ---------------------------------------------------------------- expressions

// An aggregate call computed by the aggregation `ab`, read `level` query levels up.
ScalarPtr Planner::bind_aggregate(const ast::FunctionCall& f, AggBinding& ab, int level) {
  std::string text = expr_fingerprint(f);
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
  auto c = std::make_shared<ColumnScalar>(level, slot, 0);
  std::string lname = to_lower(f.name);
  const AggregateFunction* fn = ab.node->aggs[slot - ab.group_exprs.size()].fn;
  if (fn && fn->result_type != QRS_LT_ANY) c->type = static_cast<qrs_logical_type>(fn->result_type);
  else if (lname == "count") c->type = QRS_LT_INTEGER;
  else if (lname == "min" || lname == "max") {
    auto& first = ab.node->aggs[slot - ab.group_exprs.size()];
    if (!first.args.empty()) {
      c->type = first.args[0]->type;
      c->set_collation(first.args[0]->collation, first.args[0]->collation_source());
    }
  }
  return c;
}

ScalarPtr Planner::bind_expr(const ast::Expr& e, const Scope& scope) {
  using K = ast::ExprKind;
  if (scope.agg) {
    AggBinding& ab = *scope.agg;
    std::string text = expr_fingerprint(e);
    for (size_t i = 0; i < ab.group_texts.size(); ++i)
      if (ab.group_texts[i] == text) {
        auto c = std::make_shared<ColumnScalar>(0, static_cast<int>(i), 0);
        c->type = ab.group_exprs[i]->type;
        c->set_collation(ab.group_exprs[i]->collation, ab.group_exprs[i]->collation_source());
        return c;
      }
    if (e.kind == K::kFunction) {
      auto& f = static_cast<const ast::FunctionCall&>(e);
      if (is_aggregate_call(f)) return bind_aggregate(f, ab, 0);
    }
  }
  if (e.kind != K::kColumn && e.kind != K::kLiteral)
    if (ScalarPtr key = bind_outer_group_key(e, scope)) return key;

  switch (e.kind) {
    case K::kLiteral: return bind_literal(static_cast<const ast::Literal&>(e));
    case K::kColumn: return bind_column_ref(static_cast<const ast::ColumnRef&>(e), scope);
    case K::kParameter: return bind_parameter(static_cast<const ast::Parameter&>(e));
    case K::kUnary: {
      auto& u = static_cast<const ast::UnaryExpr&>(e);
      auto operand = bind_expr(*u.operand, scope);
      auto s = std::make_shared<UnaryScalar>(u.op, operand);
      s->type = u.op == ast::UnaryOp::kNot ? QRS_LT_BOOLEAN
                : u.op == ast::UnaryOp::kBitNot ? QRS_LT_INTEGER : operand->type;
      return s;
    }
    case K::kBinary: return bind_binary(static_cast<const ast::BinaryExpr&>(e), scope);
    case K::kFunction: return bind_function(static_cast<const ast::FunctionCall&>(e), scope);
    case K::kCast: {
      auto& c = static_cast<const ast::CastExpr&>(e);
      auto s = std::make_shared<CastScalar>();
      s->operand = bind_expr(*c.operand, scope);
      s->target = logical_type_from_name(c.type_name);
      s->type = s->target;
      if (s->target == QRS_LT_TEXT) s->set_collation(s->operand->collation, s->operand->collation_source());
      return s;
    }
    case K::kCollate: {
      auto& c = static_cast<const ast::CollateExpr&>(e);
      auto inner = bind_expr(*c.operand, scope);
      const Collation* coll = resolve_collation(c.collation);
      auto s = std::make_shared<CollateScalar>();
      s->operand = inner;
      s->type = inner->type;
      s->collation = coll;
      s->explicit_collation = true;
      return s;
    }
    case K::kCase: return bind_case(static_cast<const ast::CaseExpr&>(e), scope);
    case K::kBetween: {
      auto& b = static_cast<const ast::BetweenExpr&>(e);
      auto s = std::make_shared<BetweenScalar>();
      s->negated = b.negated;
      s->operand = bind_expr(*b.operand, scope);
      s->low = bind_expr(*b.low, scope);
      s->high = bind_expr(*b.high, scope);
      s->low_collation = comparison_collation(*s->operand, *s->low, e.site);
      s->high_collation = comparison_collation(*s->operand, *s->high, e.site);
      s->duration_order = s->operand->type == QRS_LT_TIMESPAN || s->low->type == QRS_LT_TIMESPAN ||
                          s->high->type == QRS_LT_TIMESPAN;
      coerce_comparison_set(s->operand, {&s->low, &s->high});
      s->type = QRS_LT_BOOLEAN;
      return s;
    }
    case K::kIn: return bind_in(static_cast<const ast::InExpr&>(e), scope);
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

// A parameter, typed by its declared type when the statement declares one.
ScalarPtr Planner::bind_parameter(const ast::Parameter& p) {
  auto s = std::make_shared<ParamScalar>(p.index);
  if (p.index == 0) s->name = p.name;
  // A declared parameter type types the expression (types-parameters.md); the value
  // is checked against it when the statement runs.
  if (const ParamTypes* types = param_types_) {
    std::string key = p.name;
    if (!key.empty() && (key[0] == ':' || key[0] == '$' || key[0] == '@')) key.erase(0, 1);
    if (p.index > 0) {
      if (auto it = types->positional.find(p.index); it != types->positional.end()) s->type = it->second.type;
    } else if (auto it = types->named.find(key); it != types->named.end()) {
      s->type = it->second.type;
    }
  }
  return s;
}

// A binary operator: comparisons coerce their operands and pick a collation; the others
// announce their result type.
ScalarPtr Planner::bind_binary(const ast::BinaryExpr& b, const Scope& scope) {
  const ast::Expr& e = b;
  auto l = bind_expr(*b.left, scope);
  auto r = bind_expr(*b.right, scope);
  auto s = std::make_shared<BinaryScalar>(b.op, l, r);
  if (b.escape) s->escape = bind_expr(*b.escape, scope);
  using Op = ast::BinaryOp;
  if (is_comparison(b.op) || b.op == Op::kAnd || b.op == Op::kOr || b.op == Op::kXor) {
    s->type = QRS_LT_BOOLEAN;
    if (is_comparison(b.op)) {
      s->compare_collation = comparison_collation(*l, *r, e.site);
      if (compares_values(b.op)) {
        coerce_comparison(s->left, s->right);
        s->duration_order = l->type == QRS_LT_TIMESPAN || r->type == QRS_LT_TIMESPAN;
      }
    }
  } else if (b.op == Op::kConcat) {
    s->type = QRS_LT_TEXT;
    CollationBid bid = combine_collation_bids(collation_bid(*l), collation_bid(*r));
    s->set_collation(bid.collation, bid.source);
  } else if (b.op == Op::kBitAnd || b.op == Op::kBitOr || b.op == Op::kShl || b.op == Op::kShr) {
    s->type = QRS_LT_INTEGER;
  } else {
    s->type = arith_type(b.op, *l, *r);
  }
  return s;
}

// CASE: a simple CASE compares like `base = when`; the result merges its branches'
// collations and types.
ScalarPtr Planner::bind_case(const ast::CaseExpr& c, const Scope& scope) {
  const ast::Expr& e = c;
  auto s = std::make_shared<CaseScalar>();
  if (c.base) s->base = bind_expr(*c.base, scope);
  for (auto& [w, t] : c.whens) s->whens.emplace_back(bind_expr(*w, scope), bind_expr(*t, scope));
  if (c.else_expr) s->else_expr = bind_expr(*c.else_expr, scope);
  if (s->base) {
    // Each WHEN matches exactly as `base = when` would: its own collation.
    for (auto& when : s->whens) {
      const Collation* c = comparison_collation(*s->base, *when.first, e.site);
      // A TIMESPAN on either side matches by elapsed time, as `=` does.
      if (s->base->type == QRS_LT_TIMESPAN || when.first->type == QRS_LT_TIMESPAN) c = &Collation::duration();
      s->when_collations.push_back(c);
    }
    std::vector<ScalarPtr*> values;
    for (auto& when : s->whens) values.push_back(&when.first);
    coerce_comparison_set(s->base, values);
  }
  // The result passes on its branches' merged collation.
  CollationBid result;
  for (auto& when : s->whens) result = combine_collation_bids(result, collation_bid(*when.second));
  if (s->else_expr) result = combine_collation_bids(result, collation_bid(*s->else_expr));
  s->set_collation(result.collation, result.source);
  qrs_logical_type t = QRS_LT_ANY;
  bool first = true;
  for (auto& [w, then] : s->whens) {
    if (first) { t = then->type; first = false; }
    else if (then->type != t) t = QRS_LT_ANY;
  }
  s->type = t;
  return s;
}

// IN over a subquery or a list; a list's membership test runs under one collation.
ScalarPtr Planner::bind_in(const ast::InExpr& in, const Scope& scope) {
  const ast::Expr& e = in;
  auto operand = bind_expr(*in.operand, scope);
  if (in.subquery) {
    auto s = bind_subquery(*in.subquery, scope, ScalarKind::kInSubquery, operand, in.negated);
    return s;
  }
  auto s = std::make_shared<InListScalar>();
  s->negated = in.negated;
  s->operand = operand;
  // The list's bids merge first; the whole membership test runs under one collation.
  CollationBid list_bid;
  for (auto& x : in.list) {
    s->list.push_back(bind_expr(*x, scope));
    list_bid = merge_collation_bids(list_bid, collation_bid(*s->list.back()), e.site);
  }
  s->collation = bid_collation(merge_collation_bids(collation_bid(*operand), list_bid, e.site));
  s->duration_order = operand->type == QRS_LT_TIMESPAN;
  for (auto& x : s->list) s->duration_order = s->duration_order || x->type == QRS_LT_TIMESPAN;
  std::vector<ScalarPtr*> values;
  for (auto& x : s->list) values.push_back(&x);
  coerce_comparison_set(s->operand, values);
  s->type = QRS_LT_BOOLEAN;
  return s;
}

ScalarPtr Planner::bind_subquery(const ast::Select& sel, const Scope& scope, ScalarKind kind,
                                 ScalarPtr operand, bool negated) {
  // `agg` stays set: only a level's own expressions check it, and the subquery may read
  // this level's aggregates (bind_function).
  Scope inner_outer = scope;
  inner_outer.correlated = false;
  // A subquery sees the current scope's columns as level 1.
  QueryPlan qp = plan_select(sel, &inner_outer);
  if (sel.dml && kind == ScalarKind::kSubquery) {
    // A DML scalar subquery writes every row and yields the first RETURNING row.
    auto first = std::make_shared<LimitNode>();
    first->input = qp.root;
    first->limit = std::make_shared<LiteralScalar>(Value::Integer(1));
    first->columns = qp.root->columns;
    qp.root = first;
  }
  if (kind == ScalarKind::kExists && !sel.dml) qp.root = existence_part(qp.root);
  auto s = std::make_shared<SubqueryScalar>(kind);
  s->plan = db_.optimize_plan(qp.root);
  // Correlated when a reference inside reached past this level: bind_column_ref marks
  // every scope from the reference up to the one that names it, so an enclosing subquery
  // is correlated only when a reference reaches past it too. (Marking every enclosing
  // scope here made `x in (select … where not exists (… reads the IN's own FROM …))` a
  // correlated IN, run again for every outer row: difftest seed 554162338.)
  s->correlated = inner_outer.correlated;
  // One whose rows may differ run to run (random(), a clock read) and that writes nothing
  // runs for each evaluation too: its rows are not kept across rows (optimizer-const.md 7;
  // OPT-002, the reference's subquery cache refuses an inner that is not functional). A
  // write (`unknown` to the walk) keeps its run-once replay (sql-select.md "Run-once +
  // full-drain").
  if (!s->correlated && !sel.dml) {
    PlanReads reads = plan_reads(*s->plan);
    if (reads.volatile_rows && !reads.unknown) s->correlated = true;
  }
  s->negated = negated;
  s->operand = operand;
  if (kind == ScalarKind::kSubquery) {
    if (qp.root->columns.size() != 1) throw Error(StatusCode::kError, "Scalar subquery must return exactly one column");
    s->type = qp.root->columns[0].type;
    s->set_collation(qp.root->columns[0].collation, qp.root->columns[0].collation_source);
  } else {
    s->type = QRS_LT_BOOLEAN;
    if (kind == ScalarKind::kInSubquery) {
      if (qp.root->columns.size() != 1) throw Error(StatusCode::kError, "IN subquery must return exactly one column");
      // The subquery bids with its output column's collation.
      const Attribute& col = qp.root->columns[0];
      s->collation = bid_collation(merge_collation_bids(collation_bid(*operand),
                                                        collation_bid(col.collation, col.collation_source), sel.site));
      s->duration_order = operand->type == QRS_LT_TIMESPAN || col.type == QRS_LT_TIMESPAN;
      s->probe_cast = comparison_cast(operand->type, qp.root->columns[0].type);
      s->value_cast = comparison_cast(qp.root->columns[0].type, operand->type);
    }
  }
  return s;
}

namespace {

// Whether every column reference in `e` names a column of `target` rather than of a scope
// nearer to `scope` (which would capture it). An expression holding a subquery is not
// matched at all.
bool references_reach(const ast::Expr& e, const Scope& scope, const Scope* target) {
  bool ok = true;
  std::function<void(const ast::Expr&)> walk = [&](const ast::Expr& x) {
    if (!ok) return;
    if (x.kind == ast::ExprKind::kColumn) {
      auto& c = static_cast<const ast::ColumnRef&>(x);
      for (const Scope* s = &scope; s && s != target; s = s->outer)
        for (auto& col : s->columns)
          if (iequals(col.name, c.column) && (c.table.empty() || iequals(col.table, c.table))) ok = false;
      return;
    }
    ast::for_each_child(x, [&](const ast::ExprPtr& child) { walk(*child); }, [&](const ast::Select&) { ok = false; });
  };
  walk(e);
  return ok;
}

}  // namespace

// A non-bare GROUP BY key of an enclosing grouped query, named from a correlated subquery
// in its select list or HAVING: the key's value, as the same expression at the grouped
// level is (sql-select.md "GROUP BY Clause": a non-bare key "is recognised elsewhere in
// the query by matching the whole expression"). Null when no outer key matches.
ScalarPtr Planner::bind_outer_group_key(const ast::Expr& e, const Scope& scope) {
  std::string text;
  int level = 1;
  for (const Scope* s = scope.outer; s; s = s->outer, ++level) {
    if (!s->agg) continue;
    if (text.empty()) text = expr_fingerprint(e);
    const AggBinding& ab = *s->agg;
    for (size_t i = 0; i < ab.group_texts.size(); ++i) {
      if (ab.group_texts[i] != text || !references_reach(e, scope, s)) continue;
      for (const Scope* t = &scope; t != s->outer; t = t->outer) t->correlated = true;
      auto c = std::make_shared<ColumnScalar>(level, static_cast<int>(i), 0);
      c->type = ab.group_exprs[i]->type;
      c->set_collation(ab.group_exprs[i]->collation, ab.group_exprs[i]->collation_source());
      return c;
    }
  }
  return nullptr;
}

ScalarPtr Planner::bind_function(const ast::FunctionCall& f, const Scope& scope) {
  std::string name = to_lower(f.name);
  int argc = static_cast<int>(f.args.size());
  if (f.over) return bind_window(f, scope);
  if (window_only_functions().count(name))
    fail(StatusCode::kError, name + "() may only be used as a window function (with OVER)", f.site);
  const ScalarFunction* fn = db_.registry().find_scalar(name, argc);
  if (!fn) {
    if (db_.registry().find_aggregate(name, argc)) {
      // Where this level cannot aggregate, the call may belong to an enclosing grouped
      // query (a correlated subquery in its HAVING or select list reading its aggregate).
      int level = 0;
      for (const Scope* s = &scope; s; s = s->outer, ++level) {
        if (!s->agg || level == 0) continue;
        for (const Scope* t = &scope; t != s->outer; t = t->outer) t->correlated = true;
        return bind_aggregate(f, *s->agg, level);
      }
      fail(StatusCode::kError, "Aggregate function " + name + " not allowed in this context", f.site);
    }
    // SQLite's scalar min / max of several arguments are least / greatest here.
    const std::string hint = (name == "min" || name == "max") && argc >= 2
                                 ? std::string(" (min and max take one argument, as aggregates; the scalar form is ") +
                                       (name == "min" ? "least" : "greatest") + "(…))"
                                 : "";
    fail(StatusCode::kError, "Function not found: " + name + "/" + std::to_string(argc) + hint, f.site);
  }
  auto s = std::make_shared<FunctionScalar>();
  s->fn = fn;
  for (auto& a : f.args) s->args.push_back(bind_expr(*a, scope));
  std::vector<qrs_logical_type> arg_types;
  for (auto& a : s->args) arg_types.push_back(a->type);
  if (fn->accepts && !fn->accepts(arg_types))
    fail(StatusCode::kError, "Invalid argument types for function " + name, f.site);
  s->type = fn->infer_type ? fn->infer_type(arg_types) : fn->return_type;
  if (fn->picks_from >= 0) {
    // The common type of the arguments it may return; a NULL literal has no say
    // (`coalesce(null, 5)` is INTEGER, `greatest(int_col, null)` stays INTEGER).
    std::optional<qrs_logical_type> common;
    for (size_t i = static_cast<size_t>(fn->picks_from); i < s->args.size(); ++i) {
      const ScalarExpr& a = *s->args[i];
      if (a.kind == ScalarKind::kLiteral && static_cast<const LiteralScalar&>(a).value.is_null()) continue;
      common = common ? merge_branch_types(*common, a.type) : a.type;
    }
    s->type = common.value_or(QRS_LT_ANY);
  }
  // Text made from text keeps its first argument's collation; a function returning one
  // of its arguments verbatim keeps the first collation among them.
  if (s->type == QRS_LT_TEXT && !s->args.empty() && s->args[0]->type == QRS_LT_TEXT)
    s->set_collation(s->args[0]->collation, s->args[0]->collation_source());
  if (fn->infer_type || fn->picks_from >= 0)
    for (size_t i = static_cast<size_t>(std::max(fn->picks_from, 0)); i < s->args.size(); ++i) {
      const ScalarExpr& a = *s->args[i];
      if (a.collation && a.type != QRS_LT_BOOLEAN) { s->set_collation(a.collation, a.collation_source()); break; }
    }
  if (fn->compare_call) {
    s->key_casts = comparison_group_casts(s->args);
    CollationBid bid;
    for (auto& a : s->args) bid = merge_collation_bids(bid, collation_bid(*a), f.site);
    s->compare_collation = bid_collation(bid);
    // nullif / greatest / least over a TIMESPAN compare by elapsed time, as `=` and ORDER
    // BY do (types-ordering.md, "Semantic ordering").
    for (auto& a : s->args)
      if (a->type == QRS_LT_TIMESPAN) s->compare_collation = &Collation::duration();
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
  } else if (!window_only_arity_ok(call.name, argc)) {
    fail(StatusCode::kError, "Function not found: " + call.name + "/" + std::to_string(argc) + " (window)", f.site);
  }
  const ast::WindowSpec& w = *f.over;
  if (wb.grouped) {
    auto check = [&](const ast::Expr& e, const char* where) {
      visit_aggregates(e, true, [&](const ast::FunctionCall& agg) {
        if (!wb.select_aggregates.count(expr_fingerprint(agg)))
          fail(StatusCode::kError,
               "Aggregate function " + to_lower(agg.name) + " in a window function's " + where +
                   " is only supported when the same aggregate also appears in the SELECT list",
               agg.site);
      });
    };
    for (auto& p : w.partition_by) check(*p, "PARTITION BY");
    for (auto& o : w.order_by) check(*o.expr, "ORDER BY");
    for (auto& a : f.args) check(*a, "arguments");
  }
  for (auto& a : f.args) call.args.push_back(bind_expr(*a, inner));
  // A bare name that binds nothing else (or only an ungrouped column) may be a select-list
  // alias of a grouped query.
  auto bind_spec = [&](const ast::Expr& e) -> ScalarPtr {
    const ast::Expr* aliased = nullptr;
    if (e.kind == ast::ExprKind::kColumn && static_cast<const ast::ColumnRef&>(e).table.empty())
      for (auto& [name, expr] : wb.aliases)
        if (iequals(name, static_cast<const ast::ColumnRef&>(e).column) && !ast::any_expr_deep(*expr, [](const ast::Expr& x) {
              return x.kind == ast::ExprKind::kFunction && static_cast<const ast::FunctionCall&>(x).over;
            })) {
          aliased = expr;
          break;
        }
    if (!aliased) return bind_expr(e, inner);
    try {
      return bind_expr(e, inner);
    } catch (const Error&) {
      return bind_expr(*aliased, inner);
    }
  };
  for (auto& p : w.partition_by) call.partition_by.push_back(bind_spec(*p));
  for (auto& o : w.order_by) {
    SortKey k;
    k.expr = bind_spec(*o.expr);
    k.desc = o.desc;
    k.nulls_first = o.nulls != ast::OrderingTerm::Nulls::kLast;
    call.order_by.push_back(k);
  }
  // Ranking and navigation functions are defined over the window's order only.
  static const std::set<std::string> kNeedOrder = {"row_number", "rank", "dense_rank", "ntile",
                                                   "percent_rank", "cume_dist", "lag", "lead"};
  if (call.order_by.empty() && kNeedOrder.count(call.name))
    fail(StatusCode::kError, "Window function " + call.name + "() requires ORDER BY clause", f.site);
  if (w.frame) {
    check_frame_bounds(*w.frame, f.site);
    call.has_frame = true;
    call.unit = static_cast<int>(w.frame->unit);
    call.start_kind = static_cast<int>(w.frame->start.kind);
    // A frame offset is a non-negative integer literal, in RANGE as in ROWS; anything
    // else (a fraction, a parameter, an expression) is refused when the query is planned
    // (window-functions.md, "Frame offsets").
    auto offset = [&](const ast::Expr& e) {
      ScalarPtr x = bind_expr(e, inner);
      const auto* lit = x->kind == ScalarKind::kLiteral ? static_cast<const LiteralScalar*>(x.get()) : nullptr;
      if (!lit || !lit->value.is_integer() || lit->value.to_double() < 0)
        fail(StatusCode::kError, "Invalid window frame offset", e.site);
      return x;
    };
    if (w.frame->start.offset) call.start_offset = offset(*w.frame->start.offset);
    if (w.frame->has_end) {
      call.end_kind = static_cast<int>(w.frame->end.kind);
      if (w.frame->end.offset) call.end_offset = offset(*w.frame->end.offset);
    } else {
      call.end_kind = static_cast<int>(ast::FrameBound::Kind::kCurrentRow);
    }
    call.exclude = static_cast<int>(w.frame->exclude);
    if (w.frame->unit == ast::WindowFrame::Unit::kRange && (call.start_offset || call.end_offset) &&
        call.order_by.size() != 1)
      fail(StatusCode::kError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", f.site);
  }
  // The announced type (types-inference.md): an aggregate's declared result type (sum
  // NUMERIC, avg / total REAL, group_concat TEXT, …), else its argument's (min, max);
  // lag / lead pass arg[0] through, folded with the default arg[2] they may emit instead.
  auto null_literal = [](const ScalarExpr& e) {
    return e.kind == ScalarKind::kLiteral && static_cast<const LiteralScalar&>(e).value.is_null();
  };
  qrs_logical_type type = QRS_LT_ANY;
  if (call.name == "row_number" || call.name == "rank" || call.name == "dense_rank" || call.name == "ntile" ||
      call.name == "count")
    type = QRS_LT_INTEGER;
  else if (call.name == "percent_rank" || call.name == "cume_dist")
    type = QRS_LT_REAL;
  else if (call.aggregate && call.aggregate->result_type != QRS_LT_ANY)
    type = static_cast<qrs_logical_type>(call.aggregate->result_type);
  else if ((call.name == "lag" || call.name == "lead") && call.args.size() > 2 && !null_literal(*call.args[2]))
    type = null_literal(*call.args[0]) ? call.args[2]->type
                                       : merge_branch_types(call.args[0]->type, call.args[2]->type);
  else if (!call.args.empty())
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
  switch (src.kind) {
    case K::kTable:
      // CTE first (unqualified names only), innermost WITH first.
      if (src.table.schema.empty())
        if (std::optional<Source> cte = plan_cte_reference(src, outer)) return std::move(*cte);
      return plan_table_reference(src);
    case K::kSubquery: return plan_subquery_source(src, outer);
    case K::kFunction: return plan_table_function(src, outer);
    case K::kJoin: return plan_join(src, outer);
  }
  throw Error(StatusCode::kInternal, "unhandled FROM kind");
}

// A FROM name that a WITH clause in scope binds: the CTE's rows; nullopt when none does.
std::optional<Planner::Source> Planner::plan_cte_reference(const ast::TableSource& src, const Scope* outer) {
  for (size_t level = cte_stack_.size(); level-- > 0;) {
    auto it = cte_stack_[level].find(to_lower(src.table.name));
    if (it == cte_stack_[level].end()) continue;
    // Held here: planning the body below rebuilds cte_stack_, which destroys the map
    // `it` points into.
    std::shared_ptr<CteBinding> binding = it->second;
    const ast::CommonTableExpr& cte = *binding->cte;
    QueryPlan qp;
    if (binding->working) {
      // A recursive CTE's self reference: the previous iteration's rows.
      qp.root = binding->working;
      for (auto& c : binding->working->columns) qp.names.push_back(c.name);
    } else if (binding->dml.run) {
      qp = plan_dml(binding->dml);  // replays the member's one run
    } else {
      // The body sees the CTEs declared before it (and itself, when recursive).
      std::vector<std::map<std::string, std::shared_ptr<CteBinding>>> saved(cte_stack_.begin() + level, cte_stack_.end());
      cte_stack_.resize(level);
      std::shared_ptr<CteBinding> self = binding;
      std::map<std::string, std::shared_ptr<CteBinding>> visible;
      for (auto& [n, b] : saved[0])
        if (b->order < self->order || (b->recursive && b.get() == self.get())) visible[n] = b;
      cte_stack_.push_back(visible);
      // Planned under a copy of the enclosing scope that notes whether the body reads it
      // (a correlated body is not shared: its rows differ per outer row).
      std::optional<Scope> probe;
      if (outer) {
        probe = *outer;
        probe->correlated = false;
      }
      try {
        ExpansionGuard guard(*this, "'" + cte.name + "'", src.site);
        qp = plan_cte(cte, *self, probe ? &*probe : nullptr);
      } catch (...) {
        cte_stack_.resize(level);
        cte_stack_.insert(cte_stack_.end(), saved.begin(), saved.end());
        throw;
      }
      cte_stack_.resize(level);
      cte_stack_.insert(cte_stack_.end(), saved.begin(), saved.end());
      const bool correlated = probe && probe->correlated;
      if (correlated) outer->correlated = true;
      if (binding->shared && !correlated && qp.root->kind != RelKind::kRecursiveCte) {
        auto cache = std::make_shared<CacheNode>();
        cache->columns = qp.root->columns;
        cache->keys = qp.root->keys;
        cache->input = qp.root;
        cache->shared = binding->shared;
        qp.root = cache;
      }
    }
    std::string alias = src.alias.empty() ? cte.name : src.alias;
    if (!cte.columns.empty() && cte.columns.size() != qp.root->columns.size())
      fail(StatusCode::kError, "CTE '" + cte.name + "' has " + std::to_string(cte.columns.size()) +
                                   " declared columns but its query returns " +
                                   std::to_string(qp.root->columns.size()),
           cte.site);
    Source out;
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
  return std::nullopt;
}

// A FROM name resolved through the catalog: a table scan, or a view's body.
Planner::Source Planner::plan_table_reference(const ast::TableSource& src) {
  // `committed.<table>` (when no schema is named "committed") reads the table's last
  // committed state, without this transaction's writes.
  std::string schema = src.table.schema;
  const bool committed = iequals(schema, "committed") && !db_.catalog().has_schema("committed");
  if (committed) schema.clear();
  std::vector<std::string> path = search_path();
  ResolvedRelation rel;
  try {
    rel = db_.resolve_relation(schema, src.table.name, &path);
  } catch (const Error& e) {
    // errors.md "Semantic Errors": an unresolvable relation is NOTFOUND, with its site.
    if (e.code() != StatusCode::kNotFound || e.site()) throw;
    fail(e.code(), e.raw_message(), src.site);
  }
  if (rel.view) {
    if (committed) fail(StatusCode::kUnsupported, "committed.<view> is not supported: '" + src.table.name + "' is a view", src.site);
    return plan_view(*rel.view, src);
  }
  auto entry = rel.table;
  if (!entry->stale.empty())
    fail(StatusCode::kError, "materialized view '" + entry->schema.name +
                                 "' is stale: a source changed in an incompatible way — drop and recreate (" +
                                 entry->stale + "; REFRESH MATERIALIZED VIEW once the body plans again)", src.site);
  auto scan = std::make_shared<TableScanNode>();
  scan->table = entry;
  if (committed) {
    if (!entry->module->capabilities().committed_reads) {
      fail(StatusCode::kUnsupported,
           "module '" + entry->schema.module_name + "' does not support committed.<table> reads", src.site);
    }
    scan->read_committed = true;
  }
  Source out;
  out.scope = table_scope(*entry, src.alias);
  for (auto& c : out.scope.columns) {
    c.attr.id = mint_attr();
    scan->columns.push_back(c.attr);
  }
  std::vector<int> key;
  for (auto& k : entry->schema.primary_key) key.push_back(k.column);
  scan->keys.push_back(key);
  // A full UNIQUE over NOT NULL columns is a key too (NULLs would not collide).
  for (const IndexSchema& ix : entry->schema.indexes) {
    if (!ix.unique || ix.where) continue;
    std::vector<int> uk;
    bool nulls = false;
    for (const IndexColumn& c : ix.columns) {
      uk.push_back(c.column);
      nulls = nulls || !entry->schema.columns[c.column].not_null;
      // Unique under a finer collation than the column compares by (a BINARY index over a
      // NOCASE column) is no key of the values as the column sees them.
      const Collation* declared = entry->schema.columns[c.column].collation.get();
      if (c.collation.get() != declared && declared && declared != &Collation::binary()) nulls = true;
    }
    if (!nulls && !uk.empty()) scan->keys.push_back(std::move(uk));
  }
  out.node = scan;
  return out;
}

// A subquery in FROM, its columns renamed by the alias's column list.
Planner::Source Planner::plan_subquery_source(const ast::TableSource& src, const Scope* outer) {
  QueryPlan qp = plan_select(*src.subquery, outer);
  check_alias_columns(src, qp.root->columns.size());
  Source out;
  out.node = qp.root;
  out.scope = output_scope(qp, src.alias, "", src.alias_columns);
  return out;
}

// A table-valued function call in FROM; its arguments see only the outer scope.
Planner::Source Planner::plan_table_function(const ast::TableSource& src, const Scope* outer) {
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
  node->shape = fn->columns;
  if (fn->shape) {
    // The columns depend on the arguments (a file's header): they are read now.
    std::vector<Value> values;
    ExecContext ctx;
    EvalEnv env{nullptr, nullptr, &ctx};
    for (size_t i = 0; i < node->args.size(); ++i) {
      if (!is_closed(*node->args[i]))
        fail(StatusCode::kError,
             fn->name + "(): argument " + std::to_string(i + 1) +
                 " must be a constant (the columns are learned when the statement is prepared)",
             src.function_args[i]->site);
      values.push_back(node->args[i]->eval(env));
    }
    node->shape = db_.table_function_shape(*fn, values);
  }
  const std::vector<TableFunctionColumn>& shape = node->shape;
  std::string alias = src.alias.empty() ? fn->name : src.alias;
  check_alias_columns(src, shape.size());
  Source out;
  for (size_t i = 0; i < shape.size(); ++i) {
    Scope::Column c;
    c.table = alias;
    c.name = src.alias_columns.empty() ? shape[i].name : src.alias_columns[i];
    c.slot = static_cast<int>(i);
    c.attr.id = mint_attr();
    c.attr.name = c.name;
    c.attr.type = static_cast<qrs_logical_type>(shape[i].type);
    c.attr.nullable = shape[i].nullable;
    node->columns.push_back(c.attr);
    out.scope.columns.push_back(c);
  }
  node->keys = fn->keys;
  out.node = node;
  return out;
}

// A join: both sides, the ON / USING condition, then the existence flag columns.
Planner::Source Planner::plan_join(const ast::TableSource& src, const Scope* outer) {
  std::vector<JoinNode::Side> existence = existence_sides(src);
  Source l = plan_from(*src.left, outer);
  // JOIN LATERAL: the right side sees the left side's columns one level out.
  Scope left_scope = l.scope;
  left_scope.outer = outer;
  const bool lateral = src.right->lateral;
  if (lateral && src.join != ast::JoinKind::kInner && src.join != ast::JoinKind::kCross &&
      src.join != ast::JoinKind::kLeft)
    fail(StatusCode::kUnsupported, "JOIN LATERAL supports only INNER, CROSS and LEFT joins", src.site);
  Source r = plan_from(*src.right, lateral ? &left_scope : outer);
  auto join = std::make_shared<JoinNode>();
  join->join = src.join;
  join->lateral = lateral;
  join->index_lookup = lateral;
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
  Source out;
  out.scope = l.scope;
  for (auto c : r.scope.columns) {
    c.slot += lw;
    out.scope.columns.push_back(c);
  }
  out.scope.outer = outer;
  if (src.on) {
    join->on = bind_expr(*src.on, out.scope);
  } else if (!src.using_columns.empty()) {
    join->on = bind_using(src, l, r, lw);
  }
  // Existence flags follow both sides; ON / USING cannot see them.
  join->existence = existence;
  for (size_t i = 0; i < existence.size(); ++i) {
    Scope::Column c;
    c.name = src.exists_columns[i].name;
    c.slot = static_cast<int>(join->columns.size());
    c.attr.id = mint_attr();
    c.attr.name = c.name;
    c.attr.type = QRS_LT_BOOLEAN;
    c.attr.nullable = false;
    join->columns.push_back(c.attr);
    out.scope.columns.push_back(c);
  }
  out.node = join;
  return out;
}

// USING (c) means l.c = r.c: each pair is bound as that comparison, over a scope naming
// just the pair, so coercion and collation resolve exactly as in ON.
ScalarPtr Planner::bind_using(const ast::TableSource& src, const Source& l, const Source& r, int left_width) {
  ScalarPtr cond;
  for (auto& name : src.using_columns) {
    const Scope::Column* lc = nullptr;
    const Scope::Column* rc = nullptr;
    // Each side pairs its first column of that name (a nested join may carry several).
    for (auto& c : l.scope.columns) if (!lc && iequals(c.name, name)) lc = &c;
    for (auto& c : r.scope.columns) if (!rc && iequals(c.name, name)) rc = &c;
    if (!lc) fail(StatusCode::kError, "USING column not found on left side of join: " + name, src.site);
    if (!rc) fail(StatusCode::kError, "USING column not found on right side of join: " + name, src.site);
    Scope pair;
    pair.columns = {*lc, *rc};
    pair.columns[0].table = "l";
    pair.columns[1].table = "r";
    pair.columns[1].slot += left_width;
    auto ref = [&name](const char* table) {
      auto r = std::make_unique<ast::ColumnRef>();
      r->table = table;
      r->column = name;
      return r;
    };
    ast::BinaryExpr eq;
    eq.site = src.site;
    eq.left = ref("l");
    eq.right = ref("r");
    ScalarPtr bound = bind_expr(eq, pair);
    if (!cond) {
      cond = bound;
    } else {
      auto both = std::make_shared<BinaryScalar>(ast::BinaryOp::kAnd, cond, bound);
      both->type = QRS_LT_BOOLEAN;
      cond = both;
    }
  }
  return cond;
}

// ---------------------------------------------------------------- SELECT

// What the stages of plan_core hand on to each other, in pipeline order. Lives on
// plan_core's stack: `post` points at `ab` and `wb`, and items at `src.scope.columns`.
struct Planner::CoreState {
  // One select-list entry after star expansion: an expression, or a source column.
  struct Item {
    const ast::Expr* expr = nullptr;
    const Scope::Column* star_col = nullptr;
    std::string name;
    SourceSite site;
    std::string alias;  // "" when none
  };
  CoreState(const ast::SelectCore& c, const Scope* o, const std::vector<ast::OrderingTerm>* ob)
      : core(c), outer(o), order_by(ob) {}
  const ast::SelectCore& core;
  const Scope* outer;
  const std::vector<ast::OrderingTerm>* order_by;
  QueryPlan qp;
  Source src;
  RelPtr node;  // the plan built so far
  bool aggregate = false;
  std::vector<Item> items;
  Scope post;  // the scope the select list is bound in
  AggBinding ab;
  std::shared_ptr<AggregateNode> agg;
  std::vector<bool> input_term;  // ORDER BY terms that order the aggregates' input
  WindowBinding wb;
  std::vector<ScalarPtr> exprs;  // the projection
  std::vector<Attribute> attrs;
  ScalarPtr having;
  std::vector<SortKey> sort_keys;
  std::vector<ScalarPtr> extra;  // hidden sort columns appended to the projection
};

QueryPlan Planner::plan_core(const ast::SelectCore& core, const Scope* outer,
                             const std::vector<ast::OrderingTerm>* order_by, RelPtr* sorted_root) {
  if (core.nested) {
    QueryPlan qp = plan_select(*core.nested, outer);
    if (order_by && !order_by->empty()) {
      qp.root = sort_output(qp.root, qp.names, *order_by, outer);
      if (sorted_root) *sorted_root = qp.root;
    }
    return qp;
  }
  if (!core.values.empty()) {
    // `values (…), … order by …` sorts its rows (sql.md 12.2, values_stmt).
    QueryPlan qp = plan_values(core, outer);
    if (order_by && !order_by->empty()) {
      qp.root = sort_output(qp.root, qp.names, *order_by, outer);
      if (sorted_root) *sorted_root = qp.root;
    }
    return qp;
  }

  CoreState st(core, outer, order_by);
  plan_core_source(st);
  expand_select_list(st);
  {
    std::vector<std::string> outputs;
    for (auto& item : st.items) outputs.push_back(item.name);
    validate_inverses(core, st.src.scope, outputs, [this](const ast::Expr& e) { return contains_aggregate(e); });
  }
  order_aggregate_input(st);
  if (st.aggregate) {
    plan_grouping(st);
  } else {
    st.post = st.src.scope;
  }
  // Window calls in the select list / ORDER BY are computed by a WindowNode that sits
  // between the (aggregated) rows and the projection, appending one column per call.
  st.wb.node = std::make_shared<WindowNode>();
  st.post.win = &st.wb;
  if (st.aggregate) {
    st.wb.grouped = true;
    for (auto& item : st.items) {
      if (!item.alias.empty() && item.expr) st.wb.aliases.emplace_back(item.alias, item.expr);
      if (item.expr)
        visit_aggregates(*item.expr, false,
                         [&](const ast::FunctionCall& f) { st.wb.select_aggregates.insert(expr_fingerprint(f)); });
    }
  }
  bind_select_list(st);
  bind_having(st);
  bind_order_by(st);
  finish_aggregate(st);
  add_having_filter(st);
  add_window(st);
  add_projection(st);
  add_distinct_and_sort(st, sorted_root);
  st.qp.root = st.node;
  return std::move(st.qp);
}

// A VALUES core: one row per list, columns named column_0, column_1, ….
QueryPlan Planner::plan_values(const ast::SelectCore& core, const Scope* outer) {
  QueryPlan qp;
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
    // A NULL literal has no say in a column's type (types-inference.md "Common type
    // resolution": `values (5), (null)` is INTEGER); differing types are ANY.
    std::optional<qrs_logical_type> type;
    for (auto& row : values->rows) {
      const ScalarExpr& e = *row[i];
      if (e.kind == ScalarKind::kLiteral && static_cast<const LiteralScalar&>(e).value.is_null()) continue;
      if (!type) type = e.type;
      else if (*type != e.type) type = QRS_LT_ANY;
    }
    a.type = type.value_or(QRS_LT_ANY);
    values->columns.push_back(a);
    qp.names.push_back(a.name);
  }
  qp.root = values;
  return qp;
}

// FROM (or the single row without one), then WHERE; decides whether the core aggregates.
void Planner::plan_core_source(CoreState& st) {
  const ast::SelectCore& core = st.core;
  if (core.from) {
    note_lens_reads(core, st.order_by);
    try {
      st.src = plan_from(*core.from, st.outer);
    } catch (...) {
      forget_lens_reads(*core.from);
      throw;
    }
    forget_lens_reads(*core.from);
  } else {
    st.src.node = std::make_shared<SingleRowNode>();
  }
  st.src.scope.outer = st.outer;
  st.node = st.src.node;

  if (core.where) {
    auto f = std::make_shared<FilterNode>();
    f->input = st.node;
    f->predicate = bind_expr(*core.where, st.src.scope);
    f->columns = st.node->columns;
    f->keys = st.node->keys;
    st.node = f;
  }

  st.aggregate = !core.group_by.empty() || core.having;
  for (auto& rc : core.columns)
    if (rc.kind == ast::ResultColumn::Kind::kExpr && contains_aggregate(*rc.expr)) st.aggregate = true;
}

// Expands the select list (stars) into expressions over the current scope.
void Planner::expand_select_list(CoreState& st) {
  for (auto& rc : st.core.columns) {
    // A result column's WITH INVERSE (…) is write-through metadata, like WITH DEFAULTS:
    // a read plans the forward expression and never evaluates the inverse (a write
    // through a view is refused before reaching here).
    if (rc.kind == ast::ResultColumn::Kind::kExpr) {
      st.items.push_back({rc.expr.get(), nullptr, column_name(rc), rc.site, rc.alias});
      continue;
    }
    bool any = false;
    for (auto& c : st.src.scope.columns) {
      if (rc.kind == ast::ResultColumn::Kind::kTableStar && !iequals(c.table, rc.table)) continue;
      st.items.push_back({nullptr, &c, c.name, rc.site, ""});
      any = true;
    }
    if (!any && rc.kind == ast::ResultColumn::Kind::kTableStar)
      fail(StatusCode::kError, "no such table: " + rc.table, rc.site);
    if (!any && !st.core.from) fail(StatusCode::kError, "no tables specified", rc.site);
  }
}

// Quereus extension: without GROUP BY, an ORDER BY term that names neither a select-list
// alias nor an aggregate (nor an ordinal) orders the rows fed to the aggregates.
void Planner::order_aggregate_input(CoreState& st) {
  if (!st.aggregate || !st.core.group_by.empty() || !st.order_by) return;
  auto input_sort = std::make_shared<SortNode>();
  for (auto& t : *st.order_by) {
    const ast::Expr* te = t.expr.get();
    bool output = contains_aggregate(*te) ||
                  (te->kind == ast::ExprKind::kLiteral &&
                   static_cast<const ast::Literal*>(te)->literal_kind == ast::LiteralKind::kInteger);
    if (te->kind == ast::ExprKind::kColumn && static_cast<const ast::ColumnRef*>(te)->table.empty())
      for (auto& it : st.items) output = output || iequals(it.alias, static_cast<const ast::ColumnRef*>(te)->column);
    st.input_term.push_back(!output);
    if (output) continue;
    SortKey sk;
    sk.expr = bind_expr(*te, st.src.scope);
    sk.desc = t.desc;
    sk.nulls_first = t.nulls != ast::OrderingTerm::Nulls::kLast;
    input_sort->sort_keys.push_back(sk);
  }
  if (!input_sort->sort_keys.empty()) {
    input_sort->input = st.node;
    input_sort->columns = st.node->columns;
    input_sort->keys = st.node->keys;
    st.node = input_sort;
  }
}

// GROUP BY: the AggregateNode, its grouping keys, and the post-aggregation scope.
void Planner::plan_grouping(CoreState& st) {
  const ast::SelectCore& core = st.core;
  AggBinding& ab = st.ab;
  st.agg = std::make_shared<AggregateNode>();
  auto& agg = st.agg;
  agg->input = st.node;
  ab.input = &st.src.scope;
  ab.node = agg.get();
  for (auto& g : core.group_by) {
    const ast::Expr* ge = g.get();
    // GROUP BY may name a select-list alias or ordinal.
    if (ge->kind == ast::ExprKind::kLiteral &&
        static_cast<const ast::Literal*>(ge)->literal_kind == ast::LiteralKind::kInteger) {
      const std::string& digits = static_cast<const ast::Literal*>(ge)->text;
      long long big = std::strtoll(digits.c_str(), nullptr, 10);
      int n = big > 1000000 ? 1000000 : static_cast<int>(big);
      if (n >= 1 && n <= static_cast<int>(st.items.size()) && st.items[n - 1].star_col) {
        const Scope::Column& sc = *st.items[n - 1].star_col;
        auto key = std::make_shared<ColumnScalar>(0, sc.slot, sc.attr.id);
        key->type = sc.attr.type;
        key->set_collation(sc.attr.collation, sc.attr.collation_source);
        ab.group_texts.emplace_back();  // matched as a column, never as text
        ab.group_exprs.push_back(key);
        continue;
      }
      if (n < 1 || n > static_cast<int>(st.items.size()))
        fail(StatusCode::kError, "GROUP BY position " + digits + " is not in the SELECT list", ge->site);
      ge = st.items[n - 1].expr;
    } else if (ge->kind == ast::ExprKind::kColumn) {
      auto& cr = static_cast<const ast::ColumnRef&>(*ge);
      bool is_source_col = false;
      for (auto& c : st.src.scope.columns) if (iequals(c.name, cr.column)) is_source_col = true;
      if (!is_source_col && cr.table.empty())
        for (size_t i = 0; i < core.columns.size(); ++i)
          if (core.columns[i].kind == ast::ResultColumn::Kind::kExpr && iequals(core.columns[i].alias, cr.column))
            ge = core.columns[i].expr.get();
    }
    if (contains_aggregate(*ge)) fail(StatusCode::kError, "aggregate functions are not allowed in the GROUP BY clause", ge->site);
    ab.group_texts.push_back(expr_fingerprint(*ge));
    ab.group_exprs.push_back(bind_expr(*ge, st.src.scope));
  }
  agg->group_by = ab.group_exprs;
  for (auto& g : ab.group_exprs) {
    Attribute a;
    a.id = mint_attr();
    a.name = "_agg" + std::to_string(agg->columns.size());
    a.type = g->type;
    a.collation = g->collation;
    a.collation_source = g->collation_source();
    // A grouping key that is a source column is NULL only where that column is.
    if (g->kind == ScalarKind::kColumn && static_cast<const ColumnScalar&>(*g).level == 0)
      for (const auto& c : st.src.scope.columns)
        if (c.attr.id == static_cast<const ColumnScalar&>(*g).attr_id) a.nullable = c.attr.nullable;
    agg->columns.push_back(a);
  }
  // Above the aggregation a source column is visible only as a grouping key (named by
  // any spelling that denotes it); every other source column is an ungrouped reference.
  Scope& post = st.post;
  post.outer = st.outer;
  post.agg = &ab;
  post.implicit_group = core.group_by.empty();
  for (const Scope::Column& c : st.src.scope.columns) {
    Scope::Column pc = c;
    pc.ungrouped = true;
    for (size_t i = 0; i < ab.group_exprs.size(); ++i) {
      auto* key = dynamic_cast<const ColumnScalar*>(ab.group_exprs[i].get());
      if (!key || key->level != 0 || key->slot != c.slot) continue;
      pc.ungrouped = false;
      pc.slot = static_cast<int>(i);
      pc.attr.id = agg->columns[i].id;
      break;
    }
    post.columns.push_back(pc);
  }
  st.node = agg;
}

namespace {

// Whether `e` (bound over `cols` at level 0) can never be NULL: a non-NULL literal, a
// NOT NULL column, and the operators that yield NULL only from a NULL operand (unary
// minus, +, -, * and ||; not / or %, which yield NULL on a zero divisor), a COLLATE,
// COALESCE with a never-NULL argument, and a CASE whose every branch and ELSE are never NULL. Conservative: anything else may be NULL.
bool never_null(const ScalarExpr& e, const std::vector<Attribute>& cols) {
  switch (e.kind) {
    case ScalarKind::kLiteral: return !static_cast<const LiteralScalar&>(e).value.is_null();
    case ScalarKind::kColumn: {
      auto& c = static_cast<const ColumnScalar&>(e);
      return c.level == 0 && c.slot >= 0 && static_cast<size_t>(c.slot) < cols.size() && !cols[c.slot].nullable;
    }
    case ScalarKind::kUnary: {
      auto& u = static_cast<const UnaryScalar&>(e);
      return (u.op == ast::UnaryOp::kNegate || u.op == ast::UnaryOp::kPlus) && never_null(*u.operand, cols);
    }
    case ScalarKind::kBinary: {
      auto& b = static_cast<const BinaryScalar&>(e);
      bool arith = b.op == ast::BinaryOp::kAdd || b.op == ast::BinaryOp::kSub || b.op == ast::BinaryOp::kMul ||
                   b.op == ast::BinaryOp::kConcat;
      return arith && never_null(*b.left, cols) && never_null(*b.right, cols);
    }
    case ScalarKind::kCollate: return never_null(*static_cast<const CollateScalar&>(e).operand, cols);
    case ScalarKind::kCase: {
      // Every THEN and the ELSE never NULL (no ELSE: NULL when nothing matches).
      auto& c = static_cast<const CaseScalar&>(e);
      if (!c.else_expr || !never_null(*c.else_expr, cols)) return false;
      for (const auto& [w, t] : c.whens)
        if (!never_null(*t, cols)) return false;
      return true;
    }
    case ScalarKind::kFunction: {
      auto& f = static_cast<const FunctionScalar&>(e);
      if (!f.fn) return false;
      if (iequals(f.fn->name, "coalesce") || iequals(f.fn->name, "ifnull")) {
        for (const ScalarPtr& a : f.args)
          if (never_null(*a, cols)) return true;
        return false;
      }
      // Built-ins that yield NULL only from a NULL argument.
      static const char* const kStrict[] = {"upper", "lower",  "substr", "substring", "trim", "ltrim", "rtrim",
                                            "length", "abs", "replace", "round",    "instr", "hex",  "typeof",
                                            "quote"};
      if (std::none_of(std::begin(kStrict), std::end(kStrict), [&](const char* n) { return f.fn->name == n; }))
        return false;
      for (const ScalarPtr& a : f.args)
        if (!never_null(*a, cols)) return false;
      return true;
    }
    default: return false;
  }
}

}  // namespace

// Binds each select-list item over the post scope: the projection's expressions,
// attributes and output names.
void Planner::bind_select_list(CoreState& st) {
  for (auto& it : st.items) {
    ScalarPtr e;
    Attribute a;
    if (it.star_col) {
      const Scope::Column* col = it.star_col;
      if (st.aggregate) {
        col = &st.post.columns[it.star_col - st.src.scope.columns.data()];
        if (col->ungrouped) fail_ungrouped(st.post, col->name, it.site);
      }
      auto c = std::make_shared<ColumnScalar>(0, col->slot, col->attr.id);
      c->type = col->attr.type;
      c->set_collation(col->attr.collation, col->attr.collation_source);
      e = c;
      a = it.star_col->attr;
    } else {
      e = bind_expr(*it.expr, st.post);
      a.type = e->type;
      a.collation = e->collation;
      a.collation_source = e->collation_source();
      if (auto* col = dynamic_cast<const ColumnScalar*>(e.get()); col && col->level == 0 && !st.aggregate) {
        a = st.node->columns.size() > static_cast<size_t>(col->slot) ? st.node->columns[col->slot] : a;
      } else if (col && col->level == 0 && st.agg && static_cast<size_t>(col->slot) < st.agg->group_by.size()) {
        a.id = mint_attr();
        a.nullable = st.agg->columns[col->slot].nullable;  // a grouping key: NULL where its source is
      } else {
        a.id = mint_attr();
        if (!st.aggregate && st.node && never_null(*e, st.node->columns)) a.nullable = false;
      }
    }
    a.name = it.name;
    st.exprs.push_back(e);
    st.attrs.push_back(a);
    st.qp.names.push_back(it.name);
  }
}

// HAVING, bound where window calls may not appear.
void Planner::bind_having(CoreState& st) {
  // HAVING and ORDER BY of a grouped query may name the select list's aliases.
  if (st.aggregate)
    for (size_t i = 0; i < st.items.size(); ++i)
      if (!st.items[i].alias.empty()) st.post.aliases.push_back({st.items[i].alias, st.exprs[i]});
  st.post.win = nullptr;
  if (st.core.having) st.having = bind_expr(*st.core.having, st.post);
  st.post.win = &st.wb;
}

// ORDER BY terms are bound now (they may add aggregates), then sorted after projection.
void Planner::bind_order_by(CoreState& st) {
  if (!st.order_by || st.order_by->empty()) return;
  // Inside an ORDER BY expression a select-list alias is the lowest-precedence name, as in
  // a grouped query (bind_having) and in SQLite: `select abs(x) as a … order by a + 0` sorts
  // by the alias's value, while a source column of the same name still wins. It was
  // "Column not found: a".
  if (!st.aggregate)
    for (size_t i = 0; i < st.items.size(); ++i)
      if (!st.items[i].alias.empty() && i < st.exprs.size()) st.post.aliases.push_back({st.items[i].alias, st.exprs[i]});
  for (size_t term = 0; term < st.order_by->size(); ++term) {
    if (term < st.input_term.size() && st.input_term[term]) continue;
    st.sort_keys.push_back(bind_order_term(st, (*st.order_by)[term]));
  }
}

// One ORDER BY term: a projected column (by ordinal, alias, text or value), else a hidden
// sort column appended to the projection.
SortKey Planner::bind_order_term(CoreState& st, const ast::OrderingTerm& t) {
  const auto& items = st.items;
  const auto& exprs = st.exprs;
  SortKey sk;
  sk.desc = t.desc;
  sk.nulls_first = t.nulls == ast::OrderingTerm::Nulls::kDefault ? !t.desc : t.nulls == ast::OrderingTerm::Nulls::kFirst;
  sk.nulls_first = t.nulls == ast::OrderingTerm::Nulls::kDefault ? true : sk.nulls_first;
  const ast::Expr* te = t.expr.get();
  // A COLLATE around an ordinal or a select-list alias still names that output column
  // (`order by 2 collate nocase`, `order by k collate nocase`), as SQLite reads the term;
  // the collation is applied to the column below. It was a constant sort key / "Column not
  // found".
  const ast::Expr* named = te->kind == ast::ExprKind::kCollate ? static_cast<const ast::CollateExpr*>(te)->operand.get() : te;
  int out_index = -1;
  if (named->kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal*>(named)->literal_kind == ast::LiteralKind::kInteger) {
    int n = std::atoi(static_cast<const ast::Literal*>(named)->text.c_str());
    if (n < 1 || n > static_cast<int>(exprs.size()))
      fail(StatusCode::kError, "ORDER BY position " + std::to_string(n) + " is not in the SELECT list", named->site);
    out_index = n - 1;
  } else if (named->kind == ast::ExprKind::kColumn && static_cast<const ast::ColumnRef*>(named)->table.empty()) {
    auto& cr = static_cast<const ast::ColumnRef&>(*named);
    for (size_t i = 0; i < items.size(); ++i)
      if (iequals(items[i].alias, cr.column)) {
        out_index = static_cast<int>(i);
        break;
      }
  }
  ScalarPtr key;
  if (out_index < 0) {
    // Match a select-list expression textually, else bind over the input.
    std::string text = expr_to_sql(*te);
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i].expr && expr_to_sql(*items[i].expr) == text) { out_index = static_cast<int>(i); break; }
  }
  ScalarPtr bound;
  if (out_index < 0) {
    // A term that names a projected column under another spelling (`t.a`, `*`) reads it.
    bound = bind_expr(*te, st.post);
    for (size_t i = 0; i < exprs.size() && out_index < 0; ++i)
      if (dynamic_cast<const ColumnScalar*>(bound.get()) && same_value(bound, exprs[i])) out_index = static_cast<int>(i);
  }
  if (out_index >= 0) {
    auto c = std::make_shared<ColumnScalar>(0, out_index, st.attrs[out_index].id);
    c->type = exprs[out_index]->type;
    c->collation = exprs[out_index]->collation;
    key = c;
  } else {
    int slot = static_cast<int>(exprs.size() + st.extra.size());
    st.extra.push_back(bound);
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
  return sk;
}

// Aggregate output columns (the grouping keys' were minted with the scope above).
void Planner::finish_aggregate(CoreState& st) {
  auto& agg = st.agg;
  if (!agg) return;
  for (size_t i = agg->columns.size(); i < agg->group_by.size() + agg->aggs.size(); ++i) {
    Attribute a;
    a.id = mint_attr();
    a.name = "_agg" + std::to_string(i);
    agg->columns.push_back(a);
  }
  // One row per distinct grouping key; one row in all without GROUP BY.
  std::vector<int> key;
  for (size_t i = 0; i < agg->group_by.size(); ++i) key.push_back(static_cast<int>(i));
  agg->keys.push_back(key);
}

// HAVING as a filter over the aggregated rows.
void Planner::add_having_filter(CoreState& st) {
  if (!st.having) return;
  auto f = std::make_shared<FilterNode>();
  f->input = st.node;
  f->predicate = st.having;
  f->columns = st.node->columns;
  f->keys = st.node->keys;
  st.node = f;
}

// The WindowNode of the window calls bound so far, with their placeholder slots remapped.
void Planner::add_window(CoreState& st) {
  WindowBinding& wb = st.wb;
  if (wb.node->calls.empty()) return;
  int base = static_cast<int>(st.node->columns.size());
  for (auto& r : wb.refs) r->slot = base + (r->slot - WindowBinding::kPlaceholderBase);
  for (auto& r : wb.lifted) r->slot = base + (r->slot - WindowBinding::kPlaceholderBase);
  wb.node->input = st.node;
  wb.node->columns = st.node->columns;
  for (size_t i = 0; i < wb.node->calls.size(); ++i) {
    Attribute a;
    a.id = mint_attr();
    a.name = "_win" + std::to_string(i);
    a.type = wb.refs[i]->type;
    wb.node->columns.push_back(a);
  }
  st.node = wb.node;
}

// The projection of the select list, plus the hidden sort columns.
void Planner::add_projection(CoreState& st) {
  const auto& exprs = st.exprs;
  auto proj = std::make_shared<ProjectNode>();
  proj->input = st.node;
  proj->exprs = exprs;
  for (auto& x : st.extra) proj->exprs.push_back(x);
  proj->columns = st.attrs;
  for (size_t i = 0; i < st.extra.size(); ++i) {
    Attribute a;
    a.id = mint_attr();
    a.name = "_sort" + std::to_string(i);
    proj->columns.push_back(a);
  }
  // Keys survive a projection when every key column is projected as a plain column.
  for (auto& key : st.node->keys) {
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
  st.node = proj;
}

// DISTINCT and ORDER BY over the projection; the hidden sort columns are trimmed after
// sorting. `sorted_root` (when set) receives the sorted node.
void Planner::add_distinct_and_sort(CoreState& st, RelPtr* sorted_root) {
  RelPtr& node = st.node;
  auto distinct = [&node] {
    auto d = std::make_shared<DistinctNode>();
    d->input = node;
    d->columns = node->columns;
    d->keys = node->keys;
    std::vector<int> all;
    for (size_t i = 0; i < node->columns.size(); ++i) all.push_back(static_cast<int>(i));
    d->keys.push_back(all);
    node = d;
  };
  if (st.core.distinct && st.extra.empty()) distinct();
  if (st.sort_keys.empty()) return;

  auto s = std::make_shared<SortNode>();
  s->input = node;
  s->sort_keys = st.sort_keys;
  s->columns = node->columns;
  s->keys = node->keys;
  node = s;
  if (!st.extra.empty()) {
    const auto& attrs = st.attrs;
    const size_t width = st.exprs.size();
    auto trim = std::make_shared<ProjectNode>();
    trim->input = node;
    for (size_t i = 0; i < width; ++i) {
      auto c = std::make_shared<ColumnScalar>(0, static_cast<int>(i), attrs[i].id);
      c->type = attrs[i].type;
      c->collation = attrs[i].collation;
      trim->exprs.push_back(c);
    }
    trim->columns = attrs;
    for (auto& key : node->keys)
      if (std::all_of(key.begin(), key.end(), [&](int k) { return k < static_cast<int>(width); }))
        trim->keys.push_back(key);
    node = trim;
    // Hidden sort columns must not split duplicates: DISTINCT runs over the sorted,
    // trimmed rows and keeps each row's first occurrence in place.
    if (st.core.distinct) distinct();
  }
  if (sorted_root) *sorted_root = node;
}

// How many times `sel` names `name` as an unqualified FROM source, at any depth.
static int count_references(const ast::Select& sel, const std::string& name) {
  std::vector<const ast::QualifiedName*> named;
  ast::named_sources(sel, named);
  return static_cast<int>(std::count_if(named.begin(), named.end(), [&](const ast::QualifiedName* n) {
    return n->schema.empty() && iequals(n->name, name);
  }));
}

void Planner::push_with(const ast::WithClause& with, const ast::Select* owner) {
  std::map<std::string, std::shared_ptr<CteBinding>> m;
  int order = 0;
  for (auto& cte : with.ctes) {
    auto b = std::make_shared<CteBinding>();
    b->cte = &cte;
    b->recursive = with.recursive;
    b->max_recursion = with.max_recursion;
    b->order = order++;
    if (!m.emplace(to_lower(cte.name), b).second)
      fail(StatusCode::kError, "Duplicate CTE name '" + cte.name + "' in WITH clause", cte.site);
    // sql-select.md 3.7: "by default, results are cached if accessed more than once" —
    // a member named twice (its own body's self references aside) is computed once per
    // execution, so its references agree even over random().
    using M = ast::CommonTableExpr::Materialization;
    if (cte.materialization == M::kNotMaterialized || cte.select->dml) continue;
    int references = owner ? count_references(*owner, cte.name) : 0;
    if (!owner || owner->with.get() != &with)  // the members' bodies are not in `owner`
      for (auto& other : with.ctes) references += count_references(*other.select, cte.name);
    references -= count_references(*cte.select, cte.name);
    if (references > 1 || cte.materialization == M::kMaterialized) b->shared = std::make_shared<SharedRows>();
  }
  // A data-modifying member needs an owner that runs it exactly once per execution: only
  // the statement's own leading clause has one (sql-dml.md). Elsewhere (a subquery, a CTE
  // body, a view body) the write would be dropped or re-driven, so it is refused.
  for (auto& cte : with.ctes) {
    if (!cte.select->dml) continue;
    if (&with != leading_with_)
      throw MisplacedDmlError(StatusCode::kError,
                              "WITH member '" + cte.name + "' is data-modifying (" +
                                  (cte.select->dml->kind == ast::StmtKind::kInsert   ? "INSERT"
                                   : cte.select->dml->kind == ast::StmtKind::kUpdate ? "UPDATE"
                                                                                     : "DELETE") +
                                  "), which is only allowed in a statement's own leading WITH clause; "
                                  "move the mutation to the statement that uses the query",
                              cte.site.line > 0 ? std::optional<SourceSite>(cte.site) : std::nullopt);
  }
  if (&with == leading_with_) {
    leading_with_ = nullptr;  // planned once
    for (auto& cte : with.ctes) {
      if (!cte.select->dml) continue;
      auto& b = m[to_lower(cte.name)];
      // The member's statement sees the members declared before it.
      CteFrame before;
      for (auto& [n, other] : m)
        if (other->order < b->order) before[n] = other;
      b->dml = make_dml_run(*cte.select->dml, &before);
      dml_prelude_.push_back(b->dml.run);
    }
  }
  cte_stack_.push_back(std::move(m));
}

PlannedDml Planner::make_dml_run(const ast::Statement& stmt, const CteFrame* siblings) {
  // A leading WITH member's statement sees the enclosing WITH clauses and its earlier
  // siblings (only a leading clause may hold DML members, so `siblings` is set there).
  PlanSeed seed;
  seed.param_types = param_types_;
  if (siblings) {
    seed.ctes = cte_stack_;
    seed.ctes.push_back(*siblings);
  }
  // A stored body's nested statement would not see the reader's path; elsewhere the
  // statement's WITH SCHEMA reaches it.
  return db_.plan_dml_relation(stmt, home_schema_.empty() ? statement_path_ : std::vector<std::string>{}, &seed);
}

QueryPlan Planner::plan_dml(const PlannedDml& dml) {
  auto node = std::make_shared<DmlRelNode>();
  node->run = dml.run;
  QueryPlan qp;
  for (const auto& name : dml.names) {
    Attribute a;
    a.id = mint_attr();
    a.name = name;
    node->columns.push_back(a);
    qp.names.push_back(name);
  }
  qp.root = node;
  return qp;
}

void Planner::pop_with() { cte_stack_.pop_back(); }

void Planner::seed(const PlanSeed* seed) {
  if (!seed) return;
  if (seed->param_types) param_types_ = seed->param_types;
  cte_stack_.insert(cte_stack_.begin(), seed->ctes.begin(), seed->ctes.end());
  for (auto& rows : seed->rows) bind_rows(rows);
}

void Planner::bind_rows(const BoundRows& rows) {
  auto cte = std::make_shared<ast::CommonTableExpr>();
  cte->name = rows.name;
  bound_rows_.push_back(cte);
  auto node = std::make_shared<WorkingTableNode>();
  node->name = rows.name;
  node->rows = rows.rows;
  node->bound = true;
  for (Attribute a : rows.columns) {
    a.id = mint_attr();
    a.nullable = true;
    node->columns.push_back(a);
  }
  auto binding = std::make_shared<CteBinding>();
  binding->cte = cte.get();
  binding->working = node;
  std::map<std::string, std::shared_ptr<CteBinding>> level;
  level.emplace(to_lower(rows.name), binding);
  // Below every WITH of the statement, above the row sets bound before it: a later binding
  // of a name (a nested view write's own capture) shadows an earlier one (the enclosing
  // write's), as an inner WITH shadows an outer one.
  const size_t at = std::min(bound_rows_.size() - 1, cte_stack_.size());
  cte_stack_.insert(cte_stack_.begin() + static_cast<std::ptrdiff_t>(at), std::move(level));
}

void Planner::set_statement_path(const std::vector<std::string>& path) {
  statement_path_.clear();
  for (const auto& p : path) {
    std::string s = to_lower(p);
    if (std::find(statement_path_.begin(), statement_path_.end(), s) == statement_path_.end())
      statement_path_.push_back(s);
  }
}

void Planner::set_schema_authored(const std::string& schema) {
  home_schema_ = to_lower(schema);
  authored_ = true;
  statement_path_.clear();
  cte_stack_.clear();
}

namespace {

// Whether output column `i` of `n` is the NULL literal in every row it can produce (a
// `select null` arm, a VALUES column of NULLs), seen through the nodes that keep columns.
bool column_is_null_literal(const RelNode& n, size_t i) {
  auto null_literal = [](const ScalarExpr& e) {
    return e.kind == ScalarKind::kLiteral && static_cast<const LiteralScalar&>(e).value.is_null();
  };
  switch (n.kind) {
    case RelKind::kProject: {
      const auto& p = static_cast<const ProjectNode&>(n);
      return i < p.exprs.size() && null_literal(*p.exprs[i]);
    }
    case RelKind::kValues: {
      const auto& v = static_cast<const ValuesNode&>(n);
      if (v.rows.empty()) return false;
      for (const auto& row : v.rows)
        if (i >= row.size() || !null_literal(*row[i])) return false;
      return true;
    }
    case RelKind::kSetOp: {
      const auto& so = static_cast<const SetOpNode&>(n);
      return column_is_null_literal(*so.left, i) && column_is_null_literal(*so.right, i);
    }
    case RelKind::kSort:
    case RelKind::kLimit:
    case RelKind::kDistinct:
    case RelKind::kFilter: {
      auto kids = n.children();
      return kids.size() == 1 && kids[0] && column_is_null_literal(*kids[0], i);
    }
    default: return false;
  }
}

}  // namespace

std::vector<std::string> Planner::search_path() const {
  if (authored_) return {home_schema_};
  std::vector<std::string> path;
  if (!home_schema_.empty()) path.push_back(home_schema_);
  const auto& rest = !home_schema_.empty() || statement_path_.empty() ? db_.schema_path() : statement_path_;
  for (const auto& s : rest)
    if (std::find(path.begin(), path.end(), s) == path.end()) path.push_back(s);
  return path;
}

ResolvedRelation Planner::resolve_relation(const ast::QualifiedName& name) {
  std::vector<std::string> path = search_path();
  return db_.resolve_relation(name.schema, name.name, &path);
}

QueryPlan Planner::plan_view_body(const ast::Select& body, const std::string& home_schema) {
  // A body planned on its own (CREATE VIEW, introspection, view writes) counts as one level,
  // as it does when a reference expands it (plan_view), so a view that can be created can
  // also be read.
  std::optional<ExpansionGuard> own_level;
  if (expansion_depth_ == 0) own_level.emplace(*this, "a view body", body.site);
  // Swapped out (and back, also on error) so the body sees only its own WITH clause.
  auto saved_ctes = std::move(cte_stack_);
  cte_stack_.clear();
  std::string saved_home = std::exchange(home_schema_, home_schema);
  auto saved_path = std::move(statement_path_);
  statement_path_.clear();
  bool saved_authored = std::exchange(authored_, false);
  auto restore = [&] {
    cte_stack_ = std::move(saved_ctes);
    home_schema_ = std::move(saved_home);
    statement_path_ = std::move(saved_path);
    authored_ = saved_authored;
  };
  try {
    QueryPlan qp = plan_select(body, nullptr);
    restore();
    return qp;
  } catch (...) {
    restore();
    throw;
  }
}

std::string key_proof_facts(const TableSchema& t) {
  std::string out;
  for (const ColumnSchema& c : t.columns) out += c.name + (c.not_null ? " nn;" : " null;");
  out += "pk";
  for (const KeyColumn& k : t.primary_key) out += " " + std::to_string(k.column);
  for (const CheckSchema& ck : t.checks)
    out += ";check " + std::to_string(ck.on_insert) + std::to_string(ck.on_update) + " " + expr_to_sql(*ck.expr);
  return out;
}

// A view referenced in FROM: its body planned afresh (a view is not cached), under the
// reference's alias, with the view's column list naming the body's outputs.
Planner::Source Planner::plan_view(const ViewEntry& view, const ast::TableSource& src) {
  if (std::find(expanding_views_.begin(), expanding_views_.end(), &view) != expanding_views_.end())
    fail(StatusCode::kError, "View '" + view.qualified_name() + "' refers to itself", src.site);
  ExpansionGuard guard(*this, "view '" + view.qualified_name() + "'", src.site);
  expanding_views_.push_back(&view);
  QueryPlan qp;
  try {
    // A logical table's body as this reference reads it: started from an auxiliary
    // (a routed WHERE), without the mandatory members it reads nothing of.
    std::unique_ptr<ast::Select> body;
    auto routed = aux_routing_.find(&src);
    if (routed != aux_routing_.end() && routed->second.slot == view.lens)
      body = routed_body(*view.definition->select, routed->second);
    if (routed != aux_routing_.end()) aux_routing_.erase(routed);
    auto used = used_columns_.find(&src);
    if (used != used_columns_.end() && view.lens) {
      if (auto reduced = reduced_body(body ? *body : *view.definition->select, *view.lens, used->second))
        body = std::move(reduced);
    }
    if (used != used_columns_.end()) used_columns_.erase(used);
    qp = plan_view_body(body ? *body : *view.definition->select, view.schema_name);
  } catch (...) {
    expanding_views_.pop_back();
    throw;
  }
  expanding_views_.pop_back();
  size_t width = qp.root->columns.size();
  if (!view.columns.empty() && view.columns.size() != width)
    fail(StatusCode::kError, "View '" + view.name + "' has " + std::to_string(view.columns.size()) +
                                 " declared columns but body produces " + std::to_string(width),
         src.site);
  // A logical table: the keys its lens proved that the body's own facts do not show
  // (AssertedKeys, spec/lens.md "FD contribution to the optimizer"), while the basis
  // facts the proof read stand. The body is planned afresh per reference, so its root is
  // this reference's own.
  if (view.lens && qp.root->kind == RelKind::kProject)
    for (const LensSlot::AssertedKey& key : view.lens->asserted_keys) {
      std::shared_ptr<TableEntry> basis = db_.catalog().find(key.basis_schema, key.basis_table);
      if (!basis || key_proof_facts(basis->schema) != key.facts) continue;
      std::vector<int> at;
      for (const std::string& name : key.columns)
        for (size_t i = 0; i < width; ++i)
          if (iequals(view.columns.empty() ? qp.names[i] : view.columns[i], name)) {
            at.push_back(static_cast<int>(i));
            break;
          }
      std::sort(at.begin(), at.end());
      if (at.size() == key.columns.size() && std::find(qp.root->keys.begin(), qp.root->keys.end(), at) == qp.root->keys.end())
        qp.root->keys.push_back(std::move(at));
    }
  Source out;
  out.node = qp.root;
  out.scope = output_scope(qp, src.alias.empty() ? view.name : src.alias, view.schema_name, view.columns);
  return out;
}

// A window call in `e`, not looking inside subqueries.
static bool contains_window_call(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::kFunction && static_cast<const ast::FunctionCall&>(e).over) return true;
  bool found = false;
  ast::for_each_child_expr(e, [&](const ast::ExprPtr& x) { found = found || contains_window_call(*x); });
  return found;
}

// Plans a CTE body. A recursive CTE (a compound whose last arm references the CTE) becomes
// a RecursiveCteNode over a working table; anything else plans as an ordinary query — a
// body under WITH RECURSIVE that never names its CTE included (sql-select.md 3.7.2: the
// recursive case is the "query that references cte_name"; iterating a body that does not
// would only repeat its rows).
QueryPlan Planner::plan_cte(const ast::CommonTableExpr& cte, CteBinding& binding, const Scope* outer) {
  const ast::Select& sel = *cte.select;
  bool union_arm = !sel.compounds.empty() && (sel.compounds.back().op == ast::CompoundOp::kUnion ||
                                              sel.compounds.back().op == ast::CompoundOp::kUnionAll);
  bool names_itself = false;
  if (binding.recursive && union_arm) {
    std::vector<const ast::QualifiedName*> named;
    ast::named_sources(sel, named);
    for (const ast::QualifiedName* n : named)
      if (n->schema.empty() && iequals(n->name, cte.name)) names_itself = true;
  }
  if (!binding.recursive || !union_arm || !names_itself) {
    CteBinding hidden = binding;
    binding.recursive = false;  // a non-recursive body does not see itself
    QueryPlan qp = plan_select(sel, outer);
    binding = hidden;
    return qp;
  }
  if (!sel.order_by.empty())
    throw Error(StatusCode::kUnsupported, "ORDER BY on a recursive CTE body is not supported yet");
  // The body's own WITH is visible to both of its terms.
  if (sel.with) push_with(*sel.with, &sel);
  struct WithPop {
    Planner& planner;
    bool pushed;
    ~WithPop() { if (pushed) planner.pop_with(); }
  } with_pop{*this, sel.with != nullptr};
  // Initial term: the arms before the first one naming the CTE; the recursive term: that
  // arm and every later one (SQLite's multiple recursive SELECTs), each run over the
  // previous iteration's rows, when all of them are joined by UNION [ALL].
  auto arm_names_itself = [&](const ast::SelectCore& c) {
    std::vector<const ast::QualifiedName*> named;
    ast::named_sources(c, named);
    return std::any_of(named.begin(), named.end(),
                       [&](const ast::QualifiedName* n) { return n->schema.empty() && iequals(n->name, cte.name); });
  };
  size_t first_rec = sel.compounds.size() - 1;  // index into compounds
  for (size_t i = 0; i + 1 < sel.compounds.size(); ++i)
    if (arm_names_itself(sel.compounds[i].core)) {
      first_rec = i;
      break;
    }
  bool all_unions = true, union_all = true;
  for (size_t i = first_rec; i < sel.compounds.size(); ++i) {
    const ast::CompoundOp op = sel.compounds[i].op;
    if (op != ast::CompoundOp::kUnion && op != ast::CompoundOp::kUnionAll) all_unions = false;
    if (op != ast::CompoundOp::kUnionAll) union_all = false;
  }
  if (!all_unions) first_rec = sel.compounds.size() - 1;
  // Each iteration reads only the previous one's rows, so an aggregate or window over the
  // recursive term would fold one iteration, not the relation: refused as SQLite does (it
  // ran on to the iteration limit).
  for (size_t i = first_rec; i < sel.compounds.size(); ++i) {
    const ast::SelectCore& c = sel.compounds[i].core;
    if (c.nested || !c.values.empty()) continue;
    bool aggregate = !c.group_by.empty() || (c.having && contains_aggregate(*c.having));
    bool window = false;
    for (const ast::ResultColumn& rc : c.columns) {
      if (!rc.expr) continue;
      aggregate = aggregate || contains_aggregate(*rc.expr);
      window = window || contains_window_call(*rc.expr);
    }
    if (aggregate) throw Error(StatusCode::kError, "recursive aggregate queries not supported");
    if (window) throw Error(StatusCode::kError, "cannot use window functions in recursive queries");
  }
  const ast::SelectCore& rec_core = sel.compounds[first_rec].core;
  CteBinding saved = binding;
  binding.recursive = false;
  QueryPlan init = plan_core(sel.core, outer, nullptr, nullptr);
  for (size_t i = 0; i < first_rec; ++i) {
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
    for (size_t i = first_rec + 1; i < sel.compounds.size(); ++i) {
      QueryPlan more = plan_core(sel.compounds[i].core, outer, nullptr, nullptr);
      if (more.root->columns.size() != rec.root->columns.size())
        throw Error(StatusCode::kError, "column count mismatch: SELECTs to the left and right of UNION do not have the same number of result columns");
      auto so = std::make_shared<SetOpNode>();
      so->op = ast::CompoundOp::kUnionAll;
      so->left = rec.root;
      so->right = more.root;
      so->columns = rec.root->columns;
      rec.root = so;
    }
  } catch (...) {
    binding.working.reset();
    throw;
  }
  binding.working.reset();
  if (rec.root->columns.size() != working->columns.size())
    throw Error(StatusCode::kError, "column count mismatch: SELECTs to the left and right of UNION do not have the same number of result columns");
  auto node = std::make_shared<RecursiveCteNode>();
  node->name = cte.name;
  node->union_all = all_unions ? union_all : sel.compounds.back().op == ast::CompoundOp::kUnionAll;
  if (binding.max_recursion) {
    node->max_iterations = *binding.max_recursion;
    node->explicit_limit = true;
  }
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

RelPtr Planner::cast_columns(RelPtr node, const std::vector<qrs_logical_type>& casts) {
  if (std::all_of(casts.begin(), casts.end(), [](qrs_logical_type t) { return t == QRS_LT_ANY; })) return node;
  auto proj = std::make_shared<ProjectNode>();
  proj->input = node;
  proj->columns = node->columns;
  for (size_t i = 0; i < node->columns.size(); ++i) {
    const Attribute& a = node->columns[i];
    auto c = std::make_shared<ColumnScalar>(0, static_cast<int>(i), a.id);
    c->type = a.type;
    c->collation = a.collation;
    proj->exprs.push_back(with_cast(c, casts[i]));
    if (casts[i] == QRS_LT_ANY) continue;
    proj->columns[i].id = mint_attr();
    proj->columns[i].type = casts[i];
    proj->columns[i].collation = nullptr;
  }
  return proj;
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
    // `order by 2 collate nocase` names output column 2 under that collation (see
    // bind_order_term); a COLLATE over a name binds through the output scope as it is.
    const ast::CollateExpr* coll = te->kind == ast::ExprKind::kCollate ? static_cast<const ast::CollateExpr*>(te) : nullptr;
    if (coll && coll->operand->kind == ast::ExprKind::kLiteral &&
        static_cast<const ast::Literal*>(coll->operand.get())->literal_kind == ast::LiteralKind::kInteger)
      te = coll->operand.get();
    else
      coll = nullptr;
    if (te->kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal*>(te)->literal_kind == ast::LiteralKind::kInteger) {
      int n = std::atoi(static_cast<const ast::Literal*>(te)->text.c_str());
      if (n < 1 || n > static_cast<int>(names.size()))
        fail(StatusCode::kError, "ORDER BY position " + std::to_string(n) + " is not in the SELECT list", te->site);
      // The output column as a name would bind it: its type too, so a TIMESPAN (or JSON)
      // column sorts semantically (types.md "Semantic ordering"; `… union all … order by 1`
      // ranked durations as text).
      const Attribute& col = node->columns[n - 1];
      auto c = std::make_shared<ColumnScalar>(0, n - 1, col.id);
      c->type = col.type;
      c->set_collation(col.collation, col.collation_source);
      if (coll) c->set_collation(resolve_collation(coll->collation), CollationSource::kExplicit);
      sk.expr = c;
    } else {
      sk.expr = bind_expr(*te, out_scope);
    }
    s->sort_keys.push_back(sk);
  }
  return s;
}

QueryPlan Planner::plan_select(const ast::Select& sel, const Scope* outer) {
  if (sel.dml) return plan_dml(make_dml_run(*sel.dml));
  // WITH DEFAULTS is inert outside a write-through target (sql-select.md). WITH SCHEMA sets
  // the search path for everything this query expression plans (its CTEs, subqueries).
  struct PathRestore {
    std::vector<std::string>& path;
    std::vector<std::string> saved;
    bool active;
    ~PathRestore() { if (active) path = std::move(saved); }
  } path_restore{statement_path_, statement_path_, !sel.schema_path.empty()};
  if (!sel.schema_path.empty()) set_statement_path(sel.schema_path);
  // Membership flags widen their operator's output, so only the outermost operator (the
  // first leg: compounds associate to the right) may carry them for now.
  for (size_t k = 1; k < sel.compounds.size(); ++k) {
    const auto& leg = sel.compounds[k];
    if (!leg.membership.empty()) {
      throw Error(StatusCode::kUnsupported,
                  "Set-operation membership columns (EXISTS LEFT/RIGHT AS) on a nested set operation are not supported yet",
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
    push_with(*sel.with, &sel);
    cte_pop.pushed = true;
  }

  bool compound = !sel.compounds.empty();
  RelPtr sorted;
  QueryPlan first = plan_core(sel.core, effective_outer, compound ? nullptr : &sel.order_by, &sorted);
  RelPtr node = first.root;
  std::vector<std::string> names = first.names;
  if (compound) {
    // Compound operators associate to the right: A UNION B EXCEPT C is A UNION (B EXCEPT C).
    std::vector<RelPtr> arms{node};
    for (const auto& leg : sel.compounds) arms.push_back(plan_core(leg.core, effective_outer, nullptr, nullptr).root);
    node = arms.back();
    for (size_t k = sel.compounds.size(); k-- > 0;) {
      const ast::CompoundOp op = sel.compounds[k].op;
      RelPtr lhs = arms[k];
      RelPtr rhs = node;
      if (rhs->columns.size() != lhs->columns.size())
        throw Error(StatusCode::kError, "column count mismatch: SELECTs to the left and right of " +
                                            std::string(op == ast::CompoundOp::kUnion ? "UNION" :
                                                        op == ast::CompoundOp::kUnionAll ? "UNION ALL" :
                                                        op == ast::CompoundOp::kIntersect ? "INTERSECT" :
                                                        op == ast::CompoundOp::kExcept ? "EXCEPT" : "DIFF") +
                                            " do not have the same number of result columns");
      // Each output column's type is the symmetric merge of the arms' types; a JSON column
      // against any other converts the other arm's values to JSON, so both arms compare
      // (and store) as JSON (docs: types, set operations as conversion sites).
      std::vector<qrs_logical_type> lhs_casts(lhs->columns.size(), QRS_LT_ANY), rhs_casts(lhs_casts);
      for (size_t i = 0; i < lhs->columns.size(); ++i) {
        qrs_logical_type lt = lhs->columns[i].type, rt = rhs->columns[i].type;
        if ((lt == QRS_LT_JSON) != (rt == QRS_LT_JSON)) (lt == QRS_LT_JSON ? rhs_casts : lhs_casts)[i] = QRS_LT_JSON;
      }
      lhs = cast_columns(lhs, lhs_casts);
      rhs = cast_columns(rhs, rhs_casts);
      auto s = std::make_shared<SetOpNode>();
      s->op = op;
      s->left = lhs;
      s->right = rhs;
      s->columns = lhs->columns;
      for (size_t i = 0; i < s->columns.size(); ++i) {
        s->columns[i].id = mint_attr();
        s->columns[i].name = names[i];
        // A NULL-literal arm yields to the other (types-inference.md "Common type
        // resolution": `select 5 union all select null` is INTEGER).
        if (column_is_null_literal(*lhs, i)) s->columns[i].type = rhs->columns[i].type;
        else if (!column_is_null_literal(*rhs, i))
          s->columns[i].type = merge_branch_types(s->columns[i].type, rhs->columns[i].type);
        s->columns[i].nullable = s->columns[i].nullable || rhs->columns[i].nullable;
        // Each column compares (de-duplicates) under one collation resolved from both
        // arms, as a comparison would; UNION ALL compares nothing, so a conflict there
        // passes on no collation instead of failing.
        CollationBid lb = collation_bid(lhs->columns[i].collation, lhs->columns[i].collation_source);
        CollationBid rb = collation_bid(rhs->columns[i].collation, rhs->columns[i].collation_source);
        CollationBid bid = op == ast::CompoundOp::kUnionAll ? combine_collation_bids(lb, rb)
                                                             : merge_collation_bids(lb, rb, sel.site);
        s->columns[i].collation = bid.collation;
        s->columns[i].collation_source = bid.source;
      }
      // A distinct set operation's rows are a set: its data columns together are a key.
      if (op != ast::CompoundOp::kUnionAll) {
        std::vector<int> all(s->columns.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
        s->keys.push_back(std::move(all));
      }
      for (const ast::ExistenceColumn& m : sel.compounds[k].membership) {
        s->membership.push_back(m.side == ast::ExistenceColumn::Side::kLeft ? JoinNode::Side::kLeft
                                                                            : JoinNode::Side::kRight);
        Attribute a;
        a.id = mint_attr();
        a.name = m.name;
        a.type = QRS_LT_BOOLEAN;
        a.nullable = false;
        s->columns.push_back(a);
        names.push_back(m.name);
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
