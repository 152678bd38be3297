// Relational properties (see properties.h): per-operator propagation of FDs, ECs and
// constant bindings, following the table in optimizer-fd.md § Per-operator propagation.
#include "planner/properties.h"

#include <algorithm>
#include <map>
#include <set>


namespace quereus {

namespace {

using Kind = FunctionalDependency::Kind;

// `matched`: outer joins count as inner joins (derive_match_properties).
RelProperties derive(bool matched, const RelNode& node);

std::vector<int> all_columns(size_t n) {
  std::vector<int> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<int>(i);
  return out;
}

void add_fd(RelProperties& p, std::vector<int> det, std::vector<int> dep, Kind kind) {
  std::sort(det.begin(), det.end());
  det.erase(std::unique(det.begin(), det.end()), det.end());
  std::sort(dep.begin(), dep.end());
  dep.erase(std::unique(dep.begin(), dep.end()), dep.end());
  dep.erase(std::remove_if(dep.begin(), dep.end(),
                           [&](int c) { return std::binary_search(det.begin(), det.end(), c); }),
            dep.end());
  for (auto& fd : p.fds) {  // equal determinants merge; 'unique' wins
    if (fd.determinants == det) {
      std::vector<int> merged;
      std::set_union(fd.dependents.begin(), fd.dependents.end(), dep.begin(), dep.end(),
                     std::back_inserter(merged));
      fd.dependents = std::move(merged);
      if (kind == Kind::kUnique) fd.kind = Kind::kUnique;
      return;
    }
  }
  if (dep.empty() && kind != Kind::kUnique) return;
  p.fds.push_back({std::move(det), std::move(dep), kind});
}

// A unique key as an FD: key → every other column.
void add_key(RelProperties& p, const std::vector<int>& key, size_t ncols) {
  add_fd(p, key, all_columns(ncols), Kind::kUnique);
}

void merge_ec(RelProperties& p, int a, int b) {
  std::vector<int> merged{a, b};
  std::vector<std::vector<int>> rest;
  for (auto& ec : p.equivalence_classes) {
    if (std::find(ec.begin(), ec.end(), a) != ec.end() || std::find(ec.begin(), ec.end(), b) != ec.end()) {
      merged.insert(merged.end(), ec.begin(), ec.end());
    } else {
      rest.push_back(ec);
    }
  }
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  rest.push_back(std::move(merged));
  p.equivalence_classes = std::move(rest);
}

// Extends every binding over the equivalence classes of its columns.
void close_bindings(RelProperties& p) {
  for (auto& b : p.constants) {
    for (const auto& ec : p.equivalence_classes) {
      bool touches = std::any_of(b.columns.begin(), b.columns.end(),
                                 [&](int c) { return std::find(ec.begin(), ec.end(), c) != ec.end(); });
      if (touches) b.columns.insert(b.columns.end(), ec.begin(), ec.end());
    }
    std::sort(b.columns.begin(), b.columns.end());
    b.columns.erase(std::unique(b.columns.begin(), b.columns.end()), b.columns.end());
  }
}

// Renumbers columns through `map` (old position → new, -1 when dropped). An FD survives
// when all its determinants and at least one dependent survive; classes and bindings
// keep their surviving members.
RelProperties remap(const RelProperties& in, const std::vector<int>& map, bool downgrade) {
  auto at = [&](int c) { return c >= 0 && static_cast<size_t>(c) < map.size() ? map[c] : -1; };
  RelProperties out;
  for (const auto& fd : in.fds) {
    std::vector<int> det, dep;
    bool ok = true;
    for (int c : fd.determinants) {
      if (at(c) < 0) ok = false;
      else det.push_back(at(c));
    }
    if (!ok) continue;
    for (int c : fd.dependents)
      if (at(c) >= 0) dep.push_back(at(c));
    if (dep.empty() && fd.kind != Kind::kUnique) continue;
    add_fd(out, det, dep, downgrade ? Kind::kDetermination : fd.kind);
  }
  for (const auto& ec : in.equivalence_classes) {
    std::vector<int> m;
    for (int c : ec)
      if (at(c) >= 0) m.push_back(at(c));
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
    if (m.size() >= 2) out.equivalence_classes.push_back(std::move(m));
  }
  for (const auto& b : in.constants) {
    ConstantBinding nb = b;
    nb.columns.clear();
    for (int c : b.columns)
      if (at(c) >= 0) nb.columns.push_back(at(c));
    if (!nb.columns.empty()) out.constants.push_back(std::move(nb));
  }
  return out;
}

void append(RelProperties& out, const RelProperties& in) {
  for (const auto& fd : in.fds) add_fd(out, fd.determinants, fd.dependents, fd.kind);
  for (const auto& ec : in.equivalence_classes) {
    for (size_t i = 1; i < ec.size(); ++i) merge_ec(out, ec[0], ec[i]);
  }
  out.constants.insert(out.constants.end(), in.constants.begin(), in.constants.end());
}

bool is_text(qrs_logical_type t) { return t == QRS_LT_TEXT || t == QRS_LT_ANY; }

// An equality implies value equality only under a value-discriminating comparison:
// non-text operands, or text compared BINARY.
bool value_discriminating(const BinaryScalar& b) {
  if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq && b.op != ast::BinaryOp::kIs) return false;
  if (b.compare_collation && b.compare_collation != &Collation::binary()) {
    return !is_text(b.left->type) && !is_text(b.right->type);
  }
  return true;
}

const ColumnScalar* local_column(const ScalarExpr& e) {
  if (e.kind != ScalarKind::kColumn) return nullptr;
  auto& c = static_cast<const ColumnScalar&>(e);
  return c.level == 0 ? &c : nullptr;
}

bool pin_value(const ScalarExpr& e, ConstantBinding* out) {
  if (e.kind == ScalarKind::kLiteral) {
    out->value = static_cast<const LiteralScalar&>(e).value;
    return !out->value.is_null();  // `= NULL` pins nothing
  }
  if (e.kind == ScalarKind::kParam) {
    auto& p = static_cast<const ParamScalar&>(e);
    out->is_parameter = true;
    out->parameter = p.index;
    out->parameter_name = p.name;
    return true;
  }
  return false;
}

// Equality conjuncts of a predicate over the node's own columns.
void add_equalities(RelProperties& p, const ScalarPtr& predicate) {
  if (!predicate) return;
  std::vector<ScalarPtr> conjuncts;
  split_conjuncts(predicate, conjuncts);
  for (const auto& c : conjuncts) {
    if (c->kind != ScalarKind::kBinary) continue;
    auto& b = static_cast<const BinaryScalar&>(*c);
    if (!value_discriminating(b)) continue;
    const ColumnScalar* l = local_column(*b.left);
    const ColumnScalar* r = local_column(*b.right);
    if (l && r) {
      if (b.duration_order) continue;  // semantic-ordering gate on cross-column facts
      if (l->slot == r->slot) continue;
      merge_ec(p, l->slot, r->slot);
      add_fd(p, {l->slot}, {r->slot}, Kind::kDetermination);
      add_fd(p, {r->slot}, {l->slot}, Kind::kDetermination);
      continue;
    }
    const ColumnScalar* col = l ? l : r;
    const ScalarExpr* other = l ? b.right.get() : b.left.get();
    ConstantBinding binding;
    if (col && pin_value(*other, &binding)) {
      add_fd(p, {}, {col->slot}, Kind::kDetermination);
      binding.columns = {col->slot};
      p.constants.push_back(std::move(binding));
    }
  }
  close_bindings(p);
}

// When constant bindings pin every column of a unique FD's determinants, the relation
// has at most one row.
void add_singleton_if_key_pinned(RelProperties& p, size_t ncols) {
  std::set<int> pinned;
  for (const auto& b : p.constants) pinned.insert(b.columns.begin(), b.columns.end());
  for (const auto& fd : p.fds) {
    if (fd.kind != Kind::kUnique || fd.determinants.empty()) continue;
    if (std::all_of(fd.determinants.begin(), fd.determinants.end(), [&](int c) { return pinned.count(c); })) {
      add_key(p, {}, ncols);
      return;
    }
  }
}

// True when every row of one side meets at most one row of `other` under the join's
// equi-pairs (`other_cols`: the other side's paired columns, in its own numbering).
bool matches_at_most_one(const RelProperties& other, const std::vector<int>& other_cols, size_t other_ncols) {
  return other.is_unique(other_cols, other_ncols);
}

// A table scan: its keys, and the columns its equality filters pin.
RelProperties derive_table_scan(const TableScanNode& scan) {
  RelProperties p;
  const RelNode& node = scan;
  const size_t n = node.columns.size();
  for (const auto& key : node.keys) add_key(p, key, n);
  for (const auto& f : scan.filters) {
    if (f.op != QRS_OP_EQ || !f.value) continue;
    const Attribute& a = node.columns[f.column];
    if (is_text(a.type) && a.collation && a.collation != &Collation::binary()) continue;
    ConstantBinding b;
    if (!pin_value(*f.value, &b)) continue;
    b.columns = {f.column};
    add_fd(p, {}, {f.column}, Kind::kDetermination);
    p.constants.push_back(std::move(b));
  }
  add_singleton_if_key_pinned(p, n);
  return p;
}

// A projection: the input's facts over the columns it passes through bare.
RelProperties derive_project(const ProjectNode& pr, bool matched) {
  const size_t n = pr.columns.size();
  RelProperties in = derive(matched, *pr.input);
  // Bare columns pass their facts through; a column projected twice is an EC.
  std::vector<int> map(pr.input->columns.size(), -1);
  std::vector<std::pair<int, int>> repeats;
  for (size_t i = 0; i < pr.exprs.size(); ++i) {
    const ColumnScalar* c = local_column(*pr.exprs[i]);
    if (!c || c->slot < 0 || static_cast<size_t>(c->slot) >= map.size()) continue;
    if (map[c->slot] < 0) map[c->slot] = static_cast<int>(i);
    else repeats.emplace_back(map[c->slot], static_cast<int>(i));
  }
  RelProperties p = remap(in, map, false);
  for (auto [a, b] : repeats) {
    merge_ec(p, a, b);
    add_fd(p, {a}, {b}, Kind::kDetermination);
    add_fd(p, {b}, {a}, Kind::kDetermination);
  }
  close_bindings(p);
  if (in.is_set) {
    // Set-ness survives only when every input column is projected.
    p.is_set = std::all_of(map.begin(), map.end(), [](int m) { return m >= 0; });
  }
  for (const auto& key : pr.keys) add_key(p, key, n);
  return p;
}

// Equi-pairs of the ON clause (value-discriminating, no semantic-ordering mix), as
// (left column, right column in the right side's own numbering).
std::vector<std::pair<int, int>> join_equi_pairs(const JoinNode& j, size_t lw) {
  std::vector<std::pair<int, int>> pairs;
  if (!j.on) return pairs;
  std::vector<ScalarPtr> conj;
  split_conjuncts(j.on, conj);
  for (const auto& c : conj) {
    if (c->kind != ScalarKind::kBinary) continue;
    auto& b = static_cast<const BinaryScalar&>(*c);
    if (!value_discriminating(b) || b.duration_order || b.op == ast::BinaryOp::kIs) continue;
    const ColumnScalar* x = local_column(*b.left);
    const ColumnScalar* y = local_column(*b.right);
    if (!x || !y) continue;
    int a = x->slot, bb = y->slot;
    if (a > bb) std::swap(a, bb);
    if (a < static_cast<int>(lw) && bb >= static_cast<int>(lw)) pairs.emplace_back(a, bb - static_cast<int>(lw));
  }
  return pairs;
}

// ON conjuncts pinning one side's column (`u.k = 1`) narrow the rows of that side a
// row of the other side can meet: adds them to that side's constants.
void add_on_pins(const JoinNode& j, size_t lw, RelProperties& l_on, RelProperties& r_on) {
  if (!j.on) return;
  std::vector<ScalarPtr> conj;
  split_conjuncts(j.on, conj);
  for (const auto& c : conj) {
    if (c->kind != ScalarKind::kBinary) continue;
    auto& b = static_cast<const BinaryScalar&>(*c);
    if (!value_discriminating(b)) continue;
    const ColumnScalar* col = local_column(*b.left);
    const ScalarExpr* other = b.right.get();
    if (!col) {
      col = local_column(*b.right);
      other = b.left.get();
    }
    ConstantBinding pin;
    if (!col || !pin_value(*other, &pin)) continue;
    if (col->slot < static_cast<int>(lw)) {
      pin.columns = {col->slot};
      l_on.constants.push_back(pin);
    } else {
      pin.columns = {col->slot - static_cast<int>(lw)};
      r_on.constants.push_back(pin);
    }
  }
}

// A join: each kept side's facts (downgraded where the other side fans it out), plus the
// ON equalities when both sides are kept.
}  // namespace

