// quereus/module.hpp — the C++ interfaces a storage module implements.
//
// A plugin registers a Module (Registrar::add_module). The host then calls
//
//   Module::create / connect   -> a Table per connected schema.table instance
//   Table::best_access_plan    -> at plan time: which filters, cost, ordering
//   Table::open_cursor         -> at run time: a Cursor that yields rows in RowBatches
//   Table::update              -> insert / update / delete by primary key
//   Table::open_connection     -> a Connection: begin / commit / rollback / savepoints
//   Table::apply_maintenance / replace_contents
//                              -> a backing host's privileged writes (ABI 1.5, optional)
//
// Every interface here is pure virtual where the host needs an answer and has a default
// that throws Error::unsupported (QRS_UNSUPPORTED, the host falls back) where the
// capability is optional. The trampolines (detail/trampolines.hpp) adapt these classes to
// the C vtables of abi.h and catch every exception at the boundary.
//
// Threading (from abi.h): the host serializes calls on one object (one Module, one Table,
// one Cursor, one Connection), but different Tables of one Module, and a Table and its
// Cursors, may be used from different threads. State shared between objects (a module's
// table registry, a table's rows shared by several instances) must be synchronized by the
// module.
#ifndef QUEREUS_MODULE_HPP_
#define QUEREUS_MODULE_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "quereus/error.hpp"
#include "quereus/value.hpp"

namespace quereus::sdk {

// ---------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------

// One column of a table (a copy of qrs_column_def).
struct ColumnDef {
  std::string name;       // display casing
  std::string type_name;  // declared type text, may be empty
  qrs_logical_type logical_type = QRS_LT_ANY;
  bool not_null = false;
  bool primary_key = false;  // member of the primary key
  Collation collation;       // the column's collation
};

// One member of the primary key (a copy of qrs_key_column).
struct KeyColumn {
  uint32_t column = 0;  // index into TableSchema::columns
  bool desc = false;
  Collation collation;  // comparison for TEXT values of this member
};

// A module argument: `USING module(key = value)` or a YAML module option.
struct Option {
  std::string key;
  Value value;
};

// The schema of one table, owned (copied from qrs_table_schema by the trampolines).
//
// The primary key is never absent: a table declared without one arrives keyed on all its
// columns in column order, and `primary key ()` arrives with an empty primary_key (a
// singleton table holding at most one row).
struct TableSchema {
  std::string schema_name;  // canonical lower-case, e.g. "main"
  std::string table_name;   // display casing, bare
  std::vector<ColumnDef> columns;
  std::vector<KeyColumn> primary_key;
  std::vector<Option> options;

  // The option named `key` (ASCII case-insensitive), or nullptr.
  const Option* find_option(std::string_view key) const {
    for (const Option& o : options) {
      if (o.key.size() != key.size()) continue;
      bool same = true;
      for (size_t i = 0; i < key.size() && same; ++i) same = ascii_lower(o.key[i]) == ascii_lower(key[i]);
      if (same) return &o;
    }
    return nullptr;
  }

