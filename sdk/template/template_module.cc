// sdk/template/template_module.cc — a complete, deliberately small storage module built
// with the Quereus SDK only. Copy this folder to start your own (README.md, "Checklist").
//
// What it is: in-memory tables ordered by primary key. Each table is a std::map from the
// row's key (its primary-key cells, in key order) to the row. Everything a host needs
// from a storage module is here, in the order you would write it:
//
//   1. the key order          how two keys compare (collations, DESC, NULLs first)
//   2. storage                one table's rows, shared by every connected instance
//   3. transactions           an undo log per instance: begin / commit / rollback / savepoints
//   4. access plans           PK point / range / IN seeks with an honest ordering claim
//   5. the cursor             walks key ranges in batches, re-seeking after each batch
//   6. the table              update (insert / update / delete with conflict reporting),
//                             lookup, ALTER TABLE, the backing-host writes (ABI 1.5)
//   7. the module             create / connect / destroy, one namespace per database
//   8. the plugin entry       QUEREUS_PLUGIN: registers the module under its name
//
// Rules this file follows (docs/sdk.md has the full contract):
//   - Include only <quereus/...> and link only quereus::sdk: the plugin must build out of
//     the host's tree against the installed SDK.
//   - Throw sdk::Error with the most specific status; the SDK's trampolines catch every
//     exception at the C boundary, so a bug here becomes an error status, never a crash.
//   - Expected outcomes (a duplicate key) are results, not exceptions.
//   - Claim only what you really do: a filter marked handled is enforced by the cursor,
//     an ordering claimed is the order the rows come out in.
#include <quereus/key_seek.hpp>
#include <quereus/rekey.hpp>
#include <quereus/sdk.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The manifest, embedded from template.plugin.json by quereus_embed_manifest (CMake).
// RENAME: the symbol name is the third argument of quereus_embed_manifest.
extern const char kTemplateManifest[];

namespace tmpl {

namespace sdk = quereus::sdk;
using sdk::Row;
using sdk::RowPtr;
using sdk::Value;

// RENAME: the name tables use in `CREATE TABLE … USING template`. It must also be listed
// under "provides.modules" in the manifest.
constexpr const char* kModuleName = "template";

// =========================================================================================
// 1. The key order
// =========================================================================================

// One primary-key member: which column, which direction, which collation. The shape
// (`column`, `desc`, `collation`, plus size() / member() on the order) is what the SDK's
// key_seek.hpp helpers expect.
struct KeyMember {
  uint32_t column = 0;
  bool desc = false;
  sdk::Collation collation;
};

// The order of a table's keys. A key is a Row holding the primary-key cells in key order.
// NULL sorts first in BOTH directions, as the engine's ORDER BY does, so walking the map
// forwards yields exactly `ORDER BY k1 [DESC], k2 [DESC] …`.
class KeyOrder {
 public:
  explicit KeyOrder(const sdk::TableSchema& schema) {
    for (const sdk::KeyColumn& k : schema.primary_key) members_.push_back({k.column, k.desc, k.collation});
  }

  size_t size() const { return members_.size(); }
  const KeyMember& member(size_t m) const { return members_[m]; }

  int compare_member(size_t m, const Value& a, const Value& b) const {
    bool an = a.is_null(), bn = b.is_null();
    if (an || bn) return an == bn ? 0 : (an ? -1 : 1);
    // compare_values is the engine's value order (numbers by value, text under the
    // collation; the host hands JSON / TIMESPAN members an order-defining collation too).
    int c = sdk::compare_values(a, b, members_[m].collation);
    return members_[m].desc ? -c : c;
  }

  // Compares the first min(|a|, |b|) members.
  int compare_prefix(const Row& a, const Row& b) const {
    for (size_t m = 0; m < a.size() && m < b.size(); ++m)
      if (int c = compare_member(m, a[m], b[m])) return c;
    return 0;
  }

  // The key of a full row (cells in column order).
  Row key_of(const Row& row) const {
    Row key;
    key.reserve(members_.size());
    for (const KeyMember& m : members_) key.push_back(row[m.column]);
    return key;
  }

 private:
  std::vector<KeyMember> members_;
};

// A position between keys: just before (side -1) or just after (side +1) every key that
// starts with `prefix`. Never equal to a key, so lower_bound == upper_bound for a probe.
struct Probe {
  const Row* prefix;
  int side;
};

// The map's comparator. Transparent, so the map can be searched by a Probe directly.
struct KeyLess {
  using is_transparent = void;
  const KeyOrder* order = nullptr;

  int compare(const Row& key, const Probe& p) const {
    if (int c = order->compare_prefix(key, *p.prefix)) return c;
    return -p.side;
  }
  bool operator()(const Row& a, const Row& b) const {
    int c = order->compare_prefix(a, b);
    return c < 0;  // keys of one table always have the same length
  }
  bool operator()(const Row& key, const Probe& p) const { return compare(key, p) < 0; }
  bool operator()(const Probe& p, const Row& key) const { return compare(key, p) > 0; }
};

using RowMap = std::map<Row, RowPtr, KeyLess>;

// =========================================================================================
// 2. Storage: the rows of one table
// =========================================================================================

class TxnLog;

// Shared by every instance connected to the table (and by their cursors). The host may
// call different instances from different threads, so the mutex guards every field.
struct Storage {
  explicit Storage(sdk::TableSchema s)
      : schema(std::move(s)), order(std::make_unique<KeyOrder>(schema)), rows(KeyLess{order.get()}) {}

