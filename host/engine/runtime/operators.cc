// Runtime: the operators that execute plan nodes (planner/rel_node.h). Volcano-style
// pull iterators; each node's instantiate() builds a fresh operator per execution.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "quereus/text_case.hpp"

#include "common/status.h"
#include "types/temporal.h"
#include "planner/rel_node.h"
#include "runtime/table_reads.h"
#include "catalog/catalog.h"
#include "types/compare.h"

namespace quereus {

namespace {

struct RowLess {
  const std::vector<const Collation*>* collations = nullptr;
  bool operator()(const Row& a, const Row& b) const {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      const Collation* c = collations && i < collations->size() ? (*collations)[i] : nullptr;
      int r = compare_values(a[i], b[i], c);
      if (r) return r < 0;
    }
    return a.size() < b.size();
  }
};

std::vector<const Collation*> collations_of(const std::vector<Attribute>& cols) {
  std::vector<const Collation*> out;
  for (auto& c : cols) out.push_back(ordering_collation(c.collation, c.type));
  return out;
}

// A LIMIT or OFFSET count. NULL means no limit (-1 here). A negative count means none:
// LIMIT -1 returns no rows, as the reference corpus requires (94.1-limit-offset-edge-
// cases; SQLite would read it as "no limit"), and a negative OFFSET skips nothing. A
// value that is not an integer (nor a REAL or TEXT holding one exactly) is a MISMATCH.
int64_t eval_count(const ScalarPtr& e, const EvalEnv& env, const char* what) {
  if (!e) return -1;
  Value v = e->eval(env);
  std::optional<int64_t> n;
  switch (v.type()) {
    case ValueType::kNull: return -1;
    case ValueType::kInteger: n = v.as_int(); break;
    case ValueType::kBoolean: n = v.as_bool() ? 1 : 0; break;
    case ValueType::kBigInt: n = v.as_int(); break;  // saturated
    case ValueType::kReal: {
      double d = v.as_real();
      if (std::isfinite(d) && d == std::floor(d) && d >= -9.2e18 && d <= 9.2e18) n = static_cast<int64_t>(d);
      break;
    }
    case ValueType::kText: {
      std::string t = v.str();
      t.erase(0, t.find_first_not_of(" \t\r\n"));
      t.erase(t.find_last_not_of(" \t\r\n") + 1);
      if (!t.empty()) {
        errno = 0;
        char* end = nullptr;
        long long x = std::strtoll(t.c_str(), &end, 10);
        if (errno == 0 && end == t.c_str() + t.size()) n = x;
      }
      break;
    }
    default: break;
  }
  if (!n) throw Error(StatusCode::kMismatch, std::string(what) + " must be an integer, got " + v.to_text());
  return std::max<int64_t>(*n, 0);
}

// ---------------------------------------------------------------- table scan

class TableScanOp : public Operator {
 public:
  // The scan arguments that do not change between executions are set up once; open()
  // only binds the filter values (a correlated scan re-opens once per outer row).
  explicit TableScanOp(const TableScanNode& n) : node_(n) {
    args_.plan_id = node_.plan.plan_id;
    args_.handled = node_.plan.handled;
    args_.provides_ordering = node_.plan.provides_ordering;
    args_.ordering = node_.ordering;
    args_.read_committed = node_.read_committed;
    for (auto& f : node_.filters) {
      FilterSpec s;
      s.column = f.column;
      s.op = f.op;
      s.form = f.form;
      s.has_value = true;
      args_.filters.push_back(std::move(s));
    }
    point_key_filters_ = point_key_filters(node_);
  }
  void open(const EvalEnv& outer) override {
    ctx_ = outer.ctx;
    EvalEnv env{nullptr, &outer, outer.ctx};
    for (size_t i = 0; i < node_.filters.size(); ++i) {
      const PushedFilter& f = node_.filters[i];
      FilterSpec& s = args_.filters[i];
      if (f.value) s.value = f.value->eval(env);
      s.in_values.clear();
      for (auto& e : f.in_list) s.in_values.push_back(e->eval(env));
      if (f.in_subquery) s.in_values = static_cast<const SubqueryScalar&>(*f.in_subquery).member_values(env);
      s.in_count = static_cast<uint32_t>(s.in_values.size());
    }
    cursor_.reset();  // the previous execution's cursor closes before the next opens
    count_ = pos_ = 0;
    done_ = false;
    if (!point_key_filters_.empty() && open_point()) return;
    point_rows_ = -1;
    cursor_ = node_.table->table->open_cursor(args_);
  }
  bool next(Row& out) override {
    poll_interrupt(ctx_);
    if (point_rows_ >= 0) {  // a point lookup's answer: at most one row
      if (point_rows_ == 0) return false;
      point_rows_ = 0;
      out.swap(point_row_);
      return true;
    }
    while (pos_ >= count_) {
      if (done_) return false;
      pos_ = 0;
      count_ = cursor_->next_batch(batch_);
      if (count_ == 0) {
        done_ = true;
        cursor_.reset();
        return false;
      }
    }
    // Swapping (not moving) hands the caller's previous row back to the batch, so the
    // next batch is copied into buffers that already exist.
    out.swap(batch_[pos_++]);
    return true;
  }

 private:
  // The filters, in primary-key order, when the module answers them as one point: every
  // filter it handles is an equality on a key column and together they pin the whole key
  // (the optimizer pushes a comparison only under the column's own collation, which is the
  // key's). Such a scan asks the table's point lookup instead of opening a cursor. Empty
  // otherwise (and for committed.<table> reads, which lookup does not serve).
  static std::vector<size_t> point_key_filters(const TableScanNode& n) {
    const auto& pk = n.table->schema.primary_key;
    if (n.read_committed || pk.empty() || n.plan.handled.size() != n.filters.size()) return {};
    std::vector<size_t> by_member(pk.size(), SIZE_MAX);
    for (size_t i = 0; i < n.filters.size(); ++i) {
      if (!n.plan.handled[i]) continue;
      const PushedFilter& f = n.filters[i];
      if (f.op != QRS_OP_EQ || !f.value) return {};
      size_t m = 0;
      while (m < pk.size() && pk[m].column != f.column) ++m;
      if (m == pk.size() || by_member[m] != SIZE_MAX) return {};
      by_member[m] = i;
    }
    for (size_t i : by_member)
      if (i == SIZE_MAX) return {};
    return by_member;
  }
  // Answers the scan by point lookup; false when the module does not serve it (then the
  // scan opens a cursor, and keeps doing so).
  bool open_point() {
    point_key_.resize(point_key_filters_.size());
    bool null_key = false;
    for (size_t m = 0; m < point_key_filters_.size(); ++m) {
      point_key_[m] = args_.filters[point_key_filters_[m]].value;
      null_key = null_key || point_key_[m].is_null();
    }
    if (null_key) {  // `k = NULL` matches nothing
      point_rows_ = 0;
      return true;
    }
    switch (node_.table->table->lookup(point_key_, point_row_)) {
      case LookupStatus::kFound:
        point_rows_ = 1;
        return true;
      case LookupStatus::kNotFound:
        point_rows_ = 0;
        return true;
      case LookupStatus::kUnsupported:
        break;
    }
    point_key_filters_.clear();
    return false;
  }

  const TableScanNode& node_;
  ExecContext* ctx_ = nullptr;  // polled for interrupts
  ScanArgs args_;
  std::unique_ptr<VtabCursor> cursor_;
  std::vector<Row> batch_;  // reused across batches; rows [0, count_) are current
  size_t count_ = 0;
  size_t pos_ = 0;
  bool done_ = false;
  std::vector<size_t> point_key_filters_;
  std::vector<Value> point_key_;
  Row point_row_;
  int point_rows_ = -1;  // -1: a cursor scan; else the rows the point lookup has left
};

// A scan through a secondary index: the companion table yields entries (index columns
// ‖ primary key) in index order, and each entry's row is fetched by its key.
class IndexScanOp : public Operator {
 public:
  explicit IndexScanOp(const TableScanNode& n)
      : node_(n), companion_(*n.table->index_tables[static_cast<size_t>(n.index)]) {
    const IndexSchema& ix = n.table->schema.indexes[static_cast<size_t>(n.index)];
    key_offset_ = ix.columns.size();
    args_.plan_id = n.index_plan.plan_id;
    args_.handled = n.index_plan.handled;
    args_.provides_ordering = n.index_plan.provides_ordering;
    for (int f : n.index_filters) {
      FilterSpec s;
      // The index column the plan chose (consider_indexes): the one under the column's collation.
      s.column = index_position(n.table->schema, ix, n.filters[static_cast<size_t>(f)].column);
      s.op = n.filters[static_cast<size_t>(f)].op;
      s.has_value = true;
      args_.filters.push_back(std::move(s));
    }
    if (n.plan.provides_ordering)
      for (const OrderSpec& o : n.ordering) args_.ordering.push_back({index_position(n.table->schema, ix, o.column), o.desc});
    for (const KeyColumn& k : n.table->schema.primary_key) key_columns_.push_back(k.column);
  }
  void open(const EvalEnv& outer) override {
    ctx_ = outer.ctx;
    EvalEnv env{nullptr, &outer, outer.ctx};
    for (size_t j = 0; j < node_.index_filters.size(); ++j) {
      const PushedFilter& f = node_.filters[static_cast<size_t>(node_.index_filters[j])];
      FilterSpec& s = args_.filters[j];
      if (f.value) s.value = f.value->eval(env);
      s.in_values.clear();
      for (auto& e : f.in_list) s.in_values.push_back(e->eval(env));
      if (f.in_subquery) s.in_values = static_cast<const SubqueryScalar&>(*f.in_subquery).member_values(env);
      s.in_count = static_cast<uint32_t>(s.in_values.size());
    }
    cursor_.reset();
    cursor_ = companion_.table->open_cursor(args_);
    count_ = pos_ = 0;
    done_ = false;
  }
  bool next(Row& out) override {
    for (;;) {
      poll_interrupt(ctx_);
      while (pos_ >= count_) {
        if (done_) return false;
        pos_ = 0;
        count_ = cursor_->next_batch(batch_);
        if (count_ == 0) {
          done_ = true;
          cursor_.reset();
          return false;
        }
      }
      const Row& entry = batch_[pos_++];
      Row key(entry.begin() + static_cast<std::ptrdiff_t>(key_offset_), entry.end());
      if (!key.empty()) {
        LookupStatus found = node_.table->table->lookup(key, out);
        if (found == LookupStatus::kFound) return true;
        if (found == LookupStatus::kNotFound) continue;  // cannot happen while the index is in step
      }
      std::vector<Row> rows = probe_rows(*node_.table, key_columns_, key, pk_plan_);
      if (rows.empty()) continue;  // cannot happen while the index is in step
      out = std::move(rows.front());
      return true;
    }
  }