 private:
  static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
};

// ---------------------------------------------------------------------------------------
// Access-plan negotiation (see abi.h qrs_plan_request)
// ---------------------------------------------------------------------------------------

enum class FilterOp : uint32_t {
  kEq = QRS_OP_EQ,
  kGt = QRS_OP_GT,
  kGe = QRS_OP_GE,
  kLt = QRS_OP_LT,
  kLe = QRS_OP_LE,
  kIn = QRS_OP_IN,
  kIsNull = QRS_OP_IS_NULL,
  kIsNotNull = QRS_OP_IS_NOT_NULL,
  kForm = QRS_OP_FORM  // 1.11: a predicate of access form Filter::form; `value` its argument
};

// One predicate `column op value` the engine offers.
struct Filter {
  uint32_t column = 0;
  FilterOp op = FilterOp::kEq;
  bool usable = true;      // false: the module must not rely on it
  bool has_value = false;  // value / in_values are known (always true at scan time)
  Value value;             // comparand of EQ/GT/GE/LT/LE when has_value
  std::vector<Value> in_values;  // the IN list when has_value
  uint32_t in_count = 0;         // IN list length, known even when !has_value
  std::string form;              // kForm: the access form's name ("contains", "prefix", …)
};

struct OrderSpec {
  uint32_t column = 0;
  bool desc = false;
};

// The question: which filters can you answer, at what cost, in which order?
struct PlanRequest {
  std::vector<Filter> filters;
  std::vector<OrderSpec> ordering;  // required output ordering, may be empty
  int64_t limit = -1;               // -1 when absent
  int64_t offset = 0;
  double estimated_rows = -1;       // < 0 when unknown
};

// The answer. `handled` is empty (= nothing handled) or has one entry per request filter.
struct PlanResult {
  std::vector<bool> handled;       // filters the module guarantees (the engine may re-check)
  double cost = 0;                 // ~1.0 per sequentially scanned row
  double rows = 1;                 // rows matched; 0 only when provably empty
  bool provides_ordering = false;  // rows come out in the requested ordering
  int64_t plan_id = 0;             // private plan number, comes back in ScanArgs
  std::string explain;             // short description; truncated to 127 bytes
};

// A scan: the chosen plan with the filters now bound (has_value is true).
struct ScanArgs {
  int64_t plan_id = 0;
  std::vector<Filter> filters;  // the request's filters, same positions
  std::vector<bool> handled;    // what the module claimed, one per filter
  bool provides_ordering = false;
  std::vector<OrderSpec> ordering;
  int64_t limit = -1;  // soft cap including the offset, -1 for none
  // A `committed.<table>` read (ABI 1.1): the last committed state, without this
  // connection's uncommitted writes. Sent only to modules declaring committed_reads.
  bool read_committed = false;
};

// ---------------------------------------------------------------------------------------
// Writes (see abi.h qrs_update_args)
// ---------------------------------------------------------------------------------------

enum class RowOp : uint32_t { kInsert = QRS_ROW_INSERT, kUpdate = QRS_ROW_UPDATE, kDelete = QRS_ROW_DELETE };

enum class Conflict : uint32_t {
  kAbort = QRS_CONFLICT_ABORT,
  kRollback = QRS_CONFLICT_ROLLBACK,
  kFail = QRS_CONFLICT_FAIL,
  kIgnore = QRS_CONFLICT_IGNORE,
  kReplace = QRS_CONFLICT_REPLACE
};

struct UpdateArgs {
  RowOp op = RowOp::kInsert;
  Conflict on_conflict = Conflict::kAbort;
  Row values;   // insert/update: the full new row in column order (owned: move it into storage)
  Row old_key;  // update/delete: the existing row's key, one cell per primary-key member
};

// The same write as the host sent it: C views valid for the call only (Table::update_cells).
// Cell type tags are checked; text is the host's (well-formed UTF-8).
struct UpdateCells {
  RowOp op = RowOp::kInsert;
  Conflict on_conflict = Conflict::kAbort;
  std::span<const qrs_value> values;   // insert/update: the full new row in column order
  std::span<const qrs_value> old_key;  // update/delete: one cell per primary-key member
};

enum class UpdateOutcome : uint32_t {
  kOk = QRS_UPDATE_OK,                 // a row was written
  kNoop = QRS_UPDATE_NOOP,             // nothing changed (missing key, IGNORE)
  kConstraint = QRS_UPDATE_CONSTRAINT  // refused by a constraint; nothing changed
};

enum class ConstraintKind : uint32_t {
  kUnique = QRS_CONSTRAINT_UNIQUE,
  kCheck = QRS_CONSTRAINT_CHECK,
  kNotNull = QRS_CONSTRAINT_NOT_NULL,
  kForeignKey = QRS_CONSTRAINT_FOREIGN_KEY
};

// The outcome of Table::update. Rows are shared: the trampoline keeps them alive until the
// next call on the table, so a module may return the very RowPtr it stores.
struct UpdateResult {
  UpdateOutcome outcome = UpdateOutcome::kNoop;
  ConstraintKind constraint_kind = ConstraintKind::kUnique;
  RowPtr row;           // kOk: the stored row (insert/update; null = exactly the row given) or the deleted row
  RowPtr replaced_row;  // kOk under REPLACE: the row displaced at the same key
  RowPtr existing_row;  // kConstraint: the conflicting row, when known

  static UpdateResult ok(RowPtr row, RowPtr replaced = nullptr) {
    UpdateResult r;
    r.outcome = UpdateOutcome::kOk;
    r.row = std::move(row);
    r.replaced_row = std::move(replaced);
    return r;
  }
  static UpdateResult noop() { return UpdateResult(); }
  static UpdateResult constraint(ConstraintKind kind, RowPtr existing = nullptr) {
    UpdateResult r;
    r.outcome = UpdateOutcome::kConstraint;
    r.constraint_kind = kind;
    r.existing_row = std::move(existing);
    return r;
  }
};

// ---------------------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------------------

// The rows one Cursor::next_batch call hands to the host. Owned by the cursor trampoline,
// cleared before each call; what it holds stays valid until the next call on the cursor
// (or its close), as abi.h requires.
//
// Thread safety: used by one thread at a time (the cursor's).
class RowBatch {
 public:
  static constexpr size_t kDefaultCapacity = 256;