  mutable std::shared_mutex mu;
  sdk::TableSchema schema;
  std::unique_ptr<KeyOrder> order;  // on the heap: the map's comparator points at it
  RowMap rows;
  std::set<TxnLog*> logs;  // every instance's transaction log (ALTER TABLE checks them)
};

// =========================================================================================
// 3. Transactions: an undo log per connected instance
// =========================================================================================

// Writes go straight into Storage::rows; while a transaction is open each write first
// records what it overwrote, so rollback (or ROLLBACK TO a savepoint) puts it back.
// Isolation is therefore "read uncommitted" between instances — enough for one database
// connection per table, which is what the host opens. A module that needs more (MVCC,
// committed reads) keeps its writes in a private overlay instead; see modules/mem.
//
// REQUIRES for every method: the storage mutex held exclusively.
class TxnLog {
 public:
  explicit TxnLog(std::shared_ptr<Storage> s) : storage_(std::move(s)) {
    std::unique_lock lock(storage_->mu);
    storage_->logs.insert(this);
  }
  // Destructors are noexcept: a throw escaping one terminates the process, and the SDK
  // cannot catch it for you. Catch inside.
  ~TxnLog() {
    try {
      std::unique_lock lock(storage_->mu);
      if (active_) undo_to(0);  // an instance dropped mid-transaction: roll back
      storage_->logs.erase(this);
    } catch (...) {
    }
  }
  TxnLog(const TxnLog&) = delete;
  TxnLog& operator=(const TxnLog&) = delete;

  bool active() const { return active_; }
  bool has_writes() const { return !entries_.empty(); }

  // ALTER TABLE: the rows this log would restore, so a rewrite can bring them to the new
  // layout too (their keys stay: only arms that keep every key rewrite a log).
  std::vector<RowPtr> saved_rows() const {
    std::vector<RowPtr> out;
    for (const Entry& e : entries_) out.push_back(e.before);
    return out;
  }
  // replace_contents swapped the rows under this log: nothing left to undo (an open
  // transaction and its savepoints stay open).
  void forget() {
    entries_.clear();
    for (size_t& m : marks_) m = 0;
  }

  // REQUIRES: rows.size() == the size saved_rows() returned.
  void replace_saved_rows(std::vector<RowPtr> rows) {
    for (size_t i = 0; i < entries_.size(); ++i) entries_[i].before = std::move(rows[i]);
  }

  // Sets (row != null) or removes (row == null) the row at `key`, recording the old one.
  void write(const Row& key, RowPtr row) {
    RowMap& rows = storage_->rows;
    auto it = rows.find(key);
    if (active_) entries_.push_back({key, it == rows.end() ? nullptr : it->second});
    apply(it, key, std::move(row));
  }

  void begin() {
    if (active_) throw sdk::Error::misuse(table() + ": a transaction is already open");
    active_ = true;
  }
  void commit() {  // the rows are already in place: forget how to undo them
    entries_.clear();
    marks_.clear();
    active_ = false;
  }
  void rollback() {
    undo_to(0);
    marks_.clear();
    active_ = false;
  }
  // Savepoints are numbered by depth, 1 being the outermost. The host may register a
  // table late (its first write inside savepoint 3): every missing depth marks "now".
  void savepoint(uint32_t depth) {
    if (depth == 0) throw sdk::Error::misuse("savepoint depth starts at 1");
    active_ = true;
    marks_.resize(std::min<size_t>(depth - 1, marks_.size()));
    marks_.resize(depth, entries_.size());
  }
  // Merges savepoint `depth` (and every deeper one) into its parent.
  void release_savepoint(uint32_t depth) {
    check_depth(depth);
    marks_.resize(depth - 1);
  }
  // Undoes everything written after savepoint `depth`, which stays open.
  void rollback_to_savepoint(uint32_t depth) {
    check_depth(depth);
    undo_to(marks_[depth - 1]);
    marks_.resize(depth);
  }

 private:
  struct Entry {
    Row key;
    RowPtr before;  // null: there was no row at key
  };

  std::string table() const { return storage_->schema.table_name; }
  void check_depth(uint32_t depth) const {
    if (depth == 0 || depth > marks_.size())
      throw sdk::Error::misuse("no savepoint at depth " + std::to_string(depth) + " on " + table());
  }
  void apply(RowMap::iterator it, const Row& key, RowPtr row) {
    RowMap& rows = storage_->rows;
    if (!row) {
      if (it != rows.end()) rows.erase(it);
    } else if (it != rows.end()) {
      it->second = std::move(row);
    } else {
      rows.emplace(key, std::move(row));
    }
  }
  void undo_to(size_t mark) {
    while (entries_.size() > mark) {
      Entry& e = entries_.back();
      apply(storage_->rows.find(e.key), e.key, std::move(e.before));
      entries_.pop_back();
    }
  }