 private:
  const TableScanNode& node_;
  ExecContext* ctx_ = nullptr;  // polled for interrupts
  TableEntry& companion_;
  size_t key_offset_ = 0;
  ScanArgs args_;
  std::vector<int> key_columns_;
  std::optional<PlanResult> pk_plan_;
  std::unique_ptr<VtabCursor> cursor_;
  std::vector<Row> batch_;
  size_t count_ = 0;
  size_t pos_ = 0;
  bool done_ = false;
};

// ---------------------------------------------------------------- simple sources

class ValuesOp : public Operator {
 public:
  explicit ValuesOp(const ValuesNode& n) : node_(n) {}
  void open(const EvalEnv& outer) override { outer_ = outer; i_ = 0; }
  bool next(Row& out) override {
    if (i_ >= node_.rows.size()) return false;
    poll_interrupt(outer_.ctx);
    EvalEnv env{nullptr, &outer_, outer_.ctx};
    const auto& exprs = node_.rows[i_];
    out.resize(exprs.size());
    for (size_t c = 0; c < exprs.size(); ++c) out[c] = exprs[c]->eval(env);
    ++i_;
    return true;
  }

 private:
  const ValuesNode& node_;
  EvalEnv outer_;
  size_t i_ = 0;
};

class SingleRowOp : public Operator {
 public:
  void open(const EvalEnv&) override { done_ = false; }
  bool next(Row& out) override {
    if (done_) return false;
    done_ = true;
    out.clear();
    return true;
  }

 private:
  bool done_ = false;
};

// ---------------------------------------------------------------- filter / project

// A key expression FilterOp can evaluate once per open: it reads no column of the
// filtered row (only enclosing rows, literals, parameters).
bool outer_only(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarKind::kColumn: return static_cast<const ColumnScalar&>(e).level > 0;
    case ScalarKind::kLiteral:
    case ScalarKind::kParam: return true;
    default: return false;
  }
}

class FilterOp : public Operator {
 public:
  explicit FilterOp(const FilterNode& n) : node_(n), input_(n.input->instantiate()) {
    collect_gates(*n.predicate);
    // A correlated lookup into a bound row set (`select … from <capture> as k where k.c =
    // outer.x`), re-opened per outer row: an integer equality is answered from an index
    // of the row set built once per execution instead of a scan per open.
    if (n.input->kind != RelKind::kWorkingTable || !static_cast<const WorkingTableNode&>(*n.input).bound) return;
    std::vector<const ScalarExpr*> conj;
    std::function<void(const ScalarExpr&)> split = [&](const ScalarExpr& e) {
      if (e.kind == ScalarKind::kAnd) {
        for (const ScalarPtr* op : e.operands()) split(**op);
        return;
      }
      conj.push_back(&e);
    };
    split(*n.predicate);
    for (const ScalarExpr* c : conj) {
      if (c->kind != ScalarKind::kBinary) continue;
      auto& b = static_cast<const BinaryScalar&>(*c);
      if (b.op != ast::BinaryOp::kEq || b.duration_order) continue;
      auto local = [](const ScalarExpr& e) {
        return e.kind == ScalarKind::kColumn && static_cast<const ColumnScalar&>(e).level == 0 ? &static_cast<const ColumnScalar&>(e) : nullptr;
      };
      if (const ColumnScalar* l = local(*b.left); l && outer_only(*b.right)) {
        key_slot_ = l->slot;
        key_ = b.right.get();
      } else if (const ColumnScalar* r = local(*b.right); r && outer_only(*b.left)) {
        key_slot_ = r->slot;
        key_ = b.left.get();
      }
      if (key_) break;
    }
  }
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    indexed_ = false;
    // A one-time gate: a conjunct that reads nothing of the row and is not true now
    // admits no row — the input is not even opened (its seeks and subqueries not run).
    gated_ = false;
    for (const ScalarExpr* g : gates_) {
      EvalEnv env{nullptr, &outer_, outer_.ctx};
      bool is_null;
      if (!g->eval(env).truthy(&is_null)) {
        gated_ = true;
        return;
      }
    }
    if (key_) {
      EvalEnv env{nullptr, &outer_, outer_.ctx};
      Value k = key_->eval(env);
      if (k.type() == ValueType::kInteger) {
        const auto& wt = static_cast<const WorkingTableNode&>(*node_.input);
        rows_ = wt.rows;
        if (rows_ && key_slot_ >= 0) {
          build_index();
          candidates_.clear();
          if (auto it = index_.find(k.as_int()); it != index_.end()) candidates_ = it->second;
          candidates_.insert(candidates_.end(), others_.begin(), others_.end());
          std::sort(candidates_.begin(), candidates_.end());
          ci_ = 0;
          indexed_ = true;
          return;
        }
      }
    }
    input_->open(outer);
  }
  bool next(Row& out) override {
    if (gated_) return false;
    if (indexed_) {
      while (ci_ < candidates_.size()) {
        out = (*rows_)[candidates_[ci_++]];
        poll_interrupt(outer_.ctx);
        EvalEnv env{&out, &outer_, outer_.ctx};
        Value v = node_.predicate->eval(env);
        bool is_null;
        if (v.truthy(&is_null)) return true;
      }
      return false;
    }
    while (input_->next(out)) {
      poll_interrupt(outer_.ctx);
      EvalEnv env{&out, &outer_, outer_.ctx};
      Value v = node_.predicate->eval(env);
      bool is_null;
      if (v.truthy(&is_null)) return true;
    }
    return false;
  }

 private:
  // Whether `e` reads nothing of the filtered row and may be evaluated once per open:
  // literals, parameters, enclosing rows' columns, uncorrelated subqueries (computed once
  // per execution anyway), and deterministic functions and operators over them (nothing
  // per row or volatile).
  static bool row_free(const ScalarExpr& e) {
    switch (e.kind) {
      case ScalarKind::kExists:
      case ScalarKind::kSubquery:
      case ScalarKind::kInSubquery:
        if (static_cast<const SubqueryScalar&>(e).correlated) return false;
        break;
      case ScalarKind::kLiteral:
      case ScalarKind::kParam: return true;
      case ScalarKind::kColumn: return static_cast<const ColumnScalar&>(e).level > 0;
      case ScalarKind::kFunction: {
        auto& f = static_cast<const FunctionScalar&>(e);
        if (!f.fn || !(f.fn->flags & kDeterministic) || (f.fn->flags & kPerRow)) return false;
        break;
      }
      case ScalarKind::kUnary:
      case ScalarKind::kBinary:
      case ScalarKind::kNot:
      case ScalarKind::kAnd:
      case ScalarKind::kOr:
      case ScalarKind::kXor:
      case ScalarKind::kIsNull:
      case ScalarKind::kIs:
      case ScalarKind::kIn:
      case ScalarKind::kBetween:
      case ScalarKind::kLike:
      case ScalarKind::kGlob:
      case ScalarKind::kCase:
      case ScalarKind::kCast:
      case ScalarKind::kCollate: break;
      default: return false;
    }
    for (const ScalarPtr* op : e.operands())
      if (*op && !row_free(**op)) return false;
    return true;
  }
  // The predicate's top-level conjuncts that are row-free and not plain constants (the
  // optimizer folds those).
  void collect_gates(const ScalarExpr& e) {
    if (e.kind == ScalarKind::kAnd) {
      for (const ScalarPtr* op : e.operands()) collect_gates(**op);
      return;
    }
    if (e.kind != ScalarKind::kLiteral && row_free(e)) gates_.push_back(&e);
  }

  // Integer values of the key column → row positions; every other non-NULL value's row
  // in `others_` (an integer key may still equal a REAL or TEXT cell: the predicate
  // decides). Rebuilt when the row set or the execution changes.
  void build_index() {
    const uint64_t generation = outer_.ctx ? outer_.ctx->generation : 0;
    if (built_for_ == rows_.get() && built_generation_ == generation && built_size_ == rows_->size()) return;
    index_.clear();
    others_.clear();
    for (size_t i = 0; i < rows_->size(); ++i) {
      const Row& r = (*rows_)[i];
      if (static_cast<size_t>(key_slot_) >= r.size()) continue;
      const Value& v = r[key_slot_];
      if (v.type() == ValueType::kInteger) index_[v.as_int()].push_back(i);
      else if (!v.is_null()) others_.push_back(i);
    }
    built_for_ = rows_.get();
    built_generation_ = generation;
    built_size_ = rows_->size();
  }

  std::vector<const ScalarExpr*> gates_;
  bool gated_ = false;
  const FilterNode& node_;
  std::unique_ptr<Operator> input_;
  EvalEnv outer_;
  const ScalarExpr* key_ = nullptr;
  int key_slot_ = -1;
  bool indexed_ = false;
  std::shared_ptr<std::vector<Row>> rows_;
  std::unordered_map<int64_t, std::vector<size_t>> index_;
  std::vector<size_t> others_, candidates_;
  size_t ci_ = 0;
  const std::vector<Row>* built_for_ = nullptr;
  uint64_t built_generation_ = 0;
  size_t built_size_ = 0;
};