  explicit RowBatch(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {
    // Storage is recycled between the batches of short-lived cursors (a point lookup opens
    // one per execution), so a scan does not pay for growing its buffers every time.
    auto& pool = storage_pool();
    if (!pool.empty()) {
      cells_ = std::move(pool.back().first);
      keep_ = std::move(pool.back().second);
      pool.pop_back();
    }
  }
  ~RowBatch() {
    clear();
    auto& pool = storage_pool();
    if (pool.size() < kPoolSize) pool.emplace_back(std::move(cells_), std::move(keep_));
  }
  RowBatch(const RowBatch&) = delete;
  RowBatch& operator=(const RowBatch&) = delete;

  size_t capacity() const noexcept { return capacity_; }
  size_t size() const noexcept { return rows_; }
  size_t remaining() const noexcept { return capacity_ - rows_; }
  bool full() const noexcept { return rows_ >= capacity_; }
  bool empty() const noexcept { return rows_ == 0; }
  uint32_t column_count() const noexcept { return columns_; }

  // Appends a shared row without copying it; the batch holds a reference until cleared.
  // REQUIRES: !full(); every row of a batch has the same cell count (Error QRS_INTERNAL).
  void add(RowPtr row) {
    if (!row) throw Error::internal("RowBatch::add: null row");
    if (full()) throw Error::internal("RowBatch::add: batch is full");
    append_cells(*row);
    keep_.push_back(std::move(row));
  }
  // Appends C views of cells the module stores itself (text / blob / JSON bytes must live
  // in memory `owner` keeps alive): no Value is built and no byte is copied. The batch
  // holds `owner` until cleared. Same requirements as add.
  void add_cells(std::span<const qrs_value> cells, std::shared_ptr<const void> owner) {
    if (full()) throw Error::internal("RowBatch::add_cells: batch is full");
    start_row(cells.size());
    cells_.insert(cells_.end(), cells.begin(), cells.end());
    keep_.push_back(std::move(owner));
    ++rows_;
  }
  // Appends a copy of `row`. Same requirements as add.
  void add_copy(std::span<const Value> row) { add(make_row(Row(row.begin(), row.end()))); }

  // Drops every row. Called by the trampoline before each next_batch.
  void clear() noexcept {
    cells_.clear();
    keep_.clear();
    rows_ = 0;
    columns_ = 0;
  }

  // Row-major C views: cells()[r * column_count() + c].
  std::span<const qrs_value> cells() const noexcept { return cells_; }

 private:
  void start_row(size_t n) {
    if (rows_ == 0) {
      columns_ = static_cast<uint32_t>(n);
      cells_.reserve(capacity_ * n);
    } else if (n != columns_) {
      throw Error::internal("RowBatch: row has " + std::to_string(n) + " cells, batch has " +
                            std::to_string(columns_));
    }
  }
  void append_cells(const Row& row) {
    start_row(row.size());
    for (const Value& v : row) cells_.push_back(v.to_c());
    ++rows_;
  }

  static constexpr size_t kPoolSize = 8;
  using Storage = std::pair<std::vector<qrs_value>, std::vector<std::shared_ptr<const void>>>;
  static std::vector<Storage>& storage_pool() {
    thread_local std::vector<Storage> pool;
    return pool;
  }

  size_t capacity_;
  size_t rows_ = 0;
  uint32_t columns_ = 0;
  std::vector<qrs_value> cells_;
  std::vector<std::shared_ptr<const void>> keep_;  // keeps the viewed rows alive until clear()
};

// A scan in progress, created by Table::open_cursor. Destroying it closes the scan (the
// host may close before exhaustion).
class Cursor {
 public:
  Cursor() = default;
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  virtual ~Cursor() = default;