  std::shared_ptr<Storage> storage_;
  bool active_ = false;
  std::vector<Entry> entries_;
  std::vector<size_t> marks_;  // marks_[d - 1]: entries_.size() when savepoint d was taken
};

// The SDK's transaction participant, forwarding to the instance's log under the lock.
class TemplateConnection : public sdk::Connection {
 public:
  TemplateConnection(std::shared_ptr<Storage> s, std::shared_ptr<TxnLog> log)
      : storage_(std::move(s)), log_(std::move(log)) {}
  // Closing the connection rolls back an open transaction (abi.h). Must not throw.
  ~TemplateConnection() override {
    try {
      std::unique_lock lock(storage_->mu);
      if (log_->active()) log_->rollback();
    } catch (...) {
    }
  }

  void begin() override { locked([&] { log_->begin(); }); }
  void commit() override { locked([&] { log_->commit(); }); }
  void rollback() override { locked([&] { log_->rollback(); }); }
  void savepoint(uint32_t d) override { locked([&] { log_->savepoint(d); }); }
  void release_savepoint(uint32_t d) override { locked([&] { log_->release_savepoint(d); }); }
  void rollback_to_savepoint(uint32_t d) override { locked([&] { log_->rollback_to_savepoint(d); }); }

 private:
  template <class F>
  void locked(F&& f) {
    std::unique_lock lock(storage_->mu);
    f();
  }
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<TxnLog> log_;  // shared with the table: either may go first
};

// =========================================================================================
// 4. Access plans
// =========================================================================================

// The SDK picks the seek (quereus/key_seek.hpp): EQ on every key member is a point seek,
// EQ on a prefix plus an optional range on the next member a range seek, IN on the first
// member a multi-seek. Filters it does not use stay unhandled: the engine applies them.
using Seek = sdk::BasicSeek<std::vector<size_t>>;

// A bound of a key range: the position before / after every key starting with `prefix`.
struct Bound {
  Row prefix;
  int side = -1;
  Probe probe() const { return Probe{&prefix, side}; }
};
struct KeyRange {
  Bound lo, hi;  // the keys strictly between lo and hi
};

// The key ranges of `seek` with the filters' bound values, in key order. Empty when a
// comparand is NULL (`k = NULL` matches nothing).
std::vector<KeyRange> build_ranges(const KeyOrder& order, const Seek& seek, std::span<const sdk::Filter> filters) {
  using sdk::FilterOp;
  std::vector<KeyRange> out;
  if (seek.kind == sdk::SeekKind::kScan) {
    out.push_back({{{}, -1}, {{}, +1}});
    return out;
  }
  const bool multi = seek.kind == sdk::SeekKind::kMulti;
  Row tail;  // the EQ values after the IN head (or all of them)
  for (size_t i = multi ? 1 : 0; i < seek.pinned.size(); ++i) {
    const Value& v = filters[seek.pinned[i]].value;
    if (v.is_null()) return out;
    tail.push_back(v);
  }
  for (int f : {seek.lower, seek.upper})
    if (f >= 0 && filters[static_cast<size_t>(f)].value.is_null()) return out;

  auto range_for = [&](const Row& prefix) {
    const size_t m = prefix.size();
    if (m == order.size() || (seek.lower < 0 && seek.upper < 0)) return KeyRange{{prefix, -1}, {prefix, +1}};
    const sdk::Filter* lo = seek.lower >= 0 ? &filters[static_cast<size_t>(seek.lower)] : nullptr;
    const sdk::Filter* hi = seek.upper >= 0 ? &filters[static_cast<size_t>(seek.upper)] : nullptr;
    if (order.member(m).desc) std::swap(lo, hi);  // a DESC member runs from high to low
    auto inclusive = [](const sdk::Filter& f) { return f.op == FilterOp::kGe || f.op == FilterOp::kLe; };
    auto extend = [&](const sdk::Filter& f, int side) {
      Bound b{prefix, side};
      b.prefix.push_back(f.value);
      return b;
    };
    KeyRange r{{prefix, -1}, {prefix, +1}};
    if (lo) r.lo = extend(*lo, inclusive(*lo) ? -1 : +1);
    if (hi) r.hi = extend(*hi, inclusive(*hi) ? +1 : -1);
    return r;
  };
  if (!multi) {
    out.push_back(range_for(tail));
    return out;
  }
  // IN: one range per distinct non-NULL value, sorted in key order.
  std::vector<Value> heads;
  for (const Value& v : filters[seek.pinned[0]].in_values)
    if (!v.is_null()) heads.push_back(v);
  auto less = [&](const Value& a, const Value& b) { return order.compare_member(0, a, b) < 0; };
  auto same = [&](const Value& a, const Value& b) { return order.compare_member(0, a, b) == 0; };
  std::sort(heads.begin(), heads.end(), less);
  heads.erase(std::unique(heads.begin(), heads.end(), same), heads.end());
  for (Value& h : heads) {
    Row prefix{std::move(h)};
    prefix.insert(prefix.end(), tail.begin(), tail.end());
    out.push_back(range_for(prefix));
  }
  return out;
}

// =========================================================================================
// 5. The cursor
// =========================================================================================

// Walks the ranges in key order (or backwards), applying the residual checks (handled
// filters the ranges do not answer exactly). It holds no map iterator between batches —
// the host may write to the table between two next_batch calls (UPDATE over a scan) — but
// remembers the last key it visited and seeks past it for the next batch.
class TemplateCursor : public sdk::Cursor {
 public:
  TemplateCursor(std::shared_ptr<Storage> s, std::vector<KeyRange> ranges, bool reverse,
                 std::vector<sdk::FilterCheck> checks, int64_t limit)
      : storage_(std::move(s)), ranges_(std::move(ranges)), reverse_(reverse), checks_(std::move(checks)),
        limit_(limit) {}