class ProjectOp : public Operator {
 public:
  explicit ProjectOp(const ProjectNode& n) : node_(n), input_(n.input->instantiate()) {
    // A projection of distinct input columns moves the values instead of copying them.
    std::vector<bool> seen;
    for (const auto& e : node_.exprs) {
      const auto* c = e->kind == ScalarKind::kColumn ? static_cast<const ColumnScalar*>(e.get()) : nullptr;
      if (!c || c->level != 0 || (c->slot < static_cast<int>(seen.size()) && seen[c->slot])) {
        moves_.clear();
        return;
      }
      if (seen.size() <= static_cast<size_t>(c->slot)) seen.resize(c->slot + 1, false);
      seen[c->slot] = true;
      moves_.push_back(c->slot);
    }
  }
  void open(const EvalEnv& outer) override { outer_ = outer; input_->open(outer); }
  bool next(Row& out) override {
    if (!input_->next(in_)) return false;
    if (!moves_.empty()) {
      // Swap rather than move: the caller's previous values (and their buffers) go back
      // to the input row and from there to the scan's batch for reuse.
      out.resize(moves_.size());
      for (size_t i = 0; i < moves_.size(); ++i) std::swap(out[i], in_[moves_[i]]);
      return true;
    }
    // Assigned in place: a column or literal is copied into the caller's value (keeping
    // its buffer), anything else evaluated.
    out.resize(node_.exprs.size());
    EvalEnv env{&in_, &outer_, outer_.ctx};
    for (size_t i = 0; i < out.size(); ++i) {
      const ScalarExpr& e = *node_.exprs[i];
      if (const Value* v = value_in_place(e, env)) out[i] = *v;
      else out[i] = e.eval(env);
    }
    return true;
  }

 private:
  const ProjectNode& node_;
  std::unique_ptr<Operator> input_;
  EvalEnv outer_;
  Row in_;
  std::vector<int> moves_;  // input slot per output column; empty: evaluate
};

// ---------------------------------------------------------------- join

// The hash table of a hash join over one side's materialized rows: row indices chained
// per bucket in ascending order, so a probe yields its partners in that side's order.
class JoinHashTable {
 public:
  // Indexes rows [0, n); key_hash(i, &null_key) is row i's key hash. A row with a NULL
  // key is left out: NULL never equals anything.
  template <class KeyHash>
  void build(size_t n, KeyHash&& key_hash) {
    size_t buckets = 16;
    while (buckets < 2 * n) buckets <<= 1;
    mask_ = buckets - 1;
    heads_.assign(buckets, 0);
    next_.assign(n, 0);
    hashes_.assign(n, 0);
    for (size_t i = n; i-- > 0;) {  // last row first: each chain then runs in row order
      bool null_key = false;
      size_t h = key_hash(i, &null_key);
      if (null_key) continue;
      hashes_[i] = h;
      size_t& head = heads_[mix(h) & mask_];
      next_[i] = head;
      head = i + 1;
    }
  }
  void clear() {
    heads_.clear();
    next_.clear();
    hashes_.clear();
  }
  // Appends the rows whose key hash is `h`, in ascending order.
  void probe(size_t h, std::vector<size_t>& out) const {
    if (heads_.empty()) return;
    for (size_t c = heads_[mix(h) & mask_]; c; c = next_[c - 1])
      if (hashes_[c - 1] == h) out.push_back(c - 1);
  }

 private:
  static size_t mix(size_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
  }
  std::vector<size_t> heads_;   // per bucket: its first row + 1 (0: empty)
  std::vector<size_t> next_;    // per row: the next row + 1 of its bucket
  std::vector<size_t> hashes_;  // per row: its key hash
  size_t mask_ = 0;
};

// A hashed join's test of one candidate pair. The hash only finds candidates; their key
// values are compared here directly, and ON is then evaluated without the conjuncts that
// are exactly those key equalities — `l = r` over the two key columns, BINARY (or no)
// collation, no duration order — which compare_values(.., BINARY) == 0 decides the same
// way (a NULL key never reaches a candidate: the hash leaves it out). The other conjuncts
// are evaluated in their order with AND's semantics.
class JoinPairTest {
 public:
  explicit JoinPairTest(const JoinNode& j) : keys_(j.equi_keys) {
    if (!j.on) return;
    const int lw = static_cast<int>(j.left->columns.size());
    std::vector<const ScalarExpr*> conjuncts;
    split_and(j.on.get(), conjuncts);
    for (const ScalarExpr* c : conjuncts)
      if (!is_key_equality(*c, lw)) residual_.push_back(c);
  }
  // Whether candidate rows `l` and `r` agree on every key.
  bool keys_equal(const Row& l, const Row& r) const {
    for (const auto& [lk, rk] : keys_) {
      const Value &a = l[lk], &b = r[rk];
      if (a.is_null() || b.is_null()) return false;
      if (a.type() == ValueType::kInteger && b.type() == ValueType::kInteger) {
        if (a.as_int() != b.as_int()) return false;
      } else if (compare_values(a, b, nullptr) != 0) {
        return false;
      }
    }
    return true;
  }
  bool has_residual() const { return !residual_.empty(); }
  // Whether the rest of ON holds over the joined row (level 0 of `env`).
  bool residual_holds(const EvalEnv& env) const {
    bool unknown = false;
    for (const ScalarExpr* c : residual_) {
      bool is_null = false;
      if (c->eval(env).truthy(&is_null)) continue;
      if (!is_null) return false;
      unknown = true;  // NULL AND x is false only when x is false: keep evaluating
    }
    return !unknown;
  }

 private:
  static void split_and(const ScalarExpr* e, std::vector<const ScalarExpr*>& out) {
    if (e->kind == ScalarKind::kBinary) {
      auto* b = static_cast<const BinaryScalar*>(e);
      if (b->op == ast::BinaryOp::kAnd) {
        split_and(b->left.get(), out);
        split_and(b->right.get(), out);
        return;
      }
    }
    out.push_back(e);
  }
  bool is_key_equality(const ScalarExpr& e, int lw) const {
    if (e.kind != ScalarKind::kBinary) return false;
    auto& b = static_cast<const BinaryScalar&>(e);
    if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) return false;
    if (b.duration_order || (b.compare_collation && b.compare_collation != &Collation::binary())) return false;
    if (b.left->kind != ScalarKind::kColumn || b.right->kind != ScalarKind::kColumn) return false;
    auto& x = static_cast<const ColumnScalar&>(*b.left);
    auto& y = static_cast<const ColumnScalar&>(*b.right);
    if (x.level != 0 || y.level != 0) return false;
    int ls = x.slot, rs = y.slot;
    if (ls >= lw) std::swap(ls, rs);
    if (ls >= lw || rs < lw) return false;
    for (const auto& [lk, rk] : keys_)
      if (lk == ls && rk == rs - lw) return true;
    return false;
  }

  const std::vector<std::pair<int, int>>& keys_;
  std::vector<const ScalarExpr*> residual_;  // ON's other conjuncts, in order
};

// Writes the joined row `l` ++ `r` into `out`, reusing its values' buffers.
void assign_joined(Row& out, const Row& l, const Row& r) {
  out.resize(l.size() + r.size());
  auto it = std::copy(l.begin(), l.end(), out.begin());
  std::copy(r.begin(), r.end(), it);
}