  // Appends the next rows to `out` (at most out.remaining(); `out` arrives empty).
  // Appending nothing means the cursor is exhausted; the host then stops calling.
  // Rows added with RowBatch::add are shared, not copied.
  // Throws Error on failure (e.g. QRS_INTERRUPT, QRS_IOERR).
  virtual void next_batch(RowBatch& out) = 0;
};

// ---------------------------------------------------------------------------------------
// Connections (transactions)
// ---------------------------------------------------------------------------------------

// A transaction participant, created by Table::open_connection and registered by the host
// with its transaction coordinator. The host calls begin before the first write of a
// transaction, then commit or rollback. Savepoints are numbered by depth (1 = outermost
// savepoint inside begin): rollback_to_savepoint(d) undoes everything after savepoint d
// and keeps d open; release_savepoint(d) merges d (and every deeper one) into its parent.
//
// Destroying a Connection rolls back an open transaction; it must not throw.
class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  virtual ~Connection() = default;

  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  // Optional; the defaults throw QRS_UNSUPPORTED.
  virtual void savepoint(uint32_t /*depth*/) { throw Error::unsupported("savepoint"); }
  virtual void release_savepoint(uint32_t /*depth*/) { throw Error::unsupported("release savepoint"); }
  virtual void rollback_to_savepoint(uint32_t /*depth*/) { throw Error::unsupported("rollback to savepoint"); }
};

// ---------------------------------------------------------------------------------------
// Tables and modules
// ---------------------------------------------------------------------------------------

// One connected schema.table instance. Destroying it disconnects (storage stays).
// Objects it created (cursors, connections) may outlive it.
// ---------------------------------------------------------------------------------------
// Schema changes (ABI 1.2; see abi.h qrs_schema_change)
// ---------------------------------------------------------------------------------------

enum class SchemaChangeKind : uint32_t {
  kAddColumn = QRS_CHANGE_ADD_COLUMN,
  kDropColumn = QRS_CHANGE_DROP_COLUMN,
  kRenameColumn = QRS_CHANGE_RENAME_COLUMN,
  kSetDataType = QRS_CHANGE_SET_DATA_TYPE,
  kSetNotNull = QRS_CHANGE_SET_NOT_NULL,
  kDropNotNull = QRS_CHANGE_DROP_NOT_NULL,
  kSetDefault = QRS_CHANGE_SET_DEFAULT,
  kSetCollation = QRS_CHANGE_SET_COLLATION,
  kAlterPrimaryKey = QRS_CHANGE_ALTER_PRIMARY_KEY,
  kAddConstraint = QRS_CHANGE_ADD_CONSTRAINT,
  kDropConstraint = QRS_CHANGE_DROP_CONSTRAINT,
  kRenameConstraint = QRS_CHANGE_RENAME_CONSTRAINT,
  kRenameTable = QRS_CHANGE_RENAME_TABLE
};

namespace detail {
// A qrs_error the host's callbacks fill: the message of a failed host call.
struct HostMessage {
  std::string text;
  qrs_error err{sizeof(qrs_error), this, [](qrs_error* e, const char* msg, size_t len) {
                  static_cast<HostMessage*>(e->ctx)->text.assign(msg, len);
                }};
  HostMessage() = default;
  HostMessage(const HostMessage&) = delete;
};
}  // namespace detail

// One ALTER TABLE arm, valid for the alter_table call that receives it. fill() and
// convert() call back into the host; the C view they return is owned by the host and
// valid until the next fill / convert call, so pack it before asking for the next one.
class SchemaChange {
 public:
  explicit SchemaChange(const qrs_schema_change& c)
      : kind(static_cast<SchemaChangeKind>(c.kind)), column(c.column_index),
        name(c.name.data ? std::string(c.name.data, c.name.len) : std::string()),
        new_name(c.new_name.data ? std::string(c.new_name.data, c.new_name.len) : std::string()), c_(c) {}

  SchemaChangeKind kind;
  uint32_t column;       // the column acted on (old schema; ADD_COLUMN: new schema)
  std::string name;      // column / constraint acted on (renames: old name)
  std::string new_name;  // renames: the new name

  // ADD_COLUMN: the new cell of the existing row `old_row`; SET_NOT_NULL: the backfill for
  // its NULL cell (NULL: none). Throws Error with the host's status and message.
  qrs_value fill(std::span<const qrs_value> old_row) const {
    qrs_value out{};
    if (!c_.fill) return out;
    qrs_row row{old_row.data(), static_cast<uint32_t>(old_row.size())};
    Message m;
    qrs_status st = c_.fill(c_.ctx, &row, &out, &m.err);
    if (st != QRS_OK) throw Error(st, m.text);
    return out;
  }
  // SET_DATA_TYPE: `in` as the new type stores it. Throws Error (QRS_MISMATCH naming the
  // value) when it does not convert.
  qrs_value convert(const qrs_value& in) const {
    if (!c_.convert) return in;
    qrs_value out{};
    Message m;
    qrs_status st = c_.convert(c_.ctx, &in, &out, &m.err);
    if (st != QRS_OK) throw Error(st, m.text);
    return out;
  }