  void next_batch(sdk::RowBatch& out) override {
    std::shared_lock lock(storage_->mu);
    while (!out.full() && next_range_ < ranges_.size() && limit_ != 0) {
      const KeyRange& r = ranges_[reverse_ ? ranges_.size() - 1 - next_range_ : next_range_];
      if (reverse_ ? walk_backward(r, out) : walk_forward(r, out)) {
        ++next_range_;
        last_.reset();
      }
    }
  }

 private:
  // Each walk returns true when the range is exhausted, false when the batch is full.
  bool walk_forward(const KeyRange& r, sdk::RowBatch& out) {
    const RowMap& rows = storage_->rows;
    KeyLess less{storage_->order.get()};
    auto it = last_ ? rows.upper_bound(*last_) : rows.lower_bound(r.lo.probe());
    for (; it != rows.end(); ++it) {
      if (less.compare(it->first, r.hi.probe()) > 0) return true;
      if (emit(it->second, out)) return true;
      if (out.full()) return pause_at(it->first);
    }
    return true;
  }
  bool walk_backward(const KeyRange& r, sdk::RowBatch& out) {
    const RowMap& rows = storage_->rows;
    KeyLess less{storage_->order.get()};
    auto it = last_ ? rows.lower_bound(*last_) : rows.upper_bound(r.hi.probe());
    while (it != rows.begin()) {
      --it;
      if (less.compare(it->first, r.lo.probe()) < 0) return true;
      if (emit(it->second, out)) return true;
      if (out.full()) return pause_at(it->first);
    }
    return true;
  }
  // The batch is full: the next one resumes just past `key`.
  bool pause_at(const Row& key) {
    last_ = key;
    return false;
  }
  // Adds the row when it passes the checks; true when the pushed limit is reached.
  bool emit(const RowPtr& row, sdk::RowBatch& out) {
    if (!checks_.empty()) {
      cells_.clear();
      for (const Value& v : *row) cells_.push_back(v.to_c());
      for (const sdk::FilterCheck& c : checks_)
        if (!c.matches(cells_.data())) return false;
    }
    out.add(row);  // shared, not copied: the batch keeps the row alive
    return limit_ > 0 && --limit_ == 0;
  }

  std::shared_ptr<Storage> storage_;
  std::vector<KeyRange> ranges_;
  bool reverse_;
  std::vector<sdk::FilterCheck> checks_;
  int64_t limit_;  // rows still allowed; -1 for no cap
  size_t next_range_ = 0;
  std::optional<Row> last_;
  std::vector<qrs_value> cells_;
};

// =========================================================================================
// 6. The table
// =========================================================================================

class TemplateModule;

class TemplateTable : public sdk::Table {
 public:
  TemplateTable(TemplateModule* module, std::shared_ptr<Storage> s)
      : module_(module), storage_(s), log_(std::make_shared<TxnLog>(std::move(s))) {}

  // Plan time: cheap, pure, deterministic. The plan id carries only the seek kind and the
  // direction; open_cursor re-derives the seek from the filters the host reports handled.
  sdk::PlanResult best_access_plan(const sdk::PlanRequest& req) override {
    std::shared_lock lock(storage_->mu);
    // quereus/key_seek.hpp does the whole negotiation for a table ordered by its primary
    // key: which filters the seek answers (handled), whether walking it forwards or
    // backwards yields the requested ordering, a rough cost, the plan id and the explain
    // text. A module with another storage order writes its own.
    return sdk::plan_key_access<Seek>(kModuleName, storage_->schema, *storage_->order, req,
                                      static_cast<double>(storage_->rows.size()));
  }

  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override {
    if (args.read_committed)  // only sent to modules declaring committed_reads; we do not
      throw sdk::Error::unsupported(std::string(kModuleName) + " committed reads");
    std::shared_lock lock(storage_->mu);
    const KeyOrder& order = *storage_->order;
    Seek seek = sdk::choose_seek<Seek>(order, args.filters, args.handled);
    int64_t limit = -1;
    auto checks = sdk::residual_checks<std::vector<sdk::FilterCheck>>(storage_->schema, order, seek, args, &limit);
    return std::make_unique<TemplateCursor>(storage_, build_ranges(order, seek, args.filters),
                                            sdk::plan_reverse(args.plan_id), std::move(checks), limit);
  }