class NestedLoopJoinOp : public Operator {
 public:
  explicit NestedLoopJoinOp(const JoinNode& n)
      : node_(n), left_(n.left->instantiate()), right_(n.right->instantiate()), pair_test_(n) {}
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    left_->open(outer);
    right_rows_.clear();
    memory_.reset(memory_budget(outer.ctx));
    right_->open(outer);
    Row r;
    while (right_->next(r)) {
      memory_.add_row(r);
      right_rows_.push_back(r);
    }
    right_matched_.assign(right_rows_.size(), false);
    hash_.clear();
    if (!node_.equi_keys.empty())
      hash_.build(right_rows_.size(), [&](size_t i, bool* null_key) { return key_hash(right_rows_[i], false, null_key); });
    candidates_.clear();
    have_left_ = false;
    emitting_unmatched_right_ = false;
    ri_ = 0;
  }
  bool next(Row& out) override {
    using K = ast::JoinKind;
    size_t lw = node_.left->columns.size(), rw = node_.right->columns.size();
    for (;;) {
      poll_interrupt(outer_.ctx);
      if (emitting_unmatched_right_) {
        while (ri_ < right_rows_.size()) {
          size_t i = ri_++;
          if (right_matched_[i]) continue;
          out.assign(lw, Value());
          out.insert(out.end(), right_rows_[i].begin(), right_rows_[i].end());
          append_flags(out, false, true);
          return true;
        }
        return false;
      }
      if (!have_left_) {
        if (!left_->next(left_row_)) {
          candidates_.clear();
          if (node_.join == K::kRight || node_.join == K::kFull) {
            emitting_unmatched_right_ = true;
            ri_ = 0;
            continue;
          }
          return false;
        }
        have_left_ = true;
        left_matched_ = false;
        ri_ = 0;
        if (!node_.equi_keys.empty()) {
          candidates_.clear();
          bool null_key = false;
          size_t h = key_hash(left_row_, true, &null_key);
          if (!null_key) hash_.probe(h, candidates_);  // in the right side's order
        }
      }
      bool hashed = !node_.equi_keys.empty();
      while (hashed ? ri_ < candidates_.size() : ri_ < right_rows_.size()) {
        poll_interrupt(outer_.ctx);  // an ON that rejects every pair stays interruptible
        size_t i = hashed ? candidates_[ri_++] : ri_++;
        if (hashed) {
          if (!pair_test_.keys_equal(left_row_, right_rows_[i])) continue;
          assign_joined(out, left_row_, right_rows_[i]);
          if (pair_test_.has_residual() && !pair_test_.residual_holds(EvalEnv{&out, &outer_, outer_.ctx})) continue;
        } else {
          assign_joined(out, left_row_, right_rows_[i]);
          if (node_.on) {
            EvalEnv env{&out, &outer_, outer_.ctx};
            bool is_null;
            if (!node_.on->eval(env).truthy(&is_null)) continue;
          }
        }
        left_matched_ = true;
        right_matched_[i] = true;
        append_flags(out, true, true);
        return true;
      }
      have_left_ = false;
      if (!left_matched_ && (node_.join == K::kLeft || node_.join == K::kFull)) {
        out = left_row_;
        out.resize(lw + rw);
        append_flags(out, true, false);
        return true;
      }
    }
  }

 private:
  const JoinNode& node_;
  std::unique_ptr<Operator> left_, right_;
  EvalEnv outer_;
  // The existence flags of one output row: which sides took part in it.
  void append_flags(Row& out, bool left_present, bool right_present) const {
    for (JoinNode::Side s : node_.existence)
      out.push_back(Value::Boolean(s == JoinNode::Side::kLeft ? left_present : right_present));
  }
  size_t key_hash(const Row& row, bool left, bool* null_key) const {
    size_t h = 0;
    for (auto& [l, r] : node_.equi_keys) {
      const Value& v = row[left ? l : r];
      if (v.is_null()) *null_key = true;
      h = h * 1000003u ^ hash_value(v);
    }
    return h;
  }
  JoinPairTest pair_test_;  // when hashed
  std::vector<Row> right_rows_;
  MemoryCharge memory_;  // right_rows_
  std::vector<bool> right_matched_;
  JoinHashTable hash_;
  std::vector<size_t> candidates_;
  Row left_row_;
  bool have_left_ = false, left_matched_ = false, emitting_unmatched_right_ = false;
  size_t ri_ = 0;
};

// Semi / anti join (SemiJoinNode): the right side is materialized (and hashed on the
// node's keys) the first time a left row needs it; each left row is emitted at most once.
class SemiJoinOp : public Operator {
 public:
  explicit SemiJoinOp(const SemiJoinNode& n)
      : node_(n), left_(n.left->instantiate()), right_(n.right->instantiate()), width_(n.left->columns.size()) {}
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    left_->open(outer);
    // A constant right side built earlier in this execution is kept.
    if (!(node_.right_constant && loaded_ && generation_ == (outer.ctx ? outer.ctx->generation : 0))) loaded_ = false;
  }
  bool next(Row& out) override {
    while (left_->next(out)) {
      if (!loaded_) load();
      bool matched;
      if (node_.probes.empty()) {
        matched = matches(out);
      } else if (out.size() == width_) {
        // The probes ride at the end of the left row while it is tested.
        append_probes(out, out);
        matched = matches(out);
        out.resize(width_);
      } else {
        probed_.assign(out.begin(), out.begin() + std::min(out.size(), width_));
        probed_.resize(width_);
        append_probes(out, probed_);
        matched = matches(probed_);
      }
      if (matched != node_.anti) return true;
    }
    return false;
  }

 private:
  void load() {
    right_rows_.clear();
    hash_.clear();
    null_rows_.clear();
    // The right side reads no left row: an empty row stands at level 1.
    right_env_ = EvalEnv{nullptr, &outer_, outer_.ctx};
    right_->open(right_env_);
    // Without a condition one row decides every match.
    size_t limit = node_.on || !node_.equi.empty() ? std::numeric_limits<size_t>::max() : 1;
    memory_.reset(memory_budget(outer_.ctx));
    Row r;
    while (right_rows_.size() < limit && right_->next(r)) {
      memory_.add_row(r);
      right_rows_.push_back(std::move(r));
    }
    if (!node_.equi.empty()) {
      hash_.reserve(right_rows_.size());
      std::vector<Value> key;
      for (size_t i = 0; i < right_rows_.size(); ++i) {
        EvalEnv env{&right_rows_[i], &right_env_, outer_.ctx};
        key.clear();
        for (const auto& k : node_.equi) key.push_back(k.right->eval(env));
        int null_at = first_null(key);
        if (null_at < 0) hash_.emplace(hash_key(key), i);
        else if (null_at == node_.null_aware_key && only_null_at(key, null_at)) null_rows_.push_back(i);
        // Otherwise a NULL correlation key: the row matches nothing.
      }
    }
    loaded_ = true;
    generation_ = outer_.ctx ? outer_.ctx->generation : 0;
  }

  void append_probes(const Row& left_row, Row& to) {
    EvalEnv env{&left_row, &outer_, outer_.ctx};
    for (const auto& p : node_.probes) {
      Value v = p->eval(env);
      to.push_back(std::move(v));
    }
  }

  // Whether some right row meets `left_row` (the left row followed by the probes).
  bool matches(const Row& left_row) {
    EvalEnv left_env{&left_row, &outer_, outer_.ctx};
    EvalEnv env{nullptr, &left_env, outer_.ctx};  // row: the right row under test
    auto accept = [&](size_t i) {
      poll_interrupt(outer_.ctx);
      if (!node_.on) return true;
      env.row = &right_rows_[i];
      bool is_null;
      return node_.on->eval(env).truthy(&is_null);
    };
    if (node_.equi.empty()) {
      for (size_t i = 0; i < right_rows_.size(); ++i)
        if (accept(i)) return true;
      return false;
    }
    key_.clear();
    for (const auto& k : node_.equi) key_.push_back(k.left->eval(env));
    int null_at = first_null(key_);
    if (null_at >= 0) {
      // A NULL membership probe may still meet any right row (NOT IN); a NULL correlation
      // key meets none.
      if (null_at != node_.null_aware_key || !only_null_at(key_, null_at)) return false;
      for (size_t i = 0; i < right_rows_.size(); ++i)
        if (accept(i)) return true;
      return false;
    }
    auto [b, e] = hash_.equal_range(hash_key(key_));
    for (auto it = b; it != e; ++it)
      if (accept(it->second)) return true;
    for (size_t i : null_rows_)
      if (accept(i)) return true;
    return false;
  }

  static int first_null(const std::vector<Value>& key) {
    for (size_t i = 0; i < key.size(); ++i)
      if (key[i].is_null()) return static_cast<int>(i);
    return -1;
  }
  static bool only_null_at(const std::vector<Value>& key, int at) {
    for (size_t i = 0; i < key.size(); ++i)
      if (static_cast<int>(i) != at && key[i].is_null()) return false;
    return true;
  }
  static size_t hash_key(const std::vector<Value>& key) {
    size_t h = 0;
    for (const auto& v : key) h = h * 1000003u ^ hash_value(v);
    return h;
  }

  const SemiJoinNode& node_;
  std::unique_ptr<Operator> left_, right_;
  EvalEnv outer_, right_env_;
  std::vector<Row> right_rows_;
  MemoryCharge memory_;  // right_rows_
  std::unordered_multimap<size_t, size_t> hash_;
  std::vector<size_t> null_rows_;  // NOT IN: right rows whose membership key is NULL
  std::vector<Value> key_;
  const size_t width_;  // the left side's columns; the probes follow them
  Row probed_;          // a left row of another width, with the probes
  bool loaded_ = false;
  uint64_t generation_ = 0;
};

// The existence flags of one output row of `join`: which sides took part in it.
void append_existence(const JoinNode& join, Row& out, bool left_present, bool right_present) {
  for (JoinNode::Side s : join.existence)
    out.push_back(Value::Boolean(s == JoinNode::Side::kLeft ? left_present : right_present));
}

// The hash of one side's equi-key values; `null_key` when one is NULL (it matches nothing).
size_t join_key_hash(const JoinNode& join, const Row& row, bool left, bool* null_key) {
  size_t h = 0;
  for (auto& [l, r] : join.equi_keys) {
    const Value& v = row[left ? l : r];
    if (v.is_null()) *null_key = true;
    h = h * 1000003u ^ hash_value(v);
  }
  return h;
}

