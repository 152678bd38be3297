// What a plan or an expression reads (see plan_reads.h).
#include "planner/plan_reads.h"

#include <functional>
#include <string>

#include "catalog/function.h"
#include "common/strings.h"
#include "types/logical_type.h"

namespace quereus {

namespace {



// Whether a call of a kClockArgs function (date, datetime, strftime, …) may read the clock
// or the time zone: an argument that is 'now' / 'localtime' or may evaluate to it (anything
// but a literal, a column of a type that holds no text, or such a call under a sign, cast
// or COLLATE). The schema gate's rule (ddl/schema_expressions.cc clock_reason), on the plan.
bool may_read_clock(const FunctionScalar& f) {
  std::function<bool(const ScalarExpr&)> arg = [&](const ScalarExpr& a) -> bool {
    switch (a.kind) {
      case ScalarKind::kLiteral: {
        const Value& v = static_cast<const LiteralScalar&>(a).value;
        if (v.type() != ValueType::kText) return false;
        std::string t = to_lower(v.str());
        t.erase(0, t.find_first_not_of(" \t\n\r"));
        t.erase(t.find_last_not_of(" \t\n\r") + 1);
        return t == "now" || t == "localtime";
      }
      case ScalarKind::kColumn:
        return !(is_numeric_type(a.type) || a.type == QRS_LT_BOOLEAN || a.type == QRS_LT_DATE ||
                 a.type == QRS_LT_TIME || a.type == QRS_LT_DATETIME);
      case ScalarKind::kUnary: return arg(*static_cast<const UnaryScalar&>(a).operand);
      case ScalarKind::kCast: return arg(*static_cast<const CastScalar&>(a).operand);
      case ScalarKind::kCollate: return arg(*static_cast<const CollateScalar&>(a).operand);
      case ScalarKind::kFunction: {
        const auto& g = static_cast<const FunctionScalar&>(a);
        return !(g.fn && (g.fn->flags & kClockArgs)) || may_read_clock(g);
      }
      default: return true;
    }
  };
  for (const ScalarPtr& a : f.args)
    if (a && arg(*a)) return true;
  return false;
}

}  // namespace

// `shift` is how many frames deeper `e` is evaluated than the starting frame.
void collect_reads(const ScalarPtr& e, int shift, FrameRefs& out) {
  if (!e) return;
  if (e->kind == ScalarKind::kColumn) {
    const auto& c = static_cast<const ColumnScalar&>(*e);
    if (c.level >= shift) {
      out.frames.insert(c.level - shift);
      out.columns.insert({c.level - shift, c.slot});
    }
    if (c.level == shift) out.row_slots.insert(c.slot);
    return;
  }
  if (is_subquery(e->kind)) {
    const auto& s = static_cast<const SubqueryScalar&>(*e);
    if (s.plan) collect_reads(*s.plan, shift + 1, out);
    if (s.correlated) out.correlated_subquery = true;
  }
  if (e->kind == ScalarKind::kFunction) {
    const auto& f = static_cast<const FunctionScalar&>(*e);
    const uint32_t flags = f.fn->flags;
    if (!(flags & kDeterministic)) {
      out.nondeterministic = true;
      if (!(flags & kClockArgs) || may_read_clock(f)) out.volatile_call = true;
    }
    if (flags & kPerRow) out.per_row = true;
  }
  for (const ScalarPtr* o : e->operands()) collect_reads(*o, shift, out);
}

// A node's own expressions see its input row at level 0 and the rows its operator was
// opened with from level 1 on; every operator but the semi join opens its children with
// its own outer rows.
void collect_reads(const RelNode& n, int shift, FrameRefs& out) {
  for_each_expression(n, [&](const ScalarPtr& e, int deeper) { collect_reads(e, shift + deeper, out); });
  switch (n.kind) {
    case RelKind::kJoin: {
      const auto& j = static_cast<const JoinNode&>(n);
      if (!j.index_lookup) break;
      // index_nested_loop re-opens the right side per left row, with that row at level 1.
      collect_reads(*j.left, shift, out);
      collect_reads(*j.right, shift + 1, out);
      return;
    }
    case RelKind::kTableFunction:
      if (!(static_cast<const TableFunctionNode&>(n).fn->flags & kDeterministic)) out.per_row = true;
      break;
    case RelKind::kSemiJoin: {
      // Its right side runs one frame deeper (the right row / an empty row).
      const auto& j = static_cast<const SemiJoinNode&>(n);
      collect_reads(*j.left, shift, out);
      collect_reads(*j.right, shift + 1, out);
      return;
    }
    case RelKind::kWorkingTable:
      if (!static_cast<const WorkingTableNode&>(n).bound) out.working_table = true;
      break;
    case RelKind::kTableScan:
    case RelKind::kValues:
    case RelKind::kFilter:
    case RelKind::kProject:
    case RelKind::kAggregate:
    case RelKind::kSort:
    case RelKind::kLimit:
    case RelKind::kWindow:
    case RelKind::kSingleRow:
    case RelKind::kDistinct:
    case RelKind::kSetOp:
    case RelKind::kRecursiveCte:
    case RelKind::kCache: break;
    default: out.unknown = true; return;
  }
  for (const RelNode* c : n.children()) collect_reads(*c, shift, out);
}

FrameRefs frames_of(const ScalarPtr& e) {
  FrameRefs r;
  collect_reads(e, 0, r);
  return r;
}


PlanReads plan_reads(const RelNode& n) {
  FrameRefs r;
  collect_reads(n, 0, r);
  PlanReads out;
  out.outer = !r.frames.empty() && *r.frames.rbegin() >= 1;
  out.unknown = r.unknown;
  out.nondeterministic = r.nondeterministic || r.per_row;
  out.volatile_rows = r.volatile_call || r.per_row;
  out.working_table = r.working_table;
  out.correlated_subquery = r.correlated_subquery;
  return out;
}

std::optional<std::vector<std::pair<int, int>>> correlation_inputs(const RelNode& plan) {
  FrameRefs r;
  collect_reads(plan, 1, r);  // the plan's level 1 is the row the subquery is evaluated on
  if (r.unknown || r.nondeterministic || r.per_row || r.working_table) return std::nullopt;
  return std::vector<std::pair<int, int>>(r.columns.begin(), r.columns.end());
}

bool row_slots_read(const ScalarPtr& e, std::vector<int>& slots) {
  FrameRefs r = frames_of(e);
  if (r.unknown || r.nondeterministic) return false;
  slots.assign(r.row_slots.begin(), r.row_slots.end());
  return true;
}

}  // namespace quereus