bool left_meets_at_most_one(const JoinNode& j) {
  const size_t lw = j.left->columns.size(), rw = j.right->columns.size();
  RelProperties l = derive(false, *j.left), r = derive(false, *j.right);
  add_on_pins(j, lw, l, r);
  std::vector<int> rcols;
  for (auto [a, b] : join_equi_pairs(j, lw)) rcols.push_back(b);
  return matches_at_most_one(r, rcols, rw);
}

namespace {

RelProperties derive_join(const JoinNode& j, bool matched) {
  RelProperties p;
  const size_t n = j.columns.size();
  RelProperties l = derive(matched, *j.left), r = derive(matched, *j.right);
  const size_t lw = j.left->columns.size(), rw = j.right->columns.size();
  std::vector<std::pair<int, int>> pairs = join_equi_pairs(j, lw);
  // Pinned ON conjuncts count when deciding who fans out.
  RelProperties l_on = l, r_on = r;
  add_on_pins(j, lw, l_on, r_on);
  std::vector<int> lcols, rcols;
  for (auto [a, b] : pairs) {
    lcols.push_back(a);
    rcols.push_back(b);
  }
  // A side is preserved (not fanned out) when its rows meet at most one row of the other.
  const bool left_preserved = matches_at_most_one(r_on, rcols, rw);
  const bool right_preserved = matches_at_most_one(l_on, lcols, lw);
  std::vector<int> lmap = all_columns(lw), rmap(rw);
  for (size_t i = 0; i < rw; ++i) rmap[i] = static_cast<int>(lw + i);
  using JK = ast::JoinKind;
  const JK kind = matched && j.join != JK::kCross ? JK::kInner : j.join;
  const bool keep_left = kind != JK::kRight && kind != JK::kFull;
  const bool keep_right = kind == JK::kInner || kind == JK::kCross;
  const bool keep_left_outer_mirror = kind == JK::kRight;
  // A lateral right side's facts (its keys, its determinations) hold within one call — per
  // left row — not across the output: only the product key below carries them.
  if (keep_left) append(p, remap(l, lmap, !left_preserved));
  if (keep_right && !j.lateral) append(p, remap(r, rmap, !right_preserved));
  if (keep_left_outer_mirror && !j.lateral) append(p, remap(r, rmap, !right_preserved));
  if (keep_left && keep_right) {
    for (auto [a, b] : pairs) {
      int rb = static_cast<int>(lw) + b;
      merge_ec(p, a, rb);
      add_fd(p, {a}, {rb}, Kind::kDetermination);
      add_fd(p, {rb}, {a}, Kind::kDetermination);
    }
    close_bindings(p);
  }
  // A pair of rows is identified by a key of each side (a lateral right side's key holds
  // per left row, which is all the pair needs): the product key, from each side's first.
  if (keep_left && keep_right && !l.fds.empty() && !r.fds.empty()) {
    const std::vector<int>* lk = nullptr;
    const std::vector<int>* rk = nullptr;
    for (const auto& fd : l.fds)
      if (fd.kind == Kind::kUnique && (!lk || fd.determinants.size() < lk->size())) lk = &fd.determinants;
    for (const auto& fd : r.fds)
      if (fd.kind == Kind::kUnique && (!rk || fd.determinants.size() < rk->size())) rk = &fd.determinants;
    if (lk && rk) {
      std::vector<int> key = *lk;
      for (int c : *rk) key.push_back(static_cast<int>(lw) + c);
      add_key(p, key, n);
    }
  }
  for (const auto& key : j.keys) add_key(p, key, n);
  return p;
}

// An aggregation: the input's facts over the grouping columns, and the group key.
RelProperties derive_aggregate(const AggregateNode& a, bool matched) {
  const size_t n = a.columns.size();
  RelProperties in = derive(matched, *a.input);
  std::vector<int> map(a.input->columns.size(), -1);
  std::vector<int> group;
  for (size_t i = 0; i < a.group_by.size(); ++i) {
    group.push_back(static_cast<int>(i));
    const ColumnScalar* c = local_column(*a.group_by[i]);
    if (c && c->slot >= 0 && static_cast<size_t>(c->slot) < map.size() && map[c->slot] < 0) {
      map[c->slot] = static_cast<int>(i);
    }
  }
  RelProperties p = remap(in, map, false);
  add_key(p, group, n);  // the group key; with no GROUP BY, ∅ → all (one row)
  return p;
}

RelProperties derive(bool matched, const RelNode& node) {
  RelProperties p;
  const size_t n = node.columns.size();
  switch (node.kind) {
    case RelKind::kTableScan: return derive_table_scan(static_cast<const TableScanNode&>(node));
    case RelKind::kValues: {
      if (static_cast<const ValuesNode&>(node).rows.size() <= 1) add_key(p, {}, n);
      return p;
    }
    case RelKind::kSingleRow:
      add_key(p, {}, n);
      return p;
    case RelKind::kFilter: {
      auto& f = static_cast<const FilterNode&>(node);
      p = derive(matched, *f.input);
      add_equalities(p, f.predicate);
      add_singleton_if_key_pinned(p, n);
      return p;
    }
    case RelKind::kProject: return derive_project(static_cast<const ProjectNode&>(node), matched);
    case RelKind::kJoin: return derive_join(static_cast<const JoinNode&>(node), matched);
    case RelKind::kSemiJoin:
      // A subset of the left rows, each at most once: every fact of the left side holds.
      return derive(matched, *static_cast<const SemiJoinNode&>(node).left);
    case RelKind::kAggregate: return derive_aggregate(static_cast<const AggregateNode&>(node), matched);
    case RelKind::kDistinct: {
      p = derive(matched, *static_cast<const DistinctNode&>(node).input);
      p.is_set = true;
      return p;
    }
    case RelKind::kSort:
      return derive(matched, *static_cast<const SortNode&>(node).input);
    case RelKind::kCache:
      return derive(matched, *static_cast<const CacheNode&>(node).input);
    case RelKind::kLimit: {
      auto& l = static_cast<const LimitNode&>(node);
      p = derive(matched, *l.input);
      if (l.limit && l.limit->kind == ScalarKind::kLiteral) {
        const Value& v = static_cast<const LiteralScalar&>(*l.limit).value;
        if (v.type() == ValueType::kInteger && v.as_int() <= 1) add_key(p, {}, n);
      }
      return p;
    }
    case RelKind::kSetOp: {
      auto& s = static_cast<const SetOpNode&>(node);
      using Op = ast::CompoundOp;
      p.is_set = s.op != Op::kUnionAll;
      if (s.op == Op::kIntersect || s.op == Op::kExcept) {
        RelProperties l = derive(matched, *s.left);
        for (const auto& fd : l.fds)
          if (fd.kind == Kind::kUnique) p.fds.push_back(fd);
      }
      return p;
    }
    case RelKind::kRecursiveCte: {
      // WITH RECURSIVE … UNION drops every row already produced: the result is a set.
      p.is_set = !static_cast<const RecursiveCteNode&>(node).union_all;
      for (const auto& key : node.keys) add_key(p, key, n);
      return p;
    }
    case RelKind::kWindow: {
      const RelNode* in = node.children().empty() ? nullptr : node.children()[0];
      if (in) p = derive(matched, *in);
      return p;
    }
    default:
      for (const auto& key : node.keys) add_key(p, key, n);
      return p;
  }
}

void json_ints(std::string& out, const std::vector<int>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
}

}  // namespace