// index_nested_loop (inner, cross and left joins): the right side, a table scan seeking on
// level-1 references, is re-opened for each left row with that row as its outer row.
class IndexNestedLoopJoinOp : public Operator {
 public:
  explicit IndexNestedLoopJoinOp(const JoinNode& n)
      : node_(n), left_(n.left->instantiate()), right_(n.right->instantiate()) {}
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    left_->open(outer);
    have_left_ = false;
  }
  bool next(Row& out) override {
    const size_t lw = node_.left->columns.size(), rw = node_.right->columns.size();
    for (;;) {
      if (!have_left_) {
        if (!left_->next(left_row_)) return false;
        have_left_ = true;
        matched_ = false;
        right_env_ = EvalEnv{&left_row_, &outer_, outer_.ctx};
        right_->open(right_env_);
      }
      while (right_->next(right_row_)) {
        assign_joined(out, left_row_, right_row_);
        if (node_.on) {
          EvalEnv env{&out, &outer_, outer_.ctx};
          bool is_null;
          if (!node_.on->eval(env).truthy(&is_null)) continue;
        }
        matched_ = true;
        append_existence(node_, out, true, true);
        return true;
      }
      have_left_ = false;
      if (!matched_ && node_.join == ast::JoinKind::kLeft) {
        out = left_row_;
        out.resize(lw + rw);
        append_existence(node_, out, true, false);
        return true;
      }
    }
  }

 private:
  const JoinNode& node_;
  std::unique_ptr<Operator> left_, right_;
  EvalEnv outer_, right_env_;  // right_env_: the left row, chained to the outer rows
  Row left_row_, right_row_;
  bool have_left_ = false, matched_ = false;
};

// A hash join (inner or cross, with equi keys) that hashes the left rows and streams the
// right ones: the left side is the smaller. Rows come out in right-side order, each
// right row's partners in left-side order.
class HashBuildLeftJoinOp : public Operator {
 public:
  explicit HashBuildLeftJoinOp(const JoinNode& n)
      : node_(n), left_(n.left->instantiate()), right_(n.right->instantiate()), pair_test_(n) {}
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    left_->open(outer);
    left_rows_.clear();
    memory_.reset(memory_budget(outer.ctx));
    Row r;
    while (left_->next(r)) {
      memory_.add_row(r);
      left_rows_.push_back(r);
    }
    hash_.build(left_rows_.size(),
                [&](size_t i, bool* null_key) { return join_key_hash(node_, left_rows_[i], true, null_key); });
    right_->open(outer);
    candidates_.clear();
    ci_ = 0;
  }
  bool next(Row& out) override {
    for (;;) {
      poll_interrupt(outer_.ctx);
      while (ci_ < candidates_.size()) {
        poll_interrupt(outer_.ctx);
        const Row& l = left_rows_[candidates_[ci_++]];
        if (!pair_test_.keys_equal(l, right_row_)) continue;
        assign_joined(out, l, right_row_);
        if (pair_test_.has_residual() && !pair_test_.residual_holds(EvalEnv{&out, &outer_, outer_.ctx})) continue;
        return true;
      }
      if (!right_->next(right_row_)) return false;
      candidates_.clear();
      ci_ = 0;
      bool null_key = false;
      size_t h = join_key_hash(node_, right_row_, false, &null_key);
      if (!null_key) hash_.probe(h, candidates_);  // in the left side's order
    }
  }

 private:
  const JoinNode& node_;
  std::unique_ptr<Operator> left_, right_;
  EvalEnv outer_;
  JoinPairTest pair_test_;
  std::vector<Row> left_rows_;
  MemoryCharge memory_;  // left_rows_
  JoinHashTable hash_;
  std::vector<size_t> candidates_;
  size_t ci_ = 0;
  Row right_row_;
};

// ---------------------------------------------------------------- aggregate

class AggregateOp : public Operator {
 public:
  explicit AggregateOp(const AggregateNode& n)
      : node_(n), input_(n.input->instantiate()), hashed_(0, KeyHash{this}, KeyEq{this}) {
    for (auto& g : n.group_by) {
      key_collations_.push_back(ordering_collation(g->collation, g->type));
      // Groups are found by hashing when every key's equality can be hashed: BINARY,
      // NOCASE and RTRIM text, and no JSON (structural equality). Otherwise an ordered map.
      const Collation* c = key_collations_.back();
      bool known = !c || c == &Collation::binary() || c == &Collation::nocase() || c == &Collation::rtrim();
      if (!known || g->type == QRS_LT_JSON) hashable_ = false;
    }
    int_keyed_ = hashable_ && n.group_by.size() == 1;
    for (auto& a : n.aggs) {
      any_distinct_ = any_distinct_ || a.distinct;
      arg_collations_.emplace_back();
      for (auto& e : a.args) arg_collations_.back().push_back(ordering_collation(e->collation, e->type));
    }
  }
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    input_->open(outer);
    groups_.clear();
    hashed_.clear();
    int_groups_.clear();
    owned_.clear();
    reset_scalar_group();
    order_.clear();
    built_ = false;
    out_i_ = 0;
    memory_.reset(memory_budget(outer.ctx));
  }
  bool next(Row& out) override {
    if (!built_) build();
    if (out_i_ >= order_.size()) return false;
    Group& g = *order_[out_i_++];
    out = g.key;
    for (auto& s : g.states) out.push_back(s->final());
    return true;
  }

 private:
  struct Group {
    Row key;
    std::vector<std::unique_ptr<AggregateState>> states;
    std::vector<std::set<Row, RowLess>> distinct_seen;
  };
  std::unique_ptr<Group> make_group(Row key) {
    // A group holds its key, one state per aggregate (and its DISTINCT set).
    memory_.add(row_bytes(key) + static_cast<int64_t>(sizeof(Group) + 64 * node_.aggs.size()));
    auto g = std::make_unique<Group>();
    g->key = std::move(key);
    for (size_t i = 0; i < node_.aggs.size(); ++i) {
      g->states.push_back(new_state(i));
      if (any_distinct_)
        g->distinct_seen.emplace_back(RowLess{&arg_collations_[i]});  // DISTINCT honours the argument's collation
    }
    return g;
  }
  Group& find_group(Row& key) {
    if (node_.group_by.empty()) return scalar_group();
    if (int_keyed_) {
      // One numeric key (the usual GROUP BY): an open-addressing map on the integer, for
      // every value that equals an integer (booleans, integral reals). Others fall through.
      int64_t k;
      if (as_integer_key(key[0], &k)) {
        auto [it, inserted] = int_groups_.try_emplace(k, nullptr);
        if (inserted) {
          owned_.push_back(make_group(key));
          it->second = owned_.back().get();
        }
        return *it->second;
      }
    }
    if (hashable_) {
      auto it = hashed_.find(key);
      if (it != hashed_.end()) return *it->second;
      owned_.push_back(make_group(key));
      Group* g = owned_.back().get();
      hashed_.emplace(std::move(key), g);
      return *g;
    }
    auto it = groups_.find(key);
    if (it == groups_.end()) it = groups_.emplace(key, make_group(key)).first;
    return *it->second;
  }
  void build() {
    built_ = true;
    Row in;
    Row key;
    std::vector<Value> args;
    while (input_->next(in)) {
      poll_interrupt(outer_.ctx);
      EvalEnv env{&in, &outer_, outer_.ctx};
      key.clear();
      for (auto& g : node_.group_by) key.push_back(g->eval(env));
      Group& grp = find_group(key);
      for (size_t i = 0; i < node_.aggs.size(); ++i) {
        auto& a = node_.aggs[i];
        args.resize(a.args.size());
        for (size_t j = 0; j < args.size(); ++j) {
          const ScalarExpr& e = *a.args[j];
          if (const Value* v = value_in_place(e, env)) args[j] = *v;
          else args[j] = e.eval(env);
        }
        if (a.distinct) {
          if (!args.empty() && args[0].is_null()) continue;
          if (!grp.distinct_seen[i].insert(args).second) continue;
          memory_.add_row(args);
        }
        grp.states[i]->step(args);
      }
    }
    if (node_.group_by.empty()) {
      order_.push_back(&scalar_group());  // one row, also over no input
      return;
    }
    for (auto& [k, g] : groups_) order_.push_back(g.get());
    if (!owned_.empty()) {
      // Hashed groups are emitted in key order, as the ordered map would.
      for (auto& g : owned_) order_.push_back(g.get());
      // One INTEGER key in every group (the usual GROUP BY over an integer column): their
      // order is the integers' order, compared in place.
      const bool integers = groups_.empty() && node_.group_by.size() == 1 &&
                            std::all_of(order_.begin(), order_.end(), [](const Group* g) {
                              return g->key.size() == 1 && g->key[0].type() == ValueType::kInteger;
                            });
      if (integers) {
        std::sort(order_.begin(), order_.end(),
                  [](const Group* a, const Group* b) { return a->key[0].as_int() < b->key[0].as_int(); });
      } else {
        RowLess less{&key_collations_};
        std::sort(order_.begin(), order_.end(), [&](const Group* a, const Group* b) { return less(a->key, b->key); });
      }
    }
  }

  std::unique_ptr<AggregateState> new_state(size_t i) const {
    auto st = node_.aggs[i].fn->make_state();
    if (!arg_collations_[i].empty()) st->set_collation(arg_collations_[i][0]);
    return st;
  }

  // The one group of an aggregate without GROUP BY, kept across executions (a correlated
  // subquery runs once per outer row): open() gives it fresh states.
  Group& scalar_group() {
    if (!scalar_) scalar_ = make_group(Row{});
    return *scalar_;
  }
  void reset_scalar_group() {
    if (!scalar_) return;
    for (size_t i = 0; i < node_.aggs.size(); ++i) scalar_->states[i] = new_state(i);
    for (auto& seen : scalar_->distinct_seen) seen.clear();
  }

  static bool as_integer_key(const Value& v, int64_t* out) {
    switch (v.type()) {
      case ValueType::kInteger:
      case ValueType::kBoolean: *out = v.as_int(); return true;
      case ValueType::kReal: {
        double d = v.as_real();
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != std::floor(d)) return false;
        *out = static_cast<int64_t>(d);
        return true;
      }
      default: return false;
    }
  }

  // Hash and equality of group keys under the keys' collations (see hashable_).
  static size_t hash_key_value(const Value& v, const Collation* c) {
    if (!c || c == &Collation::binary() ||
        (v.type() != ValueType::kText)) {
      return hash_value(v);
    }
    std::string_view s = v.str();
    if (c == &Collation::rtrim()) {
      while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      return std::hash<std::string_view>()(s) ^ static_cast<size_t>(v.type());
    }
    // NOCASE: FNV-1a over the fold's bytes (ASCII folded in place, other text through
    // the Unicode fold the comparison uses).
    std::string folded;
    if (!sdk::is_ascii(s)) {
      folded = sdk::nocase_fold(s);
      s = folded;
    }
    size_t h = 1469598103934665603ull;
    for (char ch : s) {
      unsigned char u = static_cast<unsigned char>(ch);
      if (u >= 'A' && u <= 'Z') u = static_cast<unsigned char>(u + 32);
      h = (h ^ u) * 1099511628211ull;
    }
    return h ^ static_cast<size_t>(v.type());
  }
  struct KeyHash {
    const AggregateOp* op;
    size_t operator()(const Row& key) const {
      size_t h = 0;
      for (size_t i = 0; i < key.size(); ++i) h = h * 1000003u ^ hash_key_value(key[i], op->key_collations_[i]);
      return h;
    }
  };
  struct KeyEq {
    const AggregateOp* op;
    bool operator()(const Row& a, const Row& b) const {
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].type() == ValueType::kInteger && b[i].type() == ValueType::kInteger) {
          if (a[i].as_int() != b[i].as_int()) return false;
        } else if (compare_values(a[i], b[i], op->key_collations_[i]) != 0) {
          return false;
        }
      }
      return true;
    }
  };

  const AggregateNode& node_;
  std::unique_ptr<Operator> input_;
  EvalEnv outer_;
  std::vector<const Collation*> key_collations_;
  std::vector<std::vector<const Collation*>> arg_collations_;  // per aggregate call
  bool hashable_ = true;
  std::map<Row, std::unique_ptr<Group>, RowLess> groups_{RowLess{&key_collations_}};
  std::unordered_map<Row, Group*, KeyHash, KeyEq> hashed_;  // when hashable_
  std::vector<std::unique_ptr<Group>> owned_;                // the groups of hashed_ and int_groups_
  bool int_keyed_ = false;     // one hashable key: numbers go to int_groups_
  bool any_distinct_ = false;  // some aggregate is DISTINCT (distinct_seen is kept)
  absl::flat_hash_map<int64_t, Group*> int_groups_;
  std::unique_ptr<Group> scalar_;  // see scalar_group()
  std::vector<Group*> order_;
  bool built_ = false;
  size_t out_i_ = 0;
  MemoryCharge memory_;  // the groups and DISTINCT sets
};

