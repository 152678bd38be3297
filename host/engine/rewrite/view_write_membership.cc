// Writes through set-operation views whose addressed rows must be captured before any
// branch is written (vu-setops.md, set-operation membership writes): bodies with
// membership flags (`union exists left as inA, exists right as inB`), INTERSECT and
// EXCEPT bodies, and bodies whose operand is itself a set operation. A flag-less chain of
// UNION / UNION ALL legs is written leg by leg instead (view_write_setops.cc).
//
// The shape: the view rows the statement addresses, with their membership flags, are
// captured once (`select * from <view> where <user where>`, bound as __vw_setop) and
// every branch statement reads that capture — so a branch written first cannot change
// which rows a sibling branch addresses. A branch statement is a write through the leg
// as an ephemeral view (its columns are the set operation's data columns), lowered by
// the single-source spine; it finds its rows by a NULL-safe match of the whole data
// tuple against the capture.
#include <array>
#include <functional>
#include <optional>
#include <type_traits>

#include "common/status.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "planner/planner.h"
#include "rewrite/view_shape.h"

namespace quereus::view_write {

namespace {

constexpr const char* kCapture = "__vw_setop";  // the captured view rows
constexpr const char* kRow = "__vw_s";          // a row of the capture

[[noreturn]] void refuse(const ViewEntry& view, const std::string& why) {
  throw Error(StatusCode::kError, "cannot write through view '" + view.name + "': " + why);
}

const char* side_name(int side) { return side == 0 ? "left" : "right"; }

const char* op_name(ast::CompoundOp op) {
  switch (op) {
    case ast::CompoundOp::kUnion: return "UNION";
    case ast::CompoundOp::kUnionAll: return "UNION ALL";
    case ast::CompoundOp::kIntersect: return "INTERSECT";
    case ast::CompoundOp::kExcept: return "EXCEPT";
    default: return "DIFF";
  }
}

bool is_union(ast::CompoundOp op) { return op == ast::CompoundOp::kUnion || op == ast::CompoundOp::kUnionAll; }

// What the body analysis carries while it walks the compound chain.
struct BodyContext {
  const ViewEntry& view;
  const ast::Select& body;
  std::vector<std::string> data;  // the data columns' names, as the view exposes them
};

std::shared_ptr<const ViewEntry> leg_view(const BodyContext& c, const ast::SelectCore& core) {
  auto def = std::make_shared<ast::CreateViewStmt>();
  def->view = {c.view.schema_name, c.view.name, {}};
  def->columns = c.data;
  def->select = std::make_unique<ast::Select>();
  def->select->core = clone(core);
  def->select->schema_path = c.body.schema_path;
  def->select->defaults = clone(c.body.defaults);
  auto leg = std::make_shared<ViewEntry>();
  leg->schema_name = c.view.schema_name;
  leg->name = c.view.name;
  leg->columns = c.data;
  leg->definition = std::move(def);
  return leg;
}

SetOpTree chain(const BodyContext& c, const ast::Select& sel, size_t i);

SetOpOperand operand(const BodyContext& c, const ast::SelectCore& core) {
  SetOpOperand out;
  if (core.nested) {
    const ast::Select& n = *core.nested;
    if (n.compounds.empty() || n.with || !n.order_by.empty() || n.limit || n.offset || n.dml)
      refuse(c.view, "a parenthesized leg with its own WITH, ORDER BY or LIMIT is not updatable");
    out.tree = std::make_unique<SetOpTree>(chain(c, n, 0));
    return out;
  }
  out.leg = leg_view(c, core);
  return out;
}

// The operator `sel.compounds[i]` with its two operands (compounds group to the right:
// its right operand is the rest of the chain).
SetOpTree chain(const BodyContext& c, const ast::Select& sel, size_t i) {
  const ast::CompoundLeg& leg = sel.compounds[i];
  if (leg.op == ast::CompoundOp::kDiff)
    refuse(c.view, "a DIFF (symmetric difference) body has no single addressable branch per row");
  SetOpTree t;
  t.op = leg.op;
  t.sides[0] = operand(c, i == 0 ? sel.core : sel.compounds[i - 1].core);
  if (i + 1 < sel.compounds.size()) {
    t.sides[1].tree = std::make_unique<SetOpTree>(chain(c, sel, i + 1));
  } else {
    t.sides[1] = operand(c, leg.core);
  }
  return t;
}

void collect_leaves(const SetOpOperand& o, std::vector<std::shared_ptr<const ViewEntry>>& out) {
  if (o.leg) {
    out.push_back(o.leg);
    return;
  }
  collect_leaves(o.tree->sides[0], out);
  collect_leaves(o.tree->sides[1], out);
}

// The leaves a data write or a delete into `o` reaches: an EXCEPT's right operand holds
// none of its members, so it is left out.
void collect_fan_leaves(const SetOpOperand& o, std::vector<std::shared_ptr<const ViewEntry>>& out) {
  if (o.leg) {
    out.push_back(o.leg);
    return;
  }
  collect_fan_leaves(o.tree->sides[0], out);
  if (o.tree->op != ast::CompoundOp::kExcept) collect_fan_leaves(o.tree->sides[1], out);
}

bool all_unions(const SetOpTree& t) {
  if (!is_union(t.op)) return false;
  for (const SetOpOperand& o : t.sides)
    if (o.tree && !all_unions(*o.tree)) return false;
  return true;
}

// `true` / `false` (or 1 / 0) as a membership value; nullopt for anything else.
std::optional<bool> boolean_literal(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::kLiteral) return std::nullopt;
  auto& l = static_cast<const ast::Literal&>(e);
  if (l.literal_kind == ast::LiteralKind::kTrue) return true;
  if (l.literal_kind == ast::LiteralKind::kFalse) return false;
  if (l.literal_kind == ast::LiteralKind::kInteger && (l.text == "1" || l.text == "0")) return l.text == "1";
  return std::nullopt;
}

}  // namespace