  // Insert / update / delete by primary key. A key collision is a RESULT (CONSTRAINT with
  // the existing row, NOOP under IGNORE, OK with the displaced row under REPLACE); the
  // host turns it into the SQL error or the conflict action.
  sdk::UpdateResult update(sdk::UpdateArgs args) override {
    using sdk::Conflict;
    using sdk::UpdateResult;
    std::unique_lock lock(storage_->mu);
    const KeyOrder& order = *storage_->order;
    const size_t width = storage_->schema.columns.size();
    if (args.op != sdk::RowOp::kDelete && args.values.size() != width)
      throw sdk::Error::misuse("row has " + std::to_string(args.values.size()) + " cells, table " +
                               storage_->schema.table_name + " has " + std::to_string(width) + " columns");
    if (args.op != sdk::RowOp::kInsert && args.old_key.size() != order.size())
      throw sdk::Error::misuse("key has " + std::to_string(args.old_key.size()) + " cells, primary key has " +
                               std::to_string(order.size()));
    RowMap& rows = storage_->rows;
    auto existing = [&](const Row& key) -> RowPtr {
      auto it = rows.find(key);
      return it == rows.end() ? nullptr : it->second;
    };

    switch (args.op) {
      case sdk::RowOp::kInsert: {
        Row key = order.key_of(args.values);
        RowPtr old = existing(key);
        if (old && args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (old && args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, old);
        log_->write(key, sdk::make_row(std::move(args.values)));
        return UpdateResult::ok(nullptr, old);  // null row: stored exactly as given
      }
      case sdk::RowOp::kUpdate: {
        RowPtr old = existing(args.old_key);
        if (!old) return UpdateResult::noop();
        Row key = order.key_of(args.values);
        if (order.compare_prefix(key, args.old_key) == 0) {  // same key: overwrite in place
          log_->write(args.old_key, sdk::make_row(std::move(args.values)));
          return UpdateResult::ok(nullptr);
        }
        RowPtr target = existing(key);  // the key moves: it collides like an insert
        if (target && args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (target && args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, target);
        log_->write(args.old_key, nullptr);
        log_->write(key, sdk::make_row(std::move(args.values)));
        return UpdateResult::ok(nullptr, target);
      }
      case sdk::RowOp::kDelete: {
        RowPtr old = existing(args.old_key);
        if (!old) return UpdateResult::noop();
        log_->write(args.old_key, nullptr);
        return UpdateResult::ok(old);  // a delete reports the deleted row
      }
    }
    throw sdk::Error::misuse("unknown row op");
  }

  std::unique_ptr<sdk::Connection> open_connection() override {
    return std::make_unique<TemplateConnection>(storage_, log_);
  }

  // Optional (ABI 1.3): the host probes foreign-key parents, UNIQUE entries and rows by
  // key through this instead of opening a cursor. `key` is a key prefix, in key order.
  sdk::LookupResult lookup(std::span<const qrs_value> key) override {
    std::shared_lock lock(storage_->mu);
    const KeyOrder& order = *storage_->order;
    if (key.empty() || key.size() > order.size())
      throw sdk::Error::misuse("lookup key has " + std::to_string(key.size()) + " cells, primary key has " +
                               std::to_string(order.size()));
    Row prefix;
    for (const qrs_value& c : key) prefix.push_back(Value::from_c(c));
    auto it = storage_->rows.lower_bound(Probe{&prefix, -1});
    if (it == storage_->rows.end() || order.compare_prefix(it->first, prefix) != 0)
      return sdk::LookupResult::not_found();
    return sdk::LookupResult::of_row(it->second);
  }

  void alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) override;

  // Optional (ABI 1.5), the backing-host capability: the host keeps a maintained table (a
  // materialized view) here and writes it only through these two calls. Declare it with
  // Capabilities::backing_host and implement both.
  //
  // apply_maintenance: the ops in order, each written through the transaction log like
  // update() writes, reporting only what changed. An upsert of a row identical to the
  // stored one (sdk::identical: same type, same bytes — INTEGER 5 is not REAL 5.0) writes
  // and reports nothing; a key that matches under its collation but with other bytes
  // ('A' over 'a' under NOCASE) is a change: UPDATE.
  void apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) override {
    std::unique_lock lock(storage_->mu);
    const KeyOrder& order = *storage_->order;
    const size_t width = storage_->schema.columns.size();
    std::vector<qrs_value> old_cells;
    for (const sdk::MaintenanceOp& op : ops) {
      const bool upsert = op.kind == sdk::MaintenanceKind::kUpsert;
      if (op.row.size() != (upsert ? width : order.size()))
        throw sdk::Error::misuse("maintenance op has " + std::to_string(op.row.size()) + " cells, expected " +
                                 std::to_string(upsert ? width : order.size()));
      Row given;
      for (const qrs_value& c : op.row) given.push_back(Value::from_c(c));
      Row key = upsert ? order.key_of(given) : given;
      auto it = storage_->rows.find(key);
      RowPtr old = it == storage_->rows.end() ? nullptr : it->second;
      old_cells.clear();
      if (old)
        for (const Value& v : *old) old_cells.push_back(v.to_c());
      if (!upsert) {
        if (!old) continue;  // nothing at the key: nothing happened
        log_->write(key, nullptr);
        sink.deleted(old_cells);
      } else if (!old) {
        log_->write(key, sdk::make_row(std::move(given)));
        sink.inserted(op.row);
      } else if (!sdk::identical(old_cells, op.row)) {
        log_->write(key, sdk::make_row(std::move(given)));
        sink.updated(old_cells, op.row);
      }
    }
  }