std::vector<int> RelProperties::closure(std::vector<int> cols) const {
  std::set<int> have(cols.begin(), cols.end());
  for (const auto& b : constants) have.insert(b.columns.begin(), b.columns.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& ec : equivalence_classes) {
      if (std::any_of(ec.begin(), ec.end(), [&](int c) { return have.count(c); })) {
        for (int c : ec) changed |= have.insert(c).second;
      }
    }
    for (const auto& fd : fds) {
      if (std::all_of(fd.determinants.begin(), fd.determinants.end(), [&](int c) { return have.count(c); })) {
        for (int c : fd.dependents) changed |= have.insert(c).second;
      }
    }
  }
  return std::vector<int>(have.begin(), have.end());
}

bool RelProperties::is_unique(const std::vector<int>& cols, size_t column_count) const {
  std::vector<int> c = closure(cols);
  std::set<int> have(c.begin(), c.end());
  if (is_set && have.size() >= column_count) return true;
  for (const auto& fd : fds) {
    if (fd.kind != FunctionalDependency::Kind::kUnique) continue;
    if (std::all_of(fd.determinants.begin(), fd.determinants.end(), [&](int x) { return have.count(x); })) return true;
  }
  return false;
}

std::string RelProperties::to_json() const {
  std::string out = "{\"fds\":[";
  for (size_t i = 0; i < fds.size(); ++i) {
    if (i) out += ',';
    out += "{\"determinants\":";
    json_ints(out, fds[i].determinants);
    out += ",\"dependents\":";
    json_ints(out, fds[i].dependents);
    out += fds[i].kind == FunctionalDependency::Kind::kUnique ? ",\"kind\":\"unique\"}" : ",\"kind\":\"determination\"}";
  }
  out += "],\"equivalenceClasses\":[";
  for (size_t i = 0; i < equivalence_classes.size(); ++i) {
    if (i) out += ',';
    json_ints(out, equivalence_classes[i]);
  }
  out += "],\"constants\":[";
  for (size_t i = 0; i < constants.size(); ++i) {
    if (i) out += ',';
    out += "{\"columns\":";
    json_ints(out, constants[i].columns);
    out += constants[i].is_parameter ? ",\"parameter\":true}" : ",\"parameter\":false}";
  }
  out += "],\"isSet\":";
  out += is_set ? "true}" : "false}";
  return out;
}

RelProperties derive_properties(const RelNode& node) { return derive(false, node); }

RelProperties derive_match_properties(const RelNode& node) { return derive(true, node); }

}  // namespace quereus