// ------------------------------------------------------------------ the body's shape

std::vector<std::shared_ptr<const ViewEntry>> SetOpBody::leaves(int side) const {
  std::vector<std::shared_ptr<const ViewEntry>> out;
  for (int s = 0; s < 2; ++s)
    if (side < 0 || side == s) collect_leaves(root.sides[s], out);
  return out;
}

bool SetOpBody::flat_union() const { return flags[0].empty() && flags[1].empty() && all_unions(root); }

int SetOpBody::flag_side(std::string_view name) const {
  for (int s = 0; s < 2; ++s)
    if (!flags[s].empty() && iequals(flags[s], name)) return s;
  return -1;
}

int SetOpBody::data_index(std::string_view name) const {
  for (size_t i = 0; i < data; ++i)
    if (iequals(names[i], name)) return static_cast<int>(i);
  return -1;
}

std::vector<int> SetOpBody::fan_sides() const {
  if (root.op == ast::CompoundOp::kExcept) return {0};
  return {0, 1};
}

std::optional<SetOpBody> set_op_body(PlanningContext& db, const ViewEntry& view) {
  const ast::Select& body = *view.definition->select;
  if (body.compounds.empty() || body.dml) return std::nullopt;
  if (body.limit || body.offset)
    refuse(view, "LIMIT/OFFSET body cannot be reproduced as a predicate on the base rows (unsupported-limit)");
  if (body.with) refuse(view, "a body with its own WITH clause is not updatable yet");
  SetOpBody out;
  out.names = view.columns;
  if (out.names.empty()) {
    Planner planner(db);
    out.names = planner.plan_view_body(body, view.schema_name).names;
  }
  const auto& membership = body.compounds.front().membership;
  if (membership.size() > out.names.size()) refuse(view, "its membership columns leave no data column");
  out.data = out.names.size() - membership.size();
  for (size_t j = 0; j < membership.size(); ++j) {
    int side = membership[j].side == ast::ExistenceColumn::Side::kRight ? 1 : 0;
    out.flags[side] = out.names[out.data + j];
  }
  BodyContext c{view, body, std::vector<std::string>(out.names.begin(), out.names.begin() + out.data)};
  out.root = chain(c, body, 0);
  return out;
}