  // replace_contents: the committed rows become exactly the rows the source yields, all at
  // once. Pull every row first (the host may read other tables to produce them), then
  // build the new map and swap it in under the lock: a duplicate key throws CONSTRAINT
  // before anything changed. Another instance's open transaction would undo its writes
  // into the new rows, so it makes this BUSY (as a re-keying ALTER does).
  void replace_contents(sdk::RowSource& source) override {
    std::vector<Row> pulled;
    for (std::span<const qrs_value> cells; source.next(cells);) {
      Row row;
      for (const qrs_value& c : cells) row.push_back(Value::from_c(c));
      pulled.push_back(std::move(row));
    }
    std::unique_lock lock(storage_->mu);
    const KeyOrder& order = *storage_->order;
    for (const TxnLog* log : storage_->logs)
      if (log != log_.get() && log->has_writes())
        throw sdk::Error::busy(storage_->schema.table_name + ": another transaction has writes open on the table");
    RowMap fresh(KeyLess{&order});
    for (Row& row : pulled) {
      if (row.size() != storage_->schema.columns.size())
        throw sdk::Error::misuse("replacement row has " + std::to_string(row.size()) + " cells");
      Row key = order.key_of(row);
      auto [it, inserted] = fresh.emplace(std::move(key), nullptr);
      if (!inserted) {
        std::vector<qrs_value> k;
        for (const Value& v : it->first) k.push_back(v.to_c());
        throw sdk::Error::constraint("UNIQUE constraint failed: " + storage_->schema.table_name + " primary key " +
                                     sdk::describe_cells(k) + " appears twice in the replacement rows");
      }
      it->second = sdk::make_row(std::move(row));
    }
    storage_->rows.swap(fresh);
    log_->forget();  // this instance's uncommitted writes went with the old rows
  }

 private:
  void rewrite(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema);

  TemplateModule* module_;  // outlives its tables (the host releases tables first)
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<TxnLog> log_;
};

// =========================================================================================
// 7. The module
// =========================================================================================

class TemplateModule : public sdk::Module {
 public:
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override {
    std::lock_guard lock(mu_);
    auto [it, inserted] = tables_.emplace(key(schema.schema_name, schema.table_name), nullptr);
    if (!inserted)
      throw sdk::Error::generic("table " + schema.schema_name + "." + schema.table_name + " already exists");
    it->second = std::make_shared<Storage>(schema);
    return std::make_unique<TemplateTable>(this, it->second);
  }

  // Nothing survives the process, so connecting to a table we do not hold starts it empty.
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override {
    std::lock_guard lock(mu_);
    std::shared_ptr<Storage>& s = tables_[key(schema.schema_name, schema.table_name)];
    if (!s) s = std::make_shared<Storage>(schema);
    if (s->schema.columns.size() != schema.columns.size())
      throw sdk::Error::schema("table " + schema.table_name + " is stored with a different column count");
    return std::make_unique<TemplateTable>(this, s);
  }

  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard lock(mu_);
    tables_.erase(key(schema_name, table_name));
  }

  // Not persistent, no snapshot isolation, no committed reads; a backing host (ABI 1.5:
  // the tables implement apply_maintenance and replace_contents).
  sdk::Capabilities capabilities() const override {
    sdk::Capabilities c;
    c.backing_host = true;
    return c;
  }

  // ABI 1.3: one table namespace per database (two databases over one registry never see
  // each other's tables). A persistent module would open its files here, from `options`.
  std::shared_ptr<sdk::Module> open_database(std::string_view, const std::vector<sdk::Option>&) override {
    return std::make_shared<TemplateModule>();
  }