 private:
  using Message = detail::HostMessage;
  const qrs_schema_change& c_;
};

// The answer of Table::lookup (ABI 1.3). A found row is either C views of cells the module
// keeps itself (`cells`, alive while `owner` lives, as RowBatch::add_cells) or a shared
// row (`row`). The trampoline holds it until the next call on the table.
struct LookupResult {
  bool found = false;
  std::span<const qrs_value> cells;
  std::shared_ptr<const void> owner;
  RowPtr row;

  static LookupResult not_found() { return LookupResult(); }
  static LookupResult of_cells(std::span<const qrs_value> cells, std::shared_ptr<const void> owner) {
    LookupResult r;
    r.found = true;
    r.cells = cells;
    r.owner = std::move(owner);
    return r;
  }
  static LookupResult of_row(RowPtr row) {
    if (!row) throw Error::internal("LookupResult::of_row: null row");
    LookupResult r;
    r.found = true;
    r.row = std::move(row);
    return r;
  }
};

// ---------------------------------------------------------------------------------------
// The backing-host capability (ABI 1.5; see abi.h qrs_maintenance_op)
// ---------------------------------------------------------------------------------------

enum class MaintenanceKind : uint32_t {
  kUpsert = QRS_MAINT_UPSERT,        // `row` is the full new row (column order)
  kDeleteKey = QRS_MAINT_DELETE_KEY  // `row` is the full primary key (key order)
};

// One maintenance op as the host sent it: C views, valid for the apply_maintenance call
// only (copy what you store). Cell type tags are checked by the trampoline.
struct MaintenanceOp {
  MaintenanceKind kind = MaintenanceKind::kUpsert;
  std::span<const qrs_value> row;
};

// Where Table::apply_maintenance reports each change it REALIZED, in op order (abi.h
// qrs_change_sink). The rows are borrowed for the call. When the host's sink refuses a
// change, the call throws Error with the host's status: let it propagate (the host rolls
// back to its savepoint; ops already applied may stay applied).
class ChangeSink {
 public:
  explicit ChangeSink(const qrs_change_sink& c) : c_(c) {}
  ChangeSink(const ChangeSink&) = delete;
  ChangeSink& operator=(const ChangeSink&) = delete;

  // An upsert stored a row where there was none.
  void inserted(std::span<const qrs_value> new_row) const { emit(RowOp::kInsert, nullptr, &new_row); }
  // An upsert replaced `old_row` (the row this instance saw at the key) by `new_row`.
  void updated(std::span<const qrs_value> old_row, std::span<const qrs_value> new_row) const {
    emit(RowOp::kUpdate, &old_row, &new_row);
  }
  // A delete removed `old_row`.
  void deleted(std::span<const qrs_value> old_row) const { emit(RowOp::kDelete, &old_row, nullptr); }

 private:
  void emit(RowOp op, const std::span<const qrs_value>* old_row, const std::span<const qrs_value>* new_row) const {
    qrs_row o{}, n{};
    if (old_row) o = qrs_row{old_row->data(), static_cast<uint32_t>(old_row->size())};
    if (new_row) n = qrs_row{new_row->data(), static_cast<uint32_t>(new_row->size())};
    qrs_status st = c_.emit(c_.ctx, static_cast<uint32_t>(op), old_row ? &o : nullptr, new_row ? &n : nullptr);
    if (st != QRS_OK)
      throw Error(st == QRS_ROW || st == QRS_DONE ? QRS_INTERNAL : st, "the host's change sink refused a change");
  }
  const qrs_change_sink& c_;
};

// The rows Table::replace_contents installs, pulled from the host one at a time (abi.h
// qrs_row_source). The host may compute them while you pull (a query over other tables),
// so do not hold a lock other threads of the host need while calling next().
class RowSource {
 public:
  explicit RowSource(const qrs_row_source& s) : s_(s) {}
  RowSource(const RowSource&) = delete;
  RowSource& operator=(const RowSource&) = delete;