// The legs a data write or a delete over operand `side` of the root reaches, each with the
// root's membership flag it is confined by ("" when none is needed). A UNION operand's
// legs hold only its rows, so the captured data tuple finds exactly the rows to write;
// an EXCEPT / INTERSECT operand's legs also hold rows that are not its members, so the
// write is confined to the captured rows whose flag for that operand is true — which
// needs the flag declared, and one flag confines one level only.
std::vector<FanTarget> fan_targets(const ViewEntry& view, const SetOpBody& b, int side) {
  const SetOpOperand& o = b.root.sides[side];
  if (o.leg) return {{o.leg, ""}};
  std::string gate;
  if (!is_union(o.tree->op)) {
    if (b.flags[side].empty())
      refuse(view, std::string("its ") + side_name(side) + " operand is an " + op_name(o.tree->op) +
                       " with no membership flag to confine the write to its members; declare 'exists " +
                       side_name(side) + " as <flag>' on the outer operator (set-op-membership-nested-except)");
    gate = b.flags[side];
  }
  std::function<void(const SetOpTree&)> below = [&](const SetOpTree& t) {
    for (const SetOpOperand& inner : t.sides) {
      if (!inner.tree) continue;
      if (!is_union(inner.tree->op))
        refuse(view, std::string("an ") + op_name(inner.tree->op) +
                         " nested inside an operand has no membership flag to confine the write to its members "
                         "(set-op-membership-nested-except)");
      below(*inner.tree);
    }
  };
  below(*o.tree);
  std::vector<std::shared_ptr<const ViewEntry>> legs;
  collect_fan_leaves(o, legs);
  std::vector<FanTarget> out;
  for (auto& leg : legs) out.push_back({leg, gate});
  return out;
}

// ------------------------------------------------------------------ lowering

namespace {

// Everything a branch statement is built from.
struct MembershipWrite {
  PlanningContext& db;
  const ViewEntry& view;
  const SetOpBody& body;
  const std::vector<std::string>& caller_path;
  bool ephemeral;  // a CTE or inline subquery target (not in the catalog)

  ViewShape shape(const ViewEntry& leg) const {
    ViewShape v = analyze(db, leg);
    v.db = &db;
    v.caller_path = caller_path;
    return v;
  }

  // Lowers `stmt` (retargeted at `leg`, called by the view's name) through the leg: a
  // single-source leg in place; a leg over a join becomes its own CTE target, lowered
  // through the join path with its own key capture when planned (leg_as_cte_target).
  template <typename S>
  ast::StatementPtr through_leg(std::unique_ptr<S> stmt, const ViewEntry& leg) const {
    ViewShape v = shape(leg);
    if (v.join()) {
      size_t index = 0;
      const auto legs = body.leaves();
      while (index < legs.size() && legs[index].get() != &leg) ++index;
      return leg_as_cte_target(v, *stmt, index);
    }
    if constexpr (std::is_same_v<S, ast::UpdateStmt>) lower_update(*stmt, v);
    else if constexpr (std::is_same_v<S, ast::DeleteStmt>) lower_delete(*stmt, v);
    else lower_insert(*stmt, v);
    return stmt;
  }

  // `exists (select 1 from __vw_setop as __vw_s where [__vw_s.<gate> and] __vw_s.c0 is
  // <view>.c0 and …)`: the leg row (called by the view's name) is a captured one.
  ExprPtr member_exists(const std::string& gate) const {
    ExprPtr match;
    for (size_t i = 0; i < body.data; ++i)
      match = conjoin(std::move(match), binary(ast::BinaryOp::kIs, ast::column_ref(kRow, body.names[i]),
                                               ast::column_ref(view.name, body.names[i])));
    if (!gate.empty()) match = conjoin(ast::column_ref(kRow, gate), std::move(match));
    std::vector<ast::ResultColumn> one;
    one.push_back(ast::result_column(ast::integer_literal(1)));
    return ast::exists(ast::select(std::move(one), ast::table_source({"", kCapture, {}}, kRow), std::move(match)));
  }

  // `select * from <view> as <target> where <where>`: the addressed view rows.
  ast::StatementPtr capture(const std::string& target, const ast::Expr* where, const ast::WithClause* with,
                            const std::vector<std::string>& schema_path) const {
    ast::TableSourcePtr src =
        ephemeral ? ast::subquery_source(clone(*view.definition->select), target, view.columns)
                  : ast::table_source({view.schema_name, view.name, {}}, target);
    std::vector<ast::ResultColumn> cols;
    cols.push_back(ast::star());
    auto stmt = std::make_unique<ast::SelectStmt>();
    stmt->select = ast::select(std::move(cols), std::move(src), where ? clone(*where) : nullptr);
    if (with) stmt->select->with = clone(*with);
    stmt->select->schema_path = schema_path;
    return stmt;
  }