  // ABI 1.6: a logical schema was deployed over basis relations. A module that keeps
  // something per backed relation (a secondary structure, a layout hint) reconciles it
  // here; this one only answers how many of the snapshot's relations it holds.
  uint32_t notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) override {
    std::lock_guard lock(mu_);
    uint32_t backed = 0;
    for (const sdk::LensTableSnapshot& t : snapshot.tables)
      for (const sdk::LensRelationBacking& r : t.relations)
        if (tables_.count(key(r.schema_name, r.table_name))) ++backed;
    return backed;
  }

  // ABI 1.10: how tables of `basis_schema` jointly back one logical table. A dedicated
  // module knows its own layout; this one shows the shape with a naming convention: a
  // table `X` and a companion `X_ext` with the same primary-key column names back logical
  // table `X` — `X` is the existence anchor (mandatory), `X_ext` an optional member
  // outer-joined on the key, every other column mapped to the logical column of the same
  // name. Tables tagged `quereus.lens.decomp.*` advertise through the SDK's shared builder
  // as mem and store do. Return nothing (or throw UNSUPPORTED) to leave name-match alone.
  std::vector<sdk::MappingAdvertisement> mapping_advertisements(std::string_view basis_schema,
                                                                const std::vector<sdk::BasisTable>& tables) override {
    std::vector<sdk::MappingAdvertisement> out = sdk::advertisements_from_tags(tables);
    auto lower = [](std::string_view s) {
      std::string l;
      for (char c : s) l += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      return l;
    };
    auto key_names = [&](const sdk::TableSchema& t) {
      std::vector<std::string> k;
      for (const sdk::KeyColumn& c : t.primary_key) k.push_back(lower(t.columns.at(c.column).name));
      return k;
    };
    auto tagged = [&](const std::string& logical) {
      for (const sdk::MappingAdvertisement& a : out)
        if (lower(a.logical_table) == lower(logical)) return true;
      return false;
    };
    for (const sdk::BasisTable& ext : tables) {
      const std::string& name = ext.schema.table_name;
      if (name.size() <= 4 || lower(name.substr(name.size() - 4)) != "_ext") continue;
      const std::string base_name = name.substr(0, name.size() - 4);
      auto base = std::find_if(tables.begin(), tables.end(),
                               [&](const sdk::BasisTable& t) { return lower(t.schema.table_name) == lower(base_name); });
      if (base == tables.end() || tagged(base->schema.table_name)) continue;
      const std::vector<std::string> key = key_names(base->schema);
      if (key.empty() || key != key_names(ext.schema)) continue;  // no shared key: no decomposition
      sdk::MappingAdvertisement ad;
      ad.id = base->schema.table_name;
      ad.logical_table = base->schema.table_name;
      ad.anchor_relation_id = base->schema.table_name;
      ad.key_kind = sdk::SharedKeyKind::kLogicalTuple;
      for (const sdk::BasisTable* t : {&*base, &ext}) {
        sdk::AdMember m;
        m.relation_id = t->schema.table_name;
        m.schema_name = std::string(basis_schema);
        m.table_name = t->schema.table_name;
        m.optional = t == &ext;
        for (const sdk::KeyColumn& c : t->schema.primary_key) m.key_columns.push_back(t->schema.columns.at(c.column).name);
        for (const sdk::ColumnDef& c : t->schema.columns) {
          const bool is_key = std::find(key.begin(), key.end(), lower(c.name)) != key.end();
          if (!is_key || t == &*base) m.columns.emplace_back(c.name, c.name);
        }
        ad.members.push_back(std::move(m));
      }
      out.push_back(std::move(ad));
    }
    return out;
  }

  // ALTER TABLE … RENAME TO: the storage moves to its new name.
  void rename(const std::shared_ptr<Storage>& s, const std::string& new_name) {
    std::lock_guard lock(mu_);
    std::unique_lock slock(s->mu);
    std::string from = key(s->schema.schema_name, s->schema.table_name);
    std::string to = key(s->schema.schema_name, new_name);
    if (from != to) {
      if (tables_.count(to)) throw sdk::Error::generic("table " + s->schema.schema_name + "." + new_name + " already exists");
      tables_.erase(from);
      tables_.emplace(to, s);
    }
    s->schema.table_name = new_name;
  }

 private:
  // Identifiers compare case-insensitively: key the registry by the lower-cased names.
  static std::string key(std::string_view schema, std::string_view table) {
    std::string k;
    for (char c : schema) k += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    k += '\0';
    for (char c : table) k += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return k;
  }

  std::mutex mu_;  // guards tables_ (the host may use one module from several threads)
  std::map<std::string, std::shared_ptr<Storage>> tables_;
};

// ALTER TABLE (ABI 1.2). Each arm is either schema-only (adopt the new schema) or a
// rewrite of every stored row followed by a rebuild of the map under the new key order.
// All or nothing: the new map is built aside and swapped in only when every row made it.
void TemplateTable::alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) {
  using K = sdk::SchemaChangeKind;
  switch (change.kind) {
    case K::kRenameTable:
      module_->rename(storage_, new_schema.table_name);
      return;
    case K::kRenameColumn:
    case K::kDropNotNull:
    case K::kSetDefault:
    case K::kAddConstraint:
    case K::kDropConstraint:
    case K::kRenameConstraint: {
      std::unique_lock lock(storage_->mu);
      storage_->schema = new_schema;  // no stored row changes
      return;
    }
    case K::kAddColumn:
    case K::kDropColumn:
    case K::kSetDataType:
    case K::kSetNotNull:
    case K::kSetCollation:
    case K::kAlterPrimaryKey:
      rewrite(change, new_schema);
      return;
  }
  // An arm added by a newer SDK: UNSUPPORTED makes the host refuse it cleanly.
  throw sdk::Error::unsupported(std::string(kModuleName) + " ALTER TABLE arm " +
                                std::to_string(static_cast<uint32_t>(change.kind)));
}