  // The next row in column order: true with `row` set (C views valid until the next call),
  // false at the end. Throws Error with the host's status and message when the host fails
  // (the replacement is then abandoned: leave the table as it was).
  bool next(std::span<const qrs_value>& row) {
    qrs_row out{};
    qrs_status st = s_.next(s_.ctx, &out, &m_.err);
    if (st == QRS_DONE) return false;
    if (st != QRS_ROW) throw Error(st == QRS_OK ? QRS_INTERNAL : st, m_.text.empty() ? "the host's row source failed" : m_.text);
    if (out.count && !out.cells) throw Error::misuse("the host's row source returned a row without cells");
    for (uint32_t i = 0; i < out.count; ++i)
      if (out.cells[i].type > QRS_TYPE_JSON)
        throw Error::mismatch("row source: unknown qrs_value type tag " + std::to_string(out.cells[i].type));
    row = std::span<const qrs_value>(out.cells, out.count);
    return true;
  }

 private:
  using Message = detail::HostMessage;
  const qrs_row_source& s_;
  Message m_;
};

class Table {
 public:
  Table() = default;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  virtual ~Table() = default;

  // Plan-time negotiation: must be cheap, pure and deterministic. Set handled[i] only for
  // filters the cursor will really enforce; the plan id and the claims come back in
  // ScanArgs. Default: QRS_UNSUPPORTED (the host full-scans and filters itself).
  virtual PlanResult best_access_plan(const PlanRequest& /*request*/) {
    throw Error::unsupported("best_access_plan");
  }

  // Opens a scan honouring exactly what best_access_plan claimed for args.plan_id.
  // Reads see the writes of the table's open transaction. Never returns nullptr.
  virtual std::unique_ptr<Cursor> open_cursor(const ScanArgs& args) = 0;

  // Insert / update / delete by primary key. Expected constraint outcomes (duplicate key)
  // are results, not exceptions. Throw Error for real failures (QRS_READONLY, QRS_MISUSE
  // for a malformed row, …).
  virtual UpdateResult update(UpdateArgs args) = 0;

  // The entry point the host calls: the write with its rows as C views, valid for this
  // call only. The default copies them into Values and calls update(); a table that
  // stores cells in its own format overrides this and copies the bytes once.
  virtual UpdateResult update_cells(const UpdateCells& args) {
    UpdateArgs a;
    a.op = args.op;
    a.on_conflict = args.on_conflict;
    a.values.reserve(args.values.size());
    for (const qrs_value& c : args.values) a.values.push_back(Value::from_c(c));
    a.old_key.reserve(args.old_key.size());
    for (const qrs_value& c : args.old_key) a.old_key.push_back(Value::from_c(c));
    return update(std::move(a));
  }

  // The table's transaction participant. Default: QRS_UNSUPPORTED (writes autocommit).
  virtual std::unique_ptr<Connection> open_connection() { throw Error::unsupported("transactions"); }

  // ABI 1.2, ALTER TABLE: bring the storage to `new_schema` by the arm `change` describes,
  // rewriting the stored rows it affects (committed and this instance's pending ones).
  // All or nothing: throw (Error::constraint / mismatch / busy) leaving storage untouched.
  // Default: QRS_UNSUPPORTED — the host applies schema-only arms itself and refuses the
  // data-affecting ones.
  virtual void alter_table(const SchemaChange& /*change*/, const TableSchema& /*new_schema*/) {
    throw Error::unsupported("alter_table");
  }

  // ABI 1.3, point lookup: the first row in key order whose leading primary-key members
  // equal `key` (1..key-member cells, in key order; compared under the key's collations),
  // as this instance sees the table (its open transaction included); with a full key, the
  // row at that key. The trampoline refuses an empty key; more cells than the key has
  // members is the table's to refuse (Error::misuse). Default: QRS_UNSUPPORTED — the host
  // opens a cursor with EQ filters instead.
  virtual LookupResult lookup(std::span<const qrs_value> /*key*/) { throw Error::unsupported("lookup"); }

  // ABI 1.5, backing host (abi.h qrs_table_vtable.apply_maintenance). Applies `ops` in
  // order to this instance's transaction state — its open transaction's pending writes, or
  // the committed rows when none is open — exactly as update() stores rows, and reports
  // through `sink` the changes each op REALIZED:
  //   upsert, no row at the key           -> sink.inserted(new)
  //   upsert, a different row at the key  -> sink.updated(old, new)  (also when only the
  //                                          key's bytes differ under an equating collation)
  //   upsert, an identical row            -> nothing written, nothing reported
  //                                          (sdk::identical: type and bytes; 5 != 5.0)
  //   delete, a row at the key            -> sink.deleted(old)
  //   delete, no row                      -> nothing
  // A later op sees the earlier ones. On a throw the ops already applied stay applied.
  // Default: QRS_UNSUPPORTED — the module is no backing host. Override it together with
  // replace_contents and declare Capabilities::backing_host.
  virtual void apply_maintenance(std::span<const MaintenanceOp> /*ops*/, ChangeSink& /*sink*/) {
    throw Error::unsupported("apply_maintenance");
  }