// ---------------------------------------------------------------- sort / limit / distinct

class SortOp : public Operator {
 public:
  explicit SortOp(const SortNode& n) : node_(n), input_(n.input->instantiate()) {
    // A key that is a column of the input row is compared in place; any other key is
    // evaluated once per row into `computed_`.
    for (const SortKey& k : node_.sort_keys) {
      int slot = -1;
      if (k.expr->kind == ScalarKind::kColumn) {
        const auto& c = static_cast<const ColumnScalar&>(*k.expr);
        if (c.level == 0) slot = c.slot;
      }
      slots_.push_back(slot);
      computed_index_.push_back(slot < 0 ? n_computed_++ : 0);
    }
  }
  void open(const EvalEnv& outer) override {
    input_->open(outer);
    chunks_.clear();
    computed_.clear();
    order_.clear();
    n_rows_ = i_ = 0;
    width_ = node_.columns.size();
    memory_.reset(memory_budget(outer.ctx));
    Row r;
    while (input_->next(r)) {
      poll_interrupt(outer.ctx);
      memory_.add(row_bytes(r) + static_cast<int64_t>(sizeof(Entry)));
      if (n_computed_) {
        EvalEnv env{&r, &outer, outer.ctx};
        for (size_t k = 0; k < slots_.size(); ++k) {
          if (slots_[k] < 0) computed_.push_back(node_.sort_keys[k].expr->eval(env));
        }
      }
      // Rows are stored in fixed-size chunks of flat cells: no allocation per row beyond
      // the cells' own payloads, nothing is relocated as the input grows, and `r` keeps
      // its capacity for the producer to reuse.
      if (n_rows_ % kChunkRows == 0) chunks_.push_back(std::make_unique<Value[]>(kChunkRows * width_));
      Value* dst = cell(static_cast<uint32_t>(n_rows_), 0);
      for (size_t c = 0; c < width_; ++c) dst[c] = std::move(r[c]);
      ++n_rows_;
    }
    // Sort compact entries (ties keep input order: the sort is stable); rows are read in
    // that order by next(), never moved. An integer first key is copied into the entry
    // so the common case compares without touching the rows (random row accesses over
    // a million rows are cache misses).
    order_.resize(n_rows_);
    for (uint32_t i = 0; i < n_rows_; ++i) {
      const Value* k0 = slots_.empty() ? nullptr : &key(i, 0);
      bool integer = k0 && k0->type() == ValueType::kInteger;
      order_[i] = Entry{integer ? k0->as_int() : 0, i, integer};
    }
    if (slots_.empty()) return;
    const bool desc0 = node_.sort_keys[0].desc;
    std::sort(order_.begin(), order_.end(), [&](const Entry& a, const Entry& b) {
      if (a.integer && b.integer) {
        if (a.first != b.first) return desc0 ? a.first > b.first : a.first < b.first;
      } else if (int c = compare_key(0, key(a.row, 0), key(b.row, 0))) {
        return c < 0;
      }
      for (size_t k = 1; k < slots_.size(); ++k) {
        if (int c = compare_key(k, key(a.row, k), key(b.row, k))) return c < 0;
      }
      return a.row < b.row;
    });
    computed_.clear();
  }
  bool next(Row& out) override {
    if (i_ >= n_rows_) return false;
    // Swap so the caller's previous values are released with the chunks, not per row.
    Value* src = cell(order_[i_++].row, 0);
    out.resize(width_);
    for (size_t c = 0; c < width_; ++c) std::swap(out[c], src[c]);
    return true;
  }

 private:
  static constexpr size_t kChunkRows = 1024;
  struct Entry {
    int64_t first;  // the first key when `integer`
    uint32_t row;
    bool integer;
  };

  Value* cell(uint32_t row, size_t c) const {
    return &chunks_[row / kChunkRows][(row % kChunkRows) * width_ + c];
  }
  const Value& key(uint32_t row, size_t k) const {
    return slots_[k] >= 0 ? *cell(row, slots_[k]) : computed_[row * n_computed_ + computed_index_[k]];
  }
  // <0, 0, >0 as x sorts before, with, after y under sort key k.
  int compare_key(size_t k, const Value& x, const Value& y) const {
    const SortKey& sk = node_.sort_keys[k];
    if (x.is_null() || y.is_null()) {
      if (x.is_null() && y.is_null()) return 0;
      return x.is_null() == sk.nulls_first ? -1 : 1;
    }
    int c;
    if (x.type() == ValueType::kInteger && y.type() == ValueType::kInteger) {
      c = (x.as_int() > y.as_int()) - (x.as_int() < y.as_int());
    } else if (sk.expr->type == QRS_LT_TIMESPAN && x.type() == ValueType::kText && y.type() == ValueType::kText) {
      c = temporal::compare_timespan_texts(x.str(), y.str());  // durations by elapsed time
    } else {
      c = compare_values(x, y, sk.expr->collation);
    }
    return sk.desc ? -c : c;
  }

  const SortNode& node_;
  std::unique_ptr<Operator> input_;
  std::vector<int> slots_;            // per key: input column, or -1 when computed
  std::vector<size_t> computed_index_;
  size_t n_computed_ = 0;
  size_t width_ = 0;                  // cells per row
  size_t n_rows_ = 0;
  std::vector<std::unique_ptr<Value[]>> chunks_;  // kChunkRows rows of width_ cells each
  MemoryCharge memory_;                            // the rows and their entries
  std::vector<Value> computed_;       // n_computed_ values per row
  std::vector<Entry> order_;          // output order
  size_t i_ = 0;
};