void TemplateTable::rewrite(const sdk::SchemaChange& change, const sdk::TableSchema& ns) {
  using K = sdk::SchemaChangeKind;
  std::unique_lock lock(storage_->mu);
  const std::string& table = ns.table_name;
  const uint32_t col = change.column;

  // Does the arm change keys? Then the undo logs (rows under their old keys) cannot simply
  // be rewritten in place; this module refuses (BUSY: retry after the transaction) rather
  // than re-key them — a legitimate limitation for a template. Other arms rewrite the
  // logged rows too, so a rollback restores them in the new layout.
  bool rekeys = change.kind == K::kAlterPrimaryKey;
  if (change.kind == K::kSetCollation || change.kind == K::kSetDataType || change.kind == K::kSetNotNull)
    for (const sdk::KeyColumn& k : storage_->schema.primary_key) rekeys = rekeys || k.column == col;
  if (rekeys)
    for (const TxnLog* log : storage_->logs)
      if (log->has_writes())
        throw sdk::Error::busy("Cannot re-key '" + table + "' while a transaction has uncommitted writes to it (" +
                               kModuleName + " module); commit or roll back, then retry");

  // `visible`: the row is in the table now. A row only an undo log holds (one the
  // transaction deleted or overwrote) must not make the ALTER fail: it keeps a value that
  // does not convert, or a NULL nothing backfills.
  std::vector<qrs_value> cells;  // the old row as C views, for the host's callbacks
  auto transform = [&](const Row& row, bool visible) {
    Row out = row;
    cells.clear();
    for (const Value& v : row) cells.push_back(v.to_c());
    switch (change.kind) {
      case K::kAddColumn: {
        // fill() returns a host-owned view valid until the next callback: copy it now.
        Value v = Value::from_c(change.fill(cells));
        if (v.is_null() && ns.columns.at(col).not_null && visible)
          throw sdk::Error::constraint("NOT NULL constraint failed: " + table + "." + ns.columns[col].name +
                                       " (the table has rows and the new column has no non-NULL default)");
        out.insert(out.begin() + col, std::move(v));
        break;
      }
      case K::kDropColumn:
        out.erase(out.begin() + col);
        break;
      case K::kSetDataType:
        if (!row.at(col).is_null()) {
          try {
            out[col] = Value::from_c(change.convert(cells[col]));
          } catch (const sdk::Error&) {
            if (visible) throw;
          }
        }
        break;
      case K::kSetNotNull:
        if (row.at(col).is_null()) {
          Value v = Value::from_c(change.fill(cells));
          if (v.is_null() && visible)
            throw sdk::Error::constraint("Cannot SET NOT NULL on column '" + ns.columns.at(col).name + "' of '" +
                                         table + "': it contains NULL values and has no DEFAULT to backfill");
          out[col] = std::move(v);
        }
        break;
      default:  // kSetCollation, kAlterPrimaryKey: same cells, new key order
        break;
    }
    if (out.size() != ns.columns.size())
      throw sdk::Error::internal("ALTER produced a row of " + std::to_string(out.size()) + " cells for " +
                                 std::to_string(ns.columns.size()) + " columns");
    return out;
  };

  // The logged rows first (nothing is changed until every row made it).
  std::vector<std::pair<TxnLog*, std::vector<RowPtr>>> logged;
  for (TxnLog* log : storage_->logs) {
    if (!log->has_writes()) continue;
    std::vector<RowPtr> saved = log->saved_rows();
    for (RowPtr& r : saved)
      if (r) r = sdk::make_row(transform(*r, false));
    logged.emplace_back(log, std::move(saved));
  }

  auto order = std::make_unique<KeyOrder>(ns);
  RowMap rows(KeyLess{order.get()});
  for (const auto& [key, row] : storage_->rows) {
    Row next = transform(*row, true);
    Row next_key = order->key_of(next);
    if (!rows.emplace(std::move(next_key), sdk::make_row(std::move(next))).second) throw sdk::rekey_collision(table);
  }
  // Every row made it: swap in (the map's comparator travels with it).
  storage_->rows.swap(rows);
  storage_->order.swap(order);
  storage_->schema = ns;
  for (auto& [log, saved] : logged) log->replace_saved_rows(std::move(saved));
}

// =========================================================================================
// 8. The plugin entry
// =========================================================================================

// Called once when the host loads the plugin. Everything registered here must be declared
// in the manifest ("provides"); a throw refuses the whole plugin with its message.
void register_plugin(sdk::Registrar& registrar) { registrar.add_module(kModuleName, std::make_shared<TemplateModule>()); }

}  // namespace tmpl

// RENAME: the manifest symbol (as above) and the namespace.
QUEREUS_PLUGIN(kTemplateManifest, tmpl::register_plugin)