  // ABI 1.5, backing host (abi.h qrs_table_vtable.replace_contents). Atomically replaces
  // the table's COMMITTED rows with those `rows` yields, and discards this instance's
  // pending writes. Build the new contents aside first: two rows at one key (under the
  // key's collations) throw Error::constraint naming the key with the table unchanged, and
  // a concurrent reader sees the old contents or the new, never a mix. Inside a schema-
  // change scope (Module::schema_begin) the replacement joins the scope's atomic unit.
  // Default: QRS_UNSUPPORTED — the module is no backing host.
  virtual void replace_contents(RowSource& /*rows*/) { throw Error::unsupported("replace_contents"); }
};

// Capabilities a module declares; read once by the host (see qrs_module_capabilities).
struct Capabilities {
  bool persistent = false;               // data survives the process
  bool scan_snapshot_isolation = false;  // scans do not see writes made while they run
  bool committed_reads = false;          // honours ScanArgs::read_committed (ABI 1.1)
  // ABI 1.5: the module's tables implement apply_maintenance and replace_contents and may
  // host a maintained table (a materialized view).
  bool backing_host = false;
  // ABI 1.11: best_access_plan understands FilterOp::kForm filters (access forms such as
  // "contains"); the engine offers them only to modules declaring this.
  bool access_forms = false;
};

// ABI 1.6: what a logical APPLY SCHEMA deployed (see qrs_lens_snapshot; docs/lenses.md).
struct LensRelationBacking {
  std::string schema_name;  // lower-case
  std::string table_name;
  std::vector<std::pair<std::string, std::string>> columns;  // basis column → logical column
};
struct LensTableSnapshot {
  std::string logical_table;
  std::string get_body;  // the compiled SELECT over the basis
  std::vector<std::string> logical_columns;
  std::vector<LensRelationBacking> relations;
};
struct LensDeploymentSnapshot {
  std::string logical_schema;
  std::string basis_schema;
  std::string basis_hash;
  std::vector<LensTableSnapshot> tables;
};

// ABI 1.10: mapping advertisements (see qrs_mapping_advertisement; docs/decompositions.md).
// One of the module's tables of the basis schema asked about, with its WITH TAGS (each
// value as text: a string as itself, a number in decimal, true / false, "" for null).
struct BasisTable {
  TableSchema schema;
  std::vector<std::pair<std::string, std::string>> tags;
};
enum class AdRole : uint32_t { kPrimaryStorage = QRS_AD_PRIMARY_STORAGE, kAuxiliaryAccess = QRS_AD_AUXILIARY_ACCESS };
enum class SharedKeyKind : uint32_t { kLogicalTuple = QRS_AD_KEY_LOGICAL_TUPLE, kSurrogate = QRS_AD_KEY_SURROGATE };
struct AdPivot {  // an entity-attribute-value member's columns
  std::string entity_column;
  std::string attribute_column;
  std::string value_column;
};
struct AdMember {
  std::string relation_id;  // stable, unique within the basis schema
  std::string schema_name;
  std::string table_name;
  bool optional = false;  // outer-joined (absent when the row has no value for it)
  std::vector<std::pair<std::string, std::string>> columns;  // logical column → basis column
  std::optional<AdPivot> pivot;                              // set: an EAV member
  std::vector<std::string> key_columns;                      // its shared-key columns
};
struct AdAccess {  // predicates of `forms` over logical `columns` an auxiliary answers
  std::vector<std::string> columns;
  std::vector<std::string> forms;
};
struct MappingAdvertisement {
  std::string id;  // == anchor_relation_id for primary storage
  std::string logical_table;
  AdRole role = AdRole::kPrimaryStorage;
  std::string anchor_relation_id;
  SharedKeyKind key_kind = SharedKeyKind::kLogicalTuple;
  std::vector<AdMember> members;
  std::vector<AdAccess> access;
};

// A storage module: the factory of tables, registered under one or more names.
//
// Thread safety: the host may call a Module from several threads at once (one module can
// serve several databases); synchronize module-wide state.
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  // CREATE TABLE … USING this module: creates storage and returns a connected table.
  // Throw Error (QRS_ERROR) when schema.table already exists.
  virtual std::unique_ptr<Table> create(const TableSchema& schema) = 0;
  // Connects to existing storage (e.g. a reopened database).
  virtual std::unique_ptr<Table> connect(const TableSchema& schema) = 0;
  // DROP TABLE: destroys the storage. Connected instances were released before.
  virtual void destroy(std::string_view schema_name, std::string_view table_name) = 0;
  // Read once; the default declares nothing.
  virtual Capabilities capabilities() const { return {}; }