  // An UPDATE / DELETE copy of `stmt` retargeted at a leg (called by the view's name).
  template <typename S>
  std::unique_ptr<S> retargeted(const S& stmt) const {
    auto copy = std::unique_ptr<S>(static_cast<S*>(clone(stmt).release()));
    copy->table = {"", view.name, {}};  // the alias, if any, stays: SET values may use it
    copy->target_query.reset();
    copy->target_columns.clear();
    copy->returning.clear();
    return copy;
  }
};

void refuse_returning(const ViewEntry& view, bool has) {
  if (has) refuse(view, "RETURNING through a set-operation view is not supported yet");
}

// `value` read over the capture row: its references to the view's columns (unqualified at
// its own level, or qualified by the view's name or the statement's alias) read __vw_s.
ExprPtr over_capture(const MembershipWrite& w, ExprPtr value, const std::string& target) {
  walk(value, [&](ExprPtr& x, int depth) {
    if (x->kind != ast::ExprKind::kColumn) return false;
    auto& ref = static_cast<ast::ColumnRef&>(*x);
    bool mine = ref.schema.empty() &&
                ((ref.table.empty() && depth == 0) || iequals(ref.table, target) || iequals(ref.table, w.view.name));
    if (mine && (w.body.data_index(ref.column) >= 0 || w.body.flag_side(ref.column) >= 0))
      x = ast::column_ref(kRow, ref.column);
    return true;
  });
  return value;
}

// `set <flag> = true`: the captured rows absent from leg `side` are inserted into it, with
// the statement's data assignments folded in. A redundant flip inserts nothing.
ast::StatementPtr membership_insert(const MembershipWrite& w, const ast::UpdateStmt& s, int side,
                                    const std::vector<const ast::Assignment*>& data) {
  const SetOpOperand& o = w.body.root.sides[side];
  if (!o.leg)
    refuse(w.view, "setting '" + w.body.flags[side] + "' to true would insert into the " + side_name(side) +
                       " operand, itself a set operation, where no single leg is the target (set-op-membership-nested)");
  ViewShape v = w.shape(*o.leg);
  const std::string target = s.alias.empty() ? s.table.name : s.alias;
  auto ins = std::make_unique<ast::InsertStmt>();
  ins->table = {"", w.view.name, {}};
  ins->schema_path = s.schema_path;
  ins->context = clone(s.context);
  ins->tags = clone(s.tags);
  if (s.with) ins->with = clone(*s.with);
  std::vector<ast::ResultColumn> cols;
  for (size_t i = 0; i < w.body.data; ++i) {
    const std::string& name = w.body.names[i];
    // A leg's literal column (a discriminator) is implied by the leg: nothing to write.
    const ViewColumn* c = v.find(name);
    if (c && c->base.empty() && !c->authored && c->term && c->term->kind == ast::ExprKind::kLiteral) continue;
    ExprPtr value = ast::column_ref(kRow, name);
    for (const ast::Assignment* a : data)
      if (iequals(a->columns[0], name)) value = over_capture(w, clone(*a->value), target);
    ins->columns.push_back(name);
    cols.push_back(ast::result_column(std::move(value), name));
  }
  ins->source = ast::select(std::move(cols), ast::table_source({"", kCapture, {}}, kRow),
                            ast::logical_not(ast::column_ref(kRow, w.body.flags[side])));
  ins->source->schema_path = s.schema_path;
  return w.through_leg(std::move(ins), *o.leg);
}

// The UPDATE's assignments sorted into membership flips (per side) and data assignments.
struct SortedAssignments {
  std::optional<bool> flip[2];
  std::vector<const ast::Assignment*> data;
};

SortedAssignments sort_assignments(const MembershipWrite& w, const ast::UpdateStmt& s) {
  SortedAssignments out;
  for (const ast::Assignment& a : s.assignments) {
    if (a.columns.size() != 1) refuse(w.view, "row-value assignments through a view are not supported yet");
    const std::string& name = a.columns[0];
    if (int side = w.body.flag_side(name); side >= 0) {
      std::optional<bool> value = boolean_literal(*a.value);
      if (!value)
        refuse(w.view, "the membership column '" + name +
                           "' must be assigned a boolean literal (true/false); a per-row branch on a non-literal "
                           "value is not supported");
      if (out.flip[side] && *out.flip[side] != *value)
        refuse(w.view, std::string("the ") + side_name(side) +
                           " branch's membership is assigned both true and false in one statement");
      out.flip[side] = value;
      continue;
    }
    if (w.body.data_index(name) < 0) {
      std::string all;
      for (auto& n : w.body.names) all += (all.empty() ? "" : ", ") + n;
      refuse(w.view, "'" + name + "' is not a data or membership column of the set operation (it exposes " + all + ")");
    }
    out.data.push_back(&a);
  }
  if (!out.data.empty() && (out.flip[0] == false || out.flip[1] == false))
    refuse(w.view, "a membership-flag write removes a branch (= false) while the same statement also writes a data "
                   "column that fans out to that branch; the two effects contradict");
  return out;
}

// UPDATE: data assignments reach every leg the addressed row is in; `set <flag> = true`
// inserts the row into that operand, `= false` deletes it from that operand's legs.
void lower_update_through(const MembershipWrite& w, const ast::UpdateStmt& s, LoweredWrite& out) {
  refuse_returning(w.view, !s.returning.empty());
  SortedAssignments sorted = sort_assignments(w, s);
  const std::string target = s.alias.empty() ? s.table.name : s.alias;
  out.capture = w.capture(target, s.where.get(), s.with.get(), s.schema_path);
  out.capture_name = kCapture;
  if (!sorted.data.empty()) {
    for (int side : w.body.fan_sides())
      for (const FanTarget& t : fan_targets(w.view, w.body, side)) {
        auto u = w.retargeted(s);
        std::vector<ast::Assignment> kept;
        for (const ast::Assignment* a : sorted.data) kept.push_back(clone(*a));
        u->assignments = std::move(kept);
        u->where = w.member_exists(t.gate);
        out.statements.push_back(w.through_leg(std::move(u), *t.leg));
      }
  }
  for (int side = 0; side < 2; ++side) {
    if (!sorted.flip[side]) continue;
    if (*sorted.flip[side]) {
      out.statements.push_back(membership_insert(w, s, side, sorted.data));
      continue;
    }
    for (const FanTarget& t : fan_targets(w.view, w.body, side)) {
      auto d = std::make_unique<ast::DeleteStmt>();
      d->table = {"", w.view.name, {}};
      d->schema_path = s.schema_path;
      d->context = clone(s.context);
      d->tags = clone(s.tags);
      d->where = w.member_exists(w.body.flags[side]);
      out.statements.push_back(w.through_leg(std::move(d), *t.leg));
    }
  }
}

// DELETE: the addressed rows leave every leg they are in (an EXCEPT's left operand only:
// its right operand holds none of them).
void lower_delete_through(const MembershipWrite& w, const ast::DeleteStmt& s, LoweredWrite& out) {
  refuse_returning(w.view, !s.returning.empty());
  const std::string target = s.alias.empty() ? s.table.name : s.alias;
  out.capture = w.capture(target, s.where.get(), s.with.get(), s.schema_path);
  out.capture_name = kCapture;
  for (int side : w.body.fan_sides())
    for (const FanTarget& t : fan_targets(w.view, w.body, side)) {
      auto d = w.retargeted(s);
      d->where = w.member_exists(t.gate);
      out.statements.push_back(w.through_leg(std::move(d), *t.leg));
    }
}

// For each VALUES row of an INSERT, the operands it goes to: those whose membership flag
// the row sets true, or (no flags) every operand of an INTERSECT and the left one of an
// EXCEPT.
std::vector<std::array<bool, 2>> insert_routes(const MembershipWrite& w, const ast::InsertStmt& s,
                                               const std::vector<std::string>& cols) {
  const auto& rows = s.source->core.values;
  std::vector<std::array<bool, 2>> out(rows.size(), {false, false});
  const bool flagged = !w.body.flags[0].empty() || !w.body.flags[1].empty();
  if (!flagged) {
    if (w.body.root.op != ast::CompoundOp::kIntersect && w.body.root.op != ast::CompoundOp::kExcept)
      refuse(w.view, "an INSERT through a set operation whose operand is an EXCEPT / INTERSECT needs membership flags "
                     "to route it (set-op-membership-nested-except)");
    for (auto& r : out) r = {true, w.body.root.op == ast::CompoundOp::kIntersect};
    return out;
  }
  for (int side = 0; side < 2; ++side) {
    const std::string& flag = w.body.flags[side];
    if (flag.empty()) continue;
    size_t at = 0;
    while (at < cols.size() && !iequals(cols[at], flag)) ++at;
    if (at == cols.size())
      refuse(w.view, "the membership flag '" + flag +
                         "' must be supplied to route the insert to its branch (a flag-less multi-branch insert is "
                         "ambiguous)");
    for (size_t r = 0; r < rows.size(); ++r) {
      std::optional<bool> on = at < rows[r].size() ? boolean_literal(*rows[r][at]) : std::nullopt;
      if (!on) refuse(w.view, "the membership flag '" + flag + "' of an inserted row must be a boolean literal (true/false)");
      out[r][side] = *on;
    }
  }
  for (size_t r = 0; r < rows.size(); ++r)
    if (!out[r][0] && !out[r][1])
      refuse(w.view, "the inserted row " + std::to_string(r + 1) +
                         " sets no membership flag true, so it would belong to no branch");
  return out;
}

// INSERT … VALUES: each row goes to the legs insert_routes picks, without its flags.
void lower_insert_through(const MembershipWrite& w, const ast::InsertStmt& s, LoweredWrite& out) {
  refuse_returning(w.view, !s.returning.empty());
  const bool plain_values = s.source && s.source->compounds.empty() && !s.source->core.values.empty() &&
                            s.source->order_by.empty() && !s.source->limit && !s.source->with;
  if (!plain_values)
    refuse(w.view, "an INSERT through a set-operation view needs a VALUES source (each row is routed to its branches)");
  if (!s.upserts.empty()) refuse(w.view, "ON CONFLICT through a set-operation view is not supported yet");
  std::vector<std::string> cols = s.columns.empty() ? w.body.names : s.columns;
  std::vector<size_t> data_at;  // positions of the data columns among `cols`
  for (size_t i = 0; i < cols.size(); ++i) {
    if (w.body.flag_side(cols[i]) >= 0) continue;
    if (w.body.data_index(cols[i]) < 0)
      refuse(w.view, "'" + cols[i] + "' is not a data or membership column of the set operation");
    data_at.push_back(i);
  }
  auto routes = insert_routes(w, s, cols);
  for (int side = 0; side < 2; ++side) {
    std::vector<size_t> mine;
    for (size_t r = 0; r < routes.size(); ++r)
      if (routes[r][side]) mine.push_back(r);
    if (mine.empty()) continue;
    const SetOpOperand& o = w.body.root.sides[side];
    if (!o.leg)
      refuse(w.view, std::string("inserting into the ") + side_name(side) +
                         " operand, itself a set operation, has no single target leg (set-op-membership-nested)");
    auto copy = std::unique_ptr<ast::InsertStmt>(static_cast<ast::InsertStmt*>(clone(s).release()));
    copy->table = {"", w.view.name, {}};
    copy->alias.clear();
    copy->columns.clear();
    for (size_t i : data_at) copy->columns.push_back(cols[i]);
    std::vector<std::vector<ExprPtr>> kept;
    for (size_t r : mine) {
      std::vector<ExprPtr> row;
      for (size_t i : data_at)
        if (i < copy->source->core.values[r].size()) row.push_back(std::move(copy->source->core.values[r][i]));
      kept.push_back(std::move(row));
    }
    copy->source->core.values = std::move(kept);
    out.statements.push_back(w.through_leg(std::move(copy), *o.leg));
  }
}

}  // namespace

void lower_membership_write(PlanningContext& db, const ViewEntry& view, const SetOpBody& body,
                            const ast::Statement& stmt, const std::vector<std::string>& caller_path, bool ephemeral,
                            LoweredWrite& out) {
  MembershipWrite w{db, view, body, caller_path, ephemeral};
  switch (stmt.kind) {
    case ast::StmtKind::kInsert: lower_insert_through(w, static_cast<const ast::InsertStmt&>(stmt), out); break;
    case ast::StmtKind::kUpdate: lower_update_through(w, static_cast<const ast::UpdateStmt&>(stmt), out); break;
    default: lower_delete_through(w, static_cast<const ast::DeleteStmt&>(stmt), out); break;
  }
}

}  // namespace quereus::view_write