class LimitOp : public Operator {
 public:
  explicit LimitOp(const LimitNode& n) : node_(n), input_(n.input->instantiate()) {}
  void open(const EvalEnv& outer) override {
    input_->open(outer);
    EvalEnv env{nullptr, &outer, outer.ctx};
    limit_ = eval_count(node_.limit, env, "LIMIT");  // -1: no limit (NULL)
    int64_t off = eval_count(node_.offset, env, "OFFSET");
    skip_ = off > 0 ? off : 0;
    emitted_ = 0;
  }
  bool next(Row& out) override {
    if (limit_ >= 0 && emitted_ >= limit_) return false;
    while (skip_ > 0) {
      if (!input_->next(out)) return false;
      --skip_;
    }
    if (!input_->next(out)) return false;
    ++emitted_;
    return true;
  }

 private:
  const LimitNode& node_;
  std::unique_ptr<Operator> input_;
  int64_t limit_ = -1, skip_ = 0, emitted_ = 0;
};

class DistinctOp : public Operator {
 public:
  explicit DistinctOp(const DistinctNode& n)
      : input_(n.input->instantiate()), collations_(collations_of(n.columns)), seen_(RowLess{&collations_}) {}
  void open(const EvalEnv& outer) override {
    input_->open(outer);
    seen_.clear();
    memory_.reset(memory_budget(outer.ctx));
  }
  bool next(Row& out) override {
    while (input_->next(out)) {
      if (seen_.insert(out).second) {
        memory_.add_row(out);
        return true;
      }
    }
    return false;
  }

 private:
  std::unique_ptr<Operator> input_;
  std::vector<const Collation*> collations_;
  std::set<Row, RowLess> seen_;
  MemoryCharge memory_;  // seen_
};

class SetOpOp : public Operator {
 public:
  explicit SetOpOp(const SetOpNode& n)
      : node_(n), left_(n.left->instantiate()), right_(n.right->instantiate()),
        collations_(collations_of(n.columns)) {}
  void open(const EvalEnv& outer) override {
    using Op = ast::CompoundOp;
    rows_.clear();
    i_ = 0;
    left_->open(outer);
    Row r;
    if (node_.op == Op::kUnionAll && node_.membership.empty()) {
      streaming_ = true;
      right_open_ = false;
      outer_ = outer;
      return;
    }
    streaming_ = false;
    // Rows come out in arrival order (the left arm's first, then the right's); each
    // distinct row keeps its first occurrence.
    RowLess less{&collations_};
    std::set<Row, RowLess> lset(less), rset(less);
    std::vector<Row> lrows, rrows;  // each arm's rows in arrival order (distinct unless UNION ALL)
    const bool all = node_.op == Op::kUnionAll;
    memory_.reset(memory_budget(outer.ctx));
    // Each kept row is held twice (its set and its arm's list).
    while (left_->next(r)) {
      if (lset.insert(r).second || all) {
        memory_.add(2 * row_bytes(r));
        lrows.push_back(r);
      }
    }
    right_->open(outer);
    while (right_->next(r)) {
      if (rset.insert(r).second || all) {
        memory_.add(2 * row_bytes(r));
        rrows.push_back(r);
      }
    }
    switch (node_.op) {
      case Op::kUnionAll:
        rows_ = std::move(lrows);
        for (auto& x : rrows) rows_.push_back(std::move(x));
        break;
      case Op::kUnion:
        rows_ = std::move(lrows);
        for (auto& x : rrows) if (!lset.count(x)) rows_.push_back(std::move(x));
        break;
      case Op::kIntersect:
        for (auto& x : lrows) if (rset.count(x)) rows_.push_back(std::move(x));
        break;
      case Op::kExcept:
        for (auto& x : lrows) if (!rset.count(x)) rows_.push_back(std::move(x));
        break;
      case Op::kDiff:
        for (auto& x : lrows) if (!rset.count(x)) rows_.push_back(std::move(x));
        for (auto& x : rrows) if (!lset.count(x)) rows_.push_back(std::move(x));
        break;
    }
    // Membership flags: a probe of each operand's rows, after the data columns.
    if (!node_.membership.empty()) {
      for (Row& row : rows_) {
        bool in_left = lset.count(row) > 0, in_right = rset.count(row) > 0;
        for (JoinNode::Side s : node_.membership)
          row.push_back(Value::Boolean(s == JoinNode::Side::kLeft ? in_left : in_right));
      }
    }
  }
  bool next(Row& out) override {
    if (streaming_) {
      if (!right_open_) {
        if (left_->next(out)) return true;
        right_->open(outer_);
        right_open_ = true;
      }
      return right_->next(out);
    }
    if (i_ >= rows_.size()) return false;
    out = rows_[i_++];
    return true;
  }

 private:
  const SetOpNode& node_;
  std::unique_ptr<Operator> left_, right_;
  std::vector<const Collation*> collations_;
  std::vector<Row> rows_;
  MemoryCharge memory_;  // the arms' rows and sets
  size_t i_ = 0;
  bool streaming_ = false, right_open_ = false;
  EvalEnv outer_;
};

// Reads the row set in place: its owner (a recursive CTE's iteration, a bound capture)
// does not change it while a reader is open — a recursive CTE swaps in the next
// iteration's rows only after draining the step that reads them — so a correlated
// subquery re-opening it per outer row costs no copy.
class WorkingTableOp : public Operator {
 public:
  explicit WorkingTableOp(const WorkingTableNode& n) : node_(n) {}
  void open(const EvalEnv& outer) override {
    ctx_ = outer.ctx;
    rows_ = node_.rows;
    i_ = 0;
  }
  bool next(Row& out) override {
    if (!rows_ || i_ >= rows_->size()) return false;
    poll_interrupt(ctx_);
    out = (*rows_)[i_++];
    return true;
  }

 private:
  const WorkingTableNode& node_;
  ExecContext* ctx_ = nullptr;
  std::shared_ptr<std::vector<Row>> rows_;
  size_t i_ = 0;
};

class RecursiveCteOp : public Operator {
 public:
  explicit RecursiveCteOp(const RecursiveCteNode& n)
      : node_(n), collations_(collations_of(n.columns)), seen_(RowLess{&collations_}) {}
  void open(const EvalEnv& outer) override {
    outer_ = outer;
    seen_.clear();
    pending_.clear();
    pi_ = 0;
    iterations_ = 0;
    pending_bytes_ = 0;
    memory_.reset(memory_budget(outer.ctx));
    auto init = node_.initial->instantiate();
    init->open(outer);
    Row r;
    while (init->next(r)) {
      poll_interrupt(outer.ctx);
      add(r);
    }
  }
  bool next(Row& out) override {
    for (;;) {
      if (pi_ < pending_.size()) {
        out = pending_[pi_++];
        return true;
      }
      if (pending_.empty()) return false;
      // Next iteration over the rows the previous one produced.
      if (++iterations_ > node_.max_iterations && node_.max_iterations > 0)
        throw Error(StatusCode::kError, "recursive CTE '" + node_.name + "' exceeded " +
                                            std::to_string(node_.max_iterations) + " iterations" +
                                            (node_.explicit_limit ? " (option maxrecursion)" : ""));
      *node_.working = std::move(pending_);
      pending_.clear();
      pi_ = 0;
      if (node_.union_all) {
        // Only the rows being iterated over are still held.
        memory_.reset(memory_budget(outer_.ctx));
        memory_.add(pending_bytes_);
      }
      pending_bytes_ = 0;
      auto rec = node_.recursive->instantiate();
      rec->open(outer_);
      Row r;
      while (rec->next(r)) {
        poll_interrupt(outer_.ctx);
        add(r);
      }
    }
  }

 private:
  void add(const Row& r) {
    if (!node_.union_all && !seen_.insert(r).second) return;
    // UNION keeps every row it has seen; UNION ALL only the current iteration's.
    int64_t bytes = row_bytes(r);
    memory_.add(bytes);
    pending_bytes_ += bytes;
    pending_.push_back(r);
  }
  const RecursiveCteNode& node_;
  std::vector<const Collation*> collations_;
  std::set<Row, RowLess> seen_;
  std::vector<Row> pending_;
  MemoryCharge memory_;  // seen_ and pending_
  int64_t pending_bytes_ = 0;
  size_t pi_ = 0;
  int64_t iterations_ = 0;
  EvalEnv outer_;
};

class TableFunctionOp : public Operator {
 public:
  explicit TableFunctionOp(const TableFunctionNode& n) : node_(n) {}
  void open(const EvalEnv& outer) override {
    EvalEnv env{nullptr, &outer, outer.ctx};
    std::vector<Value> args;
    for (auto& a : node_.args) args.push_back(a->eval(env));
    ctx_ = outer.ctx;
    i_ = 0;
    rows_.clear();
    cursor_.reset();
    memory_.reset(memory_budget(ctx_));
    if (node_.fn->open) {
      cursor_ = node_.fn->open(*outer.ctx->db, *outer.ctx, args, node_.shape);
      return;
    }
    rows_ = node_.fn->rows(*outer.ctx->db, args);
    for (const Row& r : rows_) memory_.add_row(r);
  }
  bool next(Row& out) override {
    poll_interrupt(ctx_);
    if (cursor_) return cursor_->next(out);
    if (i_ >= rows_.size()) return false;
    out = std::move(rows_[i_++]);
    return true;
  }

 private:
  const TableFunctionNode& node_;
  ExecContext* ctx_ = nullptr;
  std::unique_ptr<TableFunctionCursor> cursor_;
  std::vector<Row> rows_;
  MemoryCharge memory_;  // rows_
  size_t i_ = 0;
};