  // 1.3: a per-database instance for `database_name`, configured by `options` (the
  // database's module_options for this module). Persistent modules open their storage here
  // and throw an Error naming the path when it is missing, locked or incompatible.
  // Return null (the default) to serve every database from this instance.
  virtual std::shared_ptr<Module> open_database(std::string_view /*database_name*/,
                                                const std::vector<Option>& /*options*/) {
    return nullptr;
  }
  // 1.3: the persistent catalog (see qrs_module_vtable.catalog_put): stores `text` under
  // `key` durably, or removes the entry when `text` is empty. The defaults throw
  // QRS_UNSUPPORTED: nothing is persisted.
  virtual void catalog_put(std::string_view /*key*/, std::string_view /*text*/) { throw Error::unsupported("catalog"); }
  // Calls `emit` for every stored entry in key order.
  virtual void catalog_list(const std::function<void(std::string_view key, std::string_view text)>& /*emit*/) {
    throw Error::unsupported("catalog");
  }

  // 1.4: the schema-change scope (see qrs_module_vtable.schema_begin). Between
  // schema_begin and schema_commit, everything done for the host — create, connect,
  // destroy, alter_table, catalog_put, writes outside a transaction — becomes durable at
  // schema_commit as one atomic unit; schema_rollback undoes all of it, in storage and in
  // the module's table state. The default schema_begin throws QRS_UNSUPPORTED (each call
  // is then durable on its own); override all three or none.
  virtual void schema_begin() { throw Error::unsupported("schema_begin"); }
  virtual void schema_commit() {}
  virtual void schema_rollback() {}

  // 1.6: a logical schema was deployed over basis relations, some of which may be this
  // module's tables (see qrs_module_vtable.notify_lens_deployment). Return how many of the
  // snapshot's relations this module backs (0: it backs none and does nothing); throw to
  // fail the APPLY SCHEMA (the lens stays deployed). The default backs none.
  virtual uint32_t notify_lens_deployment(const LensDeploymentSnapshot& /*snapshot*/) { return 0; }

  // 1.7: an online backup into `dest_dir` (see qrs_module_vtable.backup): one committed
  // state, writers not held for the copy, nothing that opens until it is complete, nothing
  // left on failure. `progress(bytes_done, bytes_total)` returning false stops it
  // (QRS_INTERRUPT). The default throws QRS_UNSUPPORTED.
  using BackupProgress = std::function<bool(uint64_t bytes_done, uint64_t bytes_total)>;
  virtual void backup(std::string_view /*dest_dir*/, const BackupProgress& /*progress*/) {
    throw Error::unsupported("backup");
  }

  // 1.10: every mapping advertisement the module recognizes over `tables`, its own tables
  // of basis schema `basis_schema` (see qrs_module_vtable.mapping_advertisements). A
  // generic module returns advertisements_from_tags(tables)
  // (quereus/mapping_advertisement.hpp); a dedicated one builds its own. Throw to fail the
  // APPLY SCHEMA asking. The default throws QRS_UNSUPPORTED: name-match only.
  virtual std::vector<MappingAdvertisement> mapping_advertisements(std::string_view /*basis_schema*/,
                                                                   const std::vector<BasisTable>& /*tables*/) {
    throw Error::unsupported("mapping_advertisements");
  }
  // SDK 1.12: a replication request of the host's sync driver (see
  // qrs_module_vtable.replication): `op` and its JSON `args`; returns the JSON reply. The
  // default throws QRS_UNSUPPORTED: the module does not replicate.
  virtual std::string replication(std::string_view /*op*/, std::string_view /*args*/) {
    throw Error::unsupported("replication");
  }
};

}  // namespace quereus::sdk

#endif  // QUEREUS_MODULE_HPP_
