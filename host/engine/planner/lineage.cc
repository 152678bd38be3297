// Column lineage (see lineage.h): per-operator propagation of where each output column
// comes from, and the source-row properties key-preservation questions are asked of.
#include "planner/lineage.h"

#include <algorithm>
#include <cstdint>

#include "catalog/catalog.h"
#include "catalog/function.h"

namespace quereus {

namespace {

// The lineage of one node's output, before the properties are attached.
struct NodeLineage {
  std::vector<ColumnLineage> columns;
  std::vector<ScanLineage> scans;
  std::vector<std::pair<int, int>> join_equalities;  // output positions
  // The same ON equalities between bare scan columns, kept when a projection inside the
  // join tree prunes one of their columns (a three-way join's inner pair).
  std::vector<JoinEquality> scan_equalities;
};

ColumnLineage computed(const ScalarExpr* expr) {
  ColumnLineage c;
  c.expr = expr;
  return c;
}

// Every column computed, no scan visible: the operators lineage does not survive.
NodeLineage opaque(const RelNode& node) {
  NodeLineage out;
  out.columns.assign(node.columns.size(), ColumnLineage{});
  return out;
}

std::vector<std::vector<int>> table_keys(const TableSchema& ts) {
  std::vector<std::vector<int>> keys;
  std::vector<int> pk;
  for (auto& k : ts.primary_key) pk.push_back(k.column);
  if (pk.empty())
    for (size_t i = 0; i < ts.columns.size(); ++i) pk.push_back(static_cast<int>(i));
  keys.push_back(std::move(pk));
  for (auto& ix : ts.indexes) {
    if (!ix.unique || ix.where) continue;
    std::vector<int> cols;
    bool not_null = true;
    for (auto& c : ix.columns) {
      cols.push_back(c.column);
      not_null = not_null && c.column >= 0 && ts.columns[c.column].not_null;
    }
    if (not_null && !cols.empty()) keys.push_back(std::move(cols));
  }
  return keys;
}

NodeLineage derive_scan(const TableScanNode& scan) {
  NodeLineage out;
  const TableSchema& ts = scan.table->schema;
  if (scan.columns.size() != ts.columns.size()) return opaque(scan);
  ScanLineage s;
  s.table = scan.table;
  for (size_t i = 0; i < ts.columns.size(); ++i) {
    s.positions.push_back(static_cast<int>(i));
    ColumnLineage c;
    c.kind = ColumnLineage::Kind::kBase;
    c.scan = 0;
    c.column = static_cast<int>(i);
    out.columns.push_back(c);
  }
  s.keys = table_keys(ts);
  out.scans.push_back(std::move(s));
  return out;
}

// A numeric constant (a literal, possibly signed): its value.
bool numeric_constant(const ScalarExpr& e, Value* out) {
  if (e.kind == ScalarKind::kLiteral) {
    const Value& v = static_cast<const LiteralScalar&>(e).value;
    if (v.type() != ValueType::kInteger && v.type() != ValueType::kReal) return false;
    *out = v;
    return true;
  }
  if (e.kind != ScalarKind::kUnary) return false;
  auto& u = static_cast<const UnaryScalar&>(e);
  if (u.op == ast::UnaryOp::kPlus) return numeric_constant(*u.operand, out);
  if (u.op != ast::UnaryOp::kNegate || !numeric_constant(*u.operand, out)) return false;
  if (out->type() == ValueType::kInteger) {
    if (out->as_int() == INT64_MIN) return false;
    *out = Value::Integer(-out->as_int());
  } else {
    *out = Value::Real(-out->as_real());
  }
  return true;
}

InverseStep arithmetic_step(InverseStep::Op op, Value k) {
  InverseStep step;
  step.op = op;
  step.constant = std::move(k);
  return step;
}

// The level-0 column an invertible term reads, appending the inverse steps (outermost
// first) and the cast targets met on the way; null when the term is not invertible.
const ColumnScalar* invertible(const ScalarExpr& e, std::vector<InverseStep>& steps,
                               std::vector<qrs_logical_type>& casts, const std::vector<Attribute>& input) {
  switch (e.kind) {
    case ScalarKind::kColumn: {
      auto& c = static_cast<const ColumnScalar&>(e);
      return c.level == 0 ? &c : nullptr;
    }
    case ScalarKind::kCollate: return invertible(*static_cast<const CollateScalar&>(e).operand, steps, casts, input);
    case ScalarKind::kCast: {
      auto& c = static_cast<const CastScalar&>(e);
      casts.push_back(c.target);
      return invertible(*c.operand, steps, casts, input);
    }
    case ScalarKind::kUnary: {
      auto& u = static_cast<const UnaryScalar&>(e);
      if (u.op == ast::UnaryOp::kPlus) return invertible(*u.operand, steps, casts, input);
      if (u.op != ast::UnaryOp::kNegate) return nullptr;
      steps.push_back(arithmetic_step(InverseStep::Op::kNegate, Value()));
      return invertible(*u.operand, steps, casts, input);
    }
    case ScalarKind::kBinary: {
      auto& b = static_cast<const BinaryScalar&>(e);
      const bool add = b.op == ast::BinaryOp::kAdd;
      if (!add && b.op != ast::BinaryOp::kSub) return nullptr;
      Value k;
      if (numeric_constant(*b.right, &k)) {  // x + k → v - k;  x - k → v + k
        steps.push_back(arithmetic_step(add ? InverseStep::Op::kSubtract : InverseStep::Op::kAdd, k));
        return invertible(*b.left, steps, casts, input);
      }
      if (numeric_constant(*b.left, &k)) {  // k + x → v - k;  k - x → k - v
        steps.push_back(arithmetic_step(add ? InverseStep::Op::kSubtract : InverseStep::Op::kFromConstant, k));
        return invertible(*b.right, steps, casts, input);
      }
      return nullptr;
    }
    case ScalarKind::kFunction: {
      // A function's declared profile (catalog/function.h): passthrough sees through to
      // one argument; inverse adds a step whose other arguments must be constants.
      auto& f = static_cast<const FunctionScalar&>(e);
      // coalesce(x, …) / ifnull(x, d) over a NOT NULL column never reaches its default:
      // a passthrough of x (vu-inverses.md, Scalar Invertibility).
      if (f.fn && (f.fn->name == "coalesce" || f.fn->name == "ifnull") && !f.args.empty() &&
          f.args[0]->kind == ScalarKind::kColumn) {
        auto& c = static_cast<const ColumnScalar&>(*f.args[0]);
        if (c.level == 0 && c.slot >= 0 && static_cast<size_t>(c.slot) < input.size() && !input[c.slot].nullable) return &c;
      }
      if (!f.fn || f.fn->invertibility.kind == Invertibility::Kind::kOpaque) return nullptr;
      const Invertibility& inv = f.fn->invertibility;
      if (inv.arg < 0 || static_cast<size_t>(inv.arg) >= f.args.size()) return nullptr;
      const size_t through = static_cast<size_t>(inv.arg);
      if (inv.kind == Invertibility::Kind::kPassthrough) return invertible(*f.args[through], steps, casts, input);
      InverseStep step;
      step.op = InverseStep::Op::kFunction;
      step.function = inv.inverse;
      for (size_t i = 0; i < f.args.size(); ++i) {
        if (i == through) continue;
        Value k;
        if (f.args[i]->kind == ScalarKind::kLiteral) k = static_cast<const LiteralScalar&>(*f.args[i]).value;
        else if (!numeric_constant(*f.args[i], &k)) return nullptr;
        step.args.push_back(std::move(k));
      }
      steps.push_back(std::move(step));
      return invertible(*f.args[through], steps, casts, input);
    }
    default: return nullptr;
  }
}

NodeLineage derive_node(const RelNode& node);

NodeLineage derive_project(const ProjectNode& pr) {
  NodeLineage in = derive_node(*pr.input);
  NodeLineage out;
  out.scans = in.scans;
  std::vector<int> first(pr.input->columns.size(), -1);  // input slot → its bare output
  for (size_t i = 0; i < pr.exprs.size(); ++i) {
    const ScalarExpr& e = *pr.exprs[i];
    std::vector<InverseStep> steps;
    std::vector<qrs_logical_type> casts;
    const ColumnScalar* read = invertible(e, steps, casts, pr.input->columns);
    if (!read || read->slot < 0 || static_cast<size_t>(read->slot) >= in.columns.size()) {
      out.columns.push_back(computed(&e));
      continue;
    }
    const ColumnLineage& src = in.columns[read->slot];
    const bool bare = e.kind == ScalarKind::kColumn;
    if (bare && first[read->slot] < 0) first[read->slot] = static_cast<int>(i);
    if (bare) {
      out.columns.push_back(src);
      continue;
    }
    if (src.kind != ColumnLineage::Kind::kBase) {
      out.columns.push_back(computed(&e));
      continue;
    }
    // A cast is the identity only onto the base column's own type.
    const qrs_logical_type base_type = in.scans[src.scan].table->schema.columns[src.column].logical_type;
    if (std::any_of(casts.begin(), casts.end(), [&](qrs_logical_type t) { return t != base_type; })) {
      out.columns.push_back(computed(&e));
      continue;
    }
    ColumnLineage c = src;
    c.expr = &e;
    c.inverse = std::move(steps);
    c.inverse.insert(c.inverse.end(), src.inverse.begin(), src.inverse.end());
    out.columns.push_back(std::move(c));
  }
  for (auto& s : out.scans)
    for (int& p : s.positions) p = p >= 0 ? first[p] : -1;
  for (auto& eq : in.join_equalities) {
    int l = first[eq.first], r = first[eq.second];
    if (l >= 0 && r >= 0) out.join_equalities.emplace_back(l, r);
  }
  out.scan_equalities = in.scan_equalities;
  return out;
}

// The ON clause's equalities between two output columns (`a.x = b.y`).
void add_on_equalities(const JoinNode& j, NodeLineage& out) {
  if (!j.on) return;
  std::vector<ScalarPtr> conj;
  split_conjuncts(j.on, conj);
  for (const auto& c : conj) {
    if (c->kind != ScalarKind::kBinary) continue;
    auto& b = static_cast<const BinaryScalar&>(*c);
    if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
    if (b.left->kind != ScalarKind::kColumn || b.right->kind != ScalarKind::kColumn) continue;
    auto& l = static_cast<const ColumnScalar&>(*b.left);
    auto& r = static_cast<const ColumnScalar&>(*b.right);
    if (l.level != 0 || r.level != 0 || l.slot == r.slot) continue;
    out.join_equalities.emplace_back(l.slot, r.slot);
  }
}

NodeLineage derive_join(const JoinNode& j) {
  NodeLineage l = derive_node(*j.left), r = derive_node(*j.right);
  const int lw = static_cast<int>(j.left->columns.size());
  using JK = ast::JoinKind;
  const bool pad_left = j.join == JK::kRight || j.join == JK::kFull;
  const bool pad_right = j.join == JK::kLeft || j.join == JK::kFull;
  NodeLineage out;
  const int left_scans = static_cast<int>(l.scans.size());
  for (auto c : l.columns) {
    c.null_extended = c.null_extended || pad_left;
    out.columns.push_back(c);
  }
  for (auto c : r.columns) {
    if (c.scan >= 0) c.scan += left_scans;
    c.null_extended = c.null_extended || pad_right;
    out.columns.push_back(c);
  }
  for (auto s : l.scans) {
    s.padded = s.padded || pad_left;
    out.scans.push_back(std::move(s));
  }
  for (auto s : r.scans) {
    s.padded = s.padded || pad_right;
    for (int& p : s.positions)
      if (p >= 0) p += lw;
    out.scans.push_back(std::move(s));
  }
  out.join_equalities = l.join_equalities;
  for (auto eq : r.join_equalities) out.join_equalities.emplace_back(eq.first + lw, eq.second + lw);
  out.scan_equalities = l.scan_equalities;
  for (JoinEquality eq : r.scan_equalities) {
    eq.left_scan += left_scans;
    eq.right_scan += left_scans;
    out.scan_equalities.push_back(eq);
  }
  const size_t before = out.join_equalities.size();
  add_on_equalities(j, out);
  for (size_t k = before; k < out.join_equalities.size(); ++k) {
    const auto [a, b] = out.join_equalities[k];
    const ColumnLineage& lc = out.columns[a];
    const ColumnLineage& rc = out.columns[b];
    if (lc.kind != ColumnLineage::Kind::kBase || rc.kind != ColumnLineage::Kind::kBase || !lc.inverse.empty() ||
        !rc.inverse.empty() || lc.scan < 0 || rc.scan < 0 || lc.scan == rc.scan)
      continue;
    out.scan_equalities.push_back({lc.scan, lc.column, rc.scan, rc.column});
  }
  for (auto side : j.existence) {
    ColumnLineage c;
    c.kind = ColumnLineage::Kind::kExistence;
    const bool left = side == JoinNode::Side::kLeft;
    c.scan = left ? (l.scans.empty() ? -1 : 0) : (r.scans.empty() ? -1 : left_scans);
    out.columns.push_back(c);
  }
  if (out.columns.size() != j.columns.size()) return opaque(j);
  return out;
}

NodeLineage derive_node(const RelNode& node) {
  switch (node.kind) {
    case RelKind::kTableScan: return derive_scan(static_cast<const TableScanNode&>(node));
    case RelKind::kFilter: return derive_node(*static_cast<const FilterNode&>(node).input);
    case RelKind::kSort: return derive_node(*static_cast<const SortNode&>(node).input);
    case RelKind::kCache: return derive_node(*static_cast<const CacheNode&>(node).input);
    case RelKind::kSemiJoin: return derive_node(*static_cast<const SemiJoinNode&>(node).left);
    case RelKind::kProject: return derive_project(static_cast<const ProjectNode&>(node));
    case RelKind::kJoin: return derive_join(static_cast<const JoinNode&>(node));
    case RelKind::kWindow: {
      // A window keeps its input rows one-to-one and appends its calls' results: the
      // input columns keep their lineage, the results are computed (vu-operators.md,
      // Window Functions).
      auto& w = static_cast<const WindowNode&>(node);
      NodeLineage out = derive_node(*w.input);
      if (out.columns.size() != w.input->columns.size() || node.columns.size() < out.columns.size()) return opaque(node);
      while (out.columns.size() < node.columns.size()) out.columns.push_back(computed(nullptr));
      return out;
    }
    default: return opaque(node);
  }
}

// The node below the outermost projection (through sorts): where every column of a
// top-level scan is still present.
const RelNode& source_of(const RelNode& root) {
  const RelNode* n = &root;
  while (n->kind == RelKind::kSort) n = static_cast<const SortNode*>(n)->input.get();
  if (n->kind == RelKind::kProject) n = static_cast<const ProjectNode*>(n)->input.get();
  return *n;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The outermost projection's reads (see SourceRead).
std::vector<SourceRead> outermost_reads(const RelNode& root) {
  const RelNode* n = &root;
  while (n->kind == RelKind::kSort) n = static_cast<const SortNode*>(n)->input.get();
  std::vector<SourceRead> out(root.columns.size());
  if (n->kind != RelKind::kProject) {
    for (size_t i = 0; i < out.size(); ++i) out[i].slot = static_cast<int>(i);
    return out;
  }
  auto& pr = static_cast<const ProjectNode&>(*n);
  for (size_t i = 0; i < pr.exprs.size() && i < out.size(); ++i) {
    std::vector<InverseStep> steps;
    std::vector<qrs_logical_type> casts;
    const ColumnScalar* read = invertible(*pr.exprs[i], steps, casts, pr.input->columns);
    if (!read || read->slot < 0 || static_cast<size_t>(read->slot) >= pr.input->columns.size()) continue;
    // A cast is the identity only onto the source column's own type.
    const qrs_logical_type type = pr.input->columns[read->slot].type;
    if (std::any_of(casts.begin(), casts.end(), [&](qrs_logical_type t) { return t != type; })) continue;
    out[i].slot = read->slot;
    out[i].inverse = std::move(steps);
  }
  return out;
}

void json_ints(std::string& out, const std::vector<int>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  out += ']';
}

}  // namespace

RelLineage derive_lineage(const RelNode& root) {
  RelLineage out;
  NodeLineage top = derive_node(root);
  const RelNode& source = source_of(root);
  NodeLineage below = &source == &root ? top : derive_node(source);
  out.properties = derive_properties(root);
  out.source_properties = derive_match_properties(source);
  out.columns = std::move(top.columns);
  out.scans = std::move(top.scans);
  // The ON equalities, as scan columns, from the source row (nothing projected away yet).
  for (const JoinEquality& eq : below.scan_equalities) {
    const bool seen = std::any_of(out.join_equalities.begin(), out.join_equalities.end(), [&](const JoinEquality& e) {
      return e.left_scan == eq.left_scan && e.left_column == eq.left_column && e.right_scan == eq.right_scan &&
             e.right_column == eq.right_column;
    });
    if (!seen) out.join_equalities.push_back(eq);
  }
  out.reads = outermost_reads(root);
  // The scans below are the same scans, in the same order, when the outermost
  // projection hides none (it never drops a scan: a projection keeps its input's scans).
  if (below.scans.size() == out.scans.size())
    for (size_t s = 0; s < out.scans.size(); ++s) out.scans[s].source_positions = below.scans[s].positions;
  // A unique index over nullable columns still determines its table's columns among the
  // rows an equality matched (an equality never matches NULL): a determination, never a
  // key, in the source row.
  for (const ScanLineage& s : out.scans) {
    if (s.source_positions.empty()) continue;
    for (auto& ix : s.table->schema.indexes) {
      if (!ix.unique || ix.where) continue;
      std::vector<int> det;
      for (auto& c : ix.columns)
        if (c.column >= 0 && s.source_positions[c.column] >= 0) det.push_back(s.source_positions[c.column]);
      if (det.size() != ix.columns.size()) continue;
      FunctionalDependency fd;
      fd.determinants = det;
      for (int p : s.source_positions)
        if (p >= 0 && std::find(det.begin(), det.end(), p) == det.end()) fd.dependents.push_back(p);
      std::sort(fd.determinants.begin(), fd.determinants.end());
      out.source_properties.fds.push_back(std::move(fd));
    }
  }
  return out;
}

bool RelLineage::owner_determines(int owner, int partner, int partner_column) const {
  if (owner < 0 || partner < 0 || static_cast<size_t>(owner) >= scans.size() ||
      static_cast<size_t>(partner) >= scans.size())
    return false;
  const ScanLineage& o = scans[owner];
  const ScanLineage& p = scans[partner];
  if (o.source_positions.empty() || p.source_positions.empty()) return false;
  const int target = p.source_positions[partner_column];
  if (target < 0) return false;
  for (const auto& key : o.keys) {
    std::vector<int> cols;
    for (int c : key)
      if (o.source_positions[c] >= 0) cols.push_back(o.source_positions[c]);
    if (cols.size() != key.size()) continue;
    std::vector<int> reach = source_properties.closure(cols);
    if (std::binary_search(reach.begin(), reach.end(), target)) return true;
  }
  return false;
}

bool RelLineage::key_preserved(int s) const {
  if (s < 0 || static_cast<size_t>(s) >= scans.size() || scans[s].source_positions.empty()) return false;
  const ScanLineage& scan = scans[s];
  for (const auto& key : scan.keys) {
    std::vector<int> cols;
    for (int c : key) cols.push_back(scan.source_positions[c]);
    if (std::find(cols.begin(), cols.end(), -1) != cols.end()) continue;
    if (source_properties.is_unique(cols, SIZE_MAX)) return true;
  }
  return false;
}

std::string RelLineage::to_json() const {
  std::string out = "{\"columns\":[";
  for (size_t i = 0; i < columns.size(); ++i) {
    const ColumnLineage& c = columns[i];
    if (i) out += ',';
    switch (c.kind) {
      case ColumnLineage::Kind::kBase:
        out += "{\"kind\":\"" + std::string(c.inverse.empty() ? "base" : "inverse") + "\",\"scan\":" +
               std::to_string(c.scan) + ",\"column\":" + json_string(scans[c.scan].table->schema.columns[c.column].name);
        break;
      case ColumnLineage::Kind::kExistence:
        out += "{\"kind\":\"existence\",\"scan\":" + std::to_string(c.scan);
        break;
      case ColumnLineage::Kind::kComputed: out += "{\"kind\":\"computed\""; break;
    }
    if (c.null_extended) out += ",\"nullExtended\":true";
    out += '}';
  }
  out += "],\"scans\":[";
  for (size_t s = 0; s < scans.size(); ++s) {
    if (s) out += ',';
    out += "{\"table\":" + json_string(scans[s].table->schema.schema_name + "." + scans[s].table->schema.name) + ",\"positions\":";
    json_ints(out, scans[s].positions);
    out += scans[s].padded ? ",\"padded\":true}" : "}";
  }
  out += "]}";
  return out;
}

}  // namespace quereus