// CacheNode: the input's rows of this execution, kept as the first reader pulls them and
// replayed to every later one; a reader past the kept rows continues the input, which is
// left where the last reader stopped. A new execution (ExecContext::generation) starts
// over. Past kMaxRows rows or kMaxBytes bytes the rows are dropped and every open of this
// execution re-runs the input instead, as it would run without the node.
class CacheOp : public Operator {
 public:
  static constexpr size_t kMaxRows = 1'000'000;
  static constexpr int64_t kMaxBytes = 256ll << 20;

  explicit CacheOp(const CacheNode& n) : input_(n.input->instantiate()) {}
  void open(const EvalEnv& outer) override {
    pos_ = 0;
    const uint64_t generation = outer.ctx ? outer.ctx->generation : 0;
    if (outer.ctx && started_ && generation_ == generation) {
      if (passing_) input_->open(input_env_);
      return;
    }
    // The input reads no row of the frames it is opened under (the pass proves it): it
    // runs with none, so that it may go on after the frame that first opened it is gone.
    input_env_ = EvalEnv{nullptr, nullptr, outer.ctx};
    rows_.clear();
    bytes_ = 0;
    memory_.reset(memory_budget(outer.ctx));
    started_ = true;
    generation_ = generation;
    complete_ = false;
    passing_ = outer.ctx == nullptr;  // no execution to key the rows on
    input_->open(input_env_);
  }
  bool next(Row& out) override {
    if (passing_) return input_->next(out);
    if (pos_ < rows_.size()) {
      out = rows_[pos_++];
      return true;
    }
    if (complete_) return false;
    if (!input_->next(out)) {
      complete_ = true;
      return false;
    }
    const int64_t b = row_bytes(out);
    bool keep = rows_.size() < kMaxRows && bytes_ + b <= kMaxBytes;
    if (keep) {
      try {
        memory_.add(b);  // the statement's max_statement_memory
      } catch (const Error& e) {
        if (e.code() != StatusCode::kNoMem) throw;
        keep = false;  // the rows are an optimization: never the reason a statement fails
      }
    }
    if (!keep) {
      // Too large to keep: this reader goes on with the input as it stands; later ones
      // re-run it.
      std::vector<Row>().swap(rows_);
      memory_.reset(nullptr);
      passing_ = true;
      return true;
    }
    bytes_ += b;
    rows_.push_back(out);
    ++pos_;
    return true;
  }

 private:
  std::unique_ptr<Operator> input_;
  EvalEnv input_env_;
  std::vector<Row> rows_;
  MemoryCharge memory_;  // rows_
  int64_t bytes_ = 0;
  size_t pos_ = 0;        // the next row of rows_ this reader gets
  uint64_t generation_ = 0;
  bool started_ = false;  // opened in generation_
  bool complete_ = false;  // the input is exhausted: rows_ is all of it
  bool passing_ = false;   // rows are not kept: each open re-runs the input
};

// CacheNode with a shared buffer (a CTE's references): the first reference opened in an
// execution runs its input to the end into the buffer; every reference of that execution
// replays it. Past CacheOp's bounds the buffer is dropped for the execution and each
// reference runs its own input, as it would without the node.
class SharedCacheOp : public Operator {
 public:
  explicit SharedCacheOp(const CacheNode& n) : input_(n.input->instantiate()), shared_(n.shared) {}
  void open(const EvalEnv& outer) override {
    pos_ = 0;
    SharedRows& s = *shared_;
    const uint64_t generation = outer.ctx ? outer.ctx->generation : 0;
    passing_ = outer.ctx == nullptr || (s.generation == generation && s.too_large);
    if (passing_) {
      input_->open(outer);
      return;
    }
    if (s.generation == generation && s.complete) return;
    s.generation = generation;
    s.complete = false;
    s.too_large = false;
    std::vector<Row>().swap(s.rows);
    memory_.reset(memory_budget(outer.ctx));
    // The body reads no row of the frames it is opened under (the planner shares only
    // an uncorrelated one).
    input_->open(EvalEnv{nullptr, nullptr, outer.ctx});
    int64_t bytes = 0;
    Row r;
    while (input_->next(r)) {
      const int64_t b = row_bytes(r);
      bool keep = s.rows.size() < CacheOp::kMaxRows && bytes + b <= CacheOp::kMaxBytes;
      if (keep) {
        try {
          memory_.add(b);
        } catch (const Error& e) {
          if (e.code() != StatusCode::kNoMem) throw;
          keep = false;
        }
      }
      if (!keep) {
        std::vector<Row>().swap(s.rows);
        memory_.reset(nullptr);
        s.too_large = true;
        passing_ = true;
        input_->open(outer);
        return;
      }
      bytes += b;
      s.rows.push_back(std::move(r));
    }
    s.complete = true;
  }
  bool next(Row& out) override {
    if (passing_) return input_->next(out);
    if (pos_ >= shared_->rows.size()) return false;
    out = shared_->rows[pos_++];
    return true;
  }

 private:
  std::unique_ptr<Operator> input_;
  std::shared_ptr<SharedRows> shared_;
  MemoryCharge memory_;  // the buffer's rows, when this reference filled it
  size_t pos_ = 0;
  bool passing_ = false;
};

}  // namespace

std::unique_ptr<Operator> TableFunctionNode::instantiate() const { return std::make_unique<TableFunctionOp>(*this); }
std::unique_ptr<Operator> WorkingTableNode::instantiate() const { return std::make_unique<WorkingTableOp>(*this); }
std::unique_ptr<Operator> RecursiveCteNode::instantiate() const { return std::make_unique<RecursiveCteOp>(*this); }
std::unique_ptr<Operator> TableScanNode::instantiate() const {
  if (index >= 0) return std::make_unique<IndexScanOp>(*this);
  return std::make_unique<TableScanOp>(*this);
}
std::unique_ptr<Operator> ValuesNode::instantiate() const { return std::make_unique<ValuesOp>(*this); }
std::unique_ptr<Operator> SingleRowNode::instantiate() const { return std::make_unique<SingleRowOp>(); }
std::unique_ptr<Operator> FilterNode::instantiate() const { return std::make_unique<FilterOp>(*this); }
std::unique_ptr<Operator> ProjectNode::instantiate() const { return std::make_unique<ProjectOp>(*this); }
std::unique_ptr<Operator> JoinNode::instantiate() const {
  if (index_lookup) return std::make_unique<IndexNestedLoopJoinOp>(*this);
  if (build_left && !equi_keys.empty()) return std::make_unique<HashBuildLeftJoinOp>(*this);
  return std::make_unique<NestedLoopJoinOp>(*this);
}
std::unique_ptr<Operator> SemiJoinNode::instantiate() const { return std::make_unique<SemiJoinOp>(*this); }
std::unique_ptr<Operator> AggregateNode::instantiate() const { return std::make_unique<AggregateOp>(*this); }
std::unique_ptr<Operator> SortNode::instantiate() const { return std::make_unique<SortOp>(*this); }
std::unique_ptr<Operator> LimitNode::instantiate() const { return std::make_unique<LimitOp>(*this); }
std::unique_ptr<Operator> DistinctNode::instantiate() const { return std::make_unique<DistinctOp>(*this); }
std::unique_ptr<Operator> SetOpNode::instantiate() const { return std::make_unique<SetOpOp>(*this); }
std::unique_ptr<Operator> CacheNode::instantiate() const {
  if (shared) return std::make_unique<SharedCacheOp>(*this);
  return std::make_unique<CacheOp>(*this);
}

std::string TableScanNode::describe() const {
  std::string s = "SCAN " + table->qualified_name();
  if (!plan.explain.empty()) s += " (" + plan.explain + ")";
  return s;
}

std::string JoinNode::describe() const {
  // The algorithm the optimizer chose (query_plan's detail column shows it).
  const std::string algorithm = index_lookup          ? " (index nested loop)"
                                : equi_keys.empty()   ? " (nested loop)"
                                : build_left          ? " (hash, build left)"
                                                      : " (hash, build right)";
  switch (join) {
    case ast::JoinKind::kLeft: return "LEFT JOIN" + algorithm;
    case ast::JoinKind::kRight: return "RIGHT JOIN" + algorithm;
    case ast::JoinKind::kFull: return "FULL JOIN" + algorithm;
    case ast::JoinKind::kCross: return "CROSS JOIN" + algorithm;
    default: return "INNER JOIN" + algorithm;
  }
}

std::string SemiJoinNode::describe() const {
  std::string s = anti ? "ANTI JOIN (" : "SEMI JOIN (";
  s += equi.empty() ? "nested loop" : "hash";
  if (null_aware_key >= 0) s += ", null-aware";
  return s + ")";
}

std::string SetOpNode::describe() const {
  switch (op) {
    case ast::CompoundOp::kUnion: return "UNION";
    case ast::CompoundOp::kUnionAll: return "UNION ALL";
    case ast::CompoundOp::kIntersect: return "INTERSECT";
    case ast::CompoundOp::kExcept: return "EXCEPT";
    case ast::CompoundOp::kDiff: return "DIFF";
  }
  return "SET OP";
}

static void explain_rec(const RelNode& n, int depth, std::string& out) {
  out += std::string(depth * 2, ' ') + n.describe() + "\n";
  for (auto* c : n.children()) explain_rec(*c, depth + 1, out);
}

std::string explain_plan(const RelNode& root) {
  std::string out;
  explain_rec(root, 0, out);
  return out;
}

}  // namespace quereus
