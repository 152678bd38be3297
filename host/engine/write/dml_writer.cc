// Runtime: the single DML write path (see dml_writer.h).
#include "write/dml_writer.h"

#include <cmath>

#include "eval/exec_context.h"
#include "types/big_int.h"
#include "types/conversions.h"
#include "types/json_value.h"
#include "types/logical_type.h"
#include "types/temporal.h"
#include "planner/scalar_expr.h"
#include "write/indexes.h"

namespace quereus {

DmlWriter::DmlWriter(WriteContext& db, const TableWritePlan& plan, ExecContext& ctx)
    : db_(db),
      table_(plan.table),
      plan_(&plan),
      bindings_(plan.bindings),
      action_(plan.action),
      cascades_(plan.cascades),
      ctx_(ctx) {
  db_.join(*table_);
  if (!table_->schema.indexes.empty()) indexes_ = std::make_unique<IndexWriter>(db_, *table_, &ctx_);
}

DmlWriter::DmlWriter(WriteContext& db, std::shared_ptr<TableEntry> table, const TableWriteBindings& bindings,
                     std::shared_ptr<const CascadeBindings> cascades, ExecContext& ctx, int depth)
    : db_(db), table_(std::move(table)), bindings_(bindings), cascades_(std::move(cascades)), ctx_(ctx), depth_(depth) {
  db_.join(*table_);
  if (!table_->schema.indexes.empty()) indexes_ = std::make_unique<IndexWriter>(db_, *table_, &ctx_);
}

DmlWriter::~DmlWriter() = default;

Value DmlWriter::coerce(const Value& v, const ColumnSchema& col, const TableSchema& table) {
  if (v.is_null()) return v;
  // The message is the reference's: "Type conversion failed for column 'c': " followed by
  // what the type's own parse says about the value (`Cannot convert 'Bob' to JSON: invalid
  // JSON syntax`, types.md "Where coercion happens"), then where it was headed.
  auto mismatch = [&]() -> Error {
    const char* type = logical_type_name(col.logical_type);
    std::string reason;
    if (v.type() == ValueType::kText) {
      reason = "Cannot convert '" + v.str() + "' to " + type;
      std::string detail;
      switch (col.logical_type) {
        case QRS_LT_JSON: detail = "invalid JSON syntax"; break;
        case QRS_LT_DATE: (void)temporal::to_date_text(v, &detail); break;
        case QRS_LT_TIME: (void)temporal::to_time_text(v, &detail); break;
        case QRS_LT_DATETIME: (void)temporal::to_datetime_text(v, &detail); break;
        case QRS_LT_TIMESPAN: (void)temporal::to_timespan_text(v, &detail); break;
        default: break;
      }
      // The temporal parsers already say "Cannot convert '…' to DATE: why".
      if (detail.rfind("Cannot convert", 0) == 0)
        reason = detail;
      else if (!detail.empty())
        reason += ": " + detail;
    } else if (v.type() == ValueType::kBlob || v.type() == ValueType::kJson) {
      reason = std::string("Cannot convert object to ") + type;
    } else {
      reason = "Cannot convert '" + v.to_text() + "' to " + type;
    }
    return Error(StatusCode::kMismatch, "Type conversion failed for column '" + col.name + "': " + reason +
                                            " (cannot store " + value_type_name(v.type()) + " value in " +
                                            (col.type_name.empty() ? "ANY" : col.type_name) + " column " +
                                            table.name + "." + col.name + ")");
  };
  // Modules store INTEGER as int64 (the SDK's value contract): an integer outside int64 is
  // refused here, before the module sees the row, so the statement rolls back whole.
  auto out_of_range = [&]() -> Error {
    return Error(StatusCode::kRange, "integer value " + v.str() + " is out of range for column " + table.name + "." +
                                         col.name + " (exact 64-bit integers only)");
  };
  switch (col.logical_type) {
    case QRS_LT_ANY:
      if (v.type() == ValueType::kBigInt) throw out_of_range();
      return v;
    case QRS_LT_INTEGER:
      switch (v.type()) {
        case ValueType::kInteger: return v;
        case ValueType::kBigInt: throw out_of_range();
        case ValueType::kBoolean: return Value::Integer(v.as_int());
        case ValueType::kReal: {
          // The reference's INTEGER parse truncates a fraction toward zero (types.md,
          // INTEGER); NaN and ±Infinity are not integers.
          double d = v.as_real();
          if (!std::isfinite(d)) throw mismatch();
          d = std::trunc(d);
          if (std::fabs(d) < 9.2e18) return Value::Integer(static_cast<int64_t>(d));
          throw Error(StatusCode::kRange, "integer value " + bigint::from_double(d).to_text() +
                                              " is out of range for column " + table.name + "." + col.name +
                                              " (exact 64-bit integers only)");
        }
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return coerce(n, col, table);
        }
        default: throw mismatch();
      }
    case QRS_LT_REAL:
      switch (v.type()) {
        case ValueType::kReal: return v;
        case ValueType::kInteger:
        case ValueType::kBoolean: return Value::Real(static_cast<double>(v.as_int()));
        case ValueType::kBigInt: return Value::Real(v.to_double());
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return Value::Real(n.to_double());
        }
        default: throw mismatch();
      }
    case QRS_LT_NUMERIC:
      switch (v.type()) {
        case ValueType::kReal:
        case ValueType::kInteger: return v;
        case ValueType::kBigInt: throw out_of_range();
        case ValueType::kBoolean: return Value::Integer(v.as_int());
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return n;
        }
        default: throw mismatch();
      }
    case QRS_LT_TEXT:
      // One value-to-text conversion (types.md, "Value to text"): a BLOB stores its
      // UTF-8 decoding, lossy for bytes that are not UTF-8.
      if (v.type() == ValueType::kText) return v;
      return cast_value(v, QRS_LT_TEXT);
    case QRS_LT_BLOB:
      // The BLOB conversion is total (docs: types, BLOB): any other value is stored as
      // the UTF-8 bytes of its text, literally (no hex sniffing), like CAST(v AS BLOB).
      return cast_value(v, QRS_LT_BLOB);
    case QRS_LT_BOOLEAN: {
      Value b = cast_value(v, QRS_LT_BOOLEAN);
      if (b.is_null()) throw mismatch();
      return b;
    }
    case QRS_LT_JSON: {
      // A value that is already JSON (read out of a JSON column, or made by a JSON
      // function) is stored as it is; text must be JSON source. JSON null is SQL NULL.
      switch (v.type()) {
        case ValueType::kJson: return v;
        case ValueType::kText: {
          std::optional<Value> doc = jsonv::document_value(v.str());  // keys as written
          if (!doc) throw mismatch();
          return *doc;
        }
        case ValueType::kBlob: throw mismatch();
        default: return cast_value(v, QRS_LT_JSON);
      }
    }
    case QRS_LT_DATE:
    case QRS_LT_TIME:
    case QRS_LT_DATETIME:
    case QRS_LT_TIMESPAN: {
      // Stored in the type's canonical spelling ('90 minutes' → 'PT90M').
      Value t = cast_value(v, col.logical_type);
      if (t.is_null()) throw mismatch();
      return t;
    }
    default:
      if (v.type() == ValueType::kBigInt) throw out_of_range();
      return v;
  }
}

namespace {

// Statement-level OR action > the constraint's declared ON CONFLICT > ABORT.
ConflictAction resolve(std::optional<ConflictAction> stmt, std::optional<qrs_conflict> declared) {
  if (stmt) return *stmt;
  if (declared) return static_cast<ConflictAction>(*declared);
  return ConflictAction::kAbort;
}

// Whether a write under `action` may displace rows by REPLACE (the key's or an index's).
bool may_replace(const TableSchema& ts, std::optional<ConflictAction> action) {
  if (resolve(action, ts.pk_conflict) == ConflictAction::kReplace) return true;
  for (const IndexSchema& ix : ts.indexes)
    if (resolve(action, ix.on_conflict) == ConflictAction::kReplace) return true;
  return false;
}

}  // namespace

void DmlWriter::fail(ConflictAction action, const std::string& message) {
  if (action == ConflictAction::kFail || action == ConflictAction::kRollback)
    ctx_.failed_action = static_cast<qrs_conflict>(action);
  throw Error(StatusCode::kConstraint, message);
}

Value DmlWriter::eval_default(int column, const Row& row) const {
  const auto& defaults = bindings_.defaults;
  if (column >= static_cast<int>(defaults.size()) || !defaults[column]) return Value();
  EvalEnv images{&row, nullptr, &ctx_};
  EvalEnv env{&context_row_, &images, &ctx_};
  return defaults[column]->eval(env);
}

namespace {

// True when coerce(v, col) returns v unchanged — the common case, a value of the column's
// own type — so the row keeps it without a copy.
bool already_stored_form(const Value& v, const ColumnSchema& col) {
  if (v.is_null()) return true;
  switch (col.logical_type) {
    case QRS_LT_ANY: return v.type() != ValueType::kBigInt;
    case QRS_LT_INTEGER: return v.type() == ValueType::kInteger;
    case QRS_LT_REAL: return v.type() == ValueType::kReal;
    case QRS_LT_NUMERIC: return v.type() == ValueType::kInteger || v.type() == ValueType::kReal;
    case QRS_LT_TEXT: return v.type() == ValueType::kText;
    case QRS_LT_JSON: return v.type() == ValueType::kJson;
    default: return false;  // coerce decides (it may canonicalize)
  }
}

}  // namespace

bool DmlWriter::prepare_row(Row& row, std::optional<ConflictAction> action) {
  const TableSchema& ts = table_->schema;
  if (row.size() != ts.columns.size()) throw Error(StatusCode::kInternal, "row width mismatch");
  for (size_t i = 0; i < row.size(); ++i)
    if (!ts.columns[i].generated() && !already_stored_form(row[i], ts.columns[i]))
      row[i] = coerce(row[i], ts.columns[i], ts);
  // Generated columns, in dependency order: each reads the coerced written columns and
  // the generated columns computed before it.
  if (!bindings_.generated.empty()) {
    EvalEnv images{&row, nullptr, &ctx_};
    EvalEnv env{&row, &images, &ctx_};
    for (const BoundGenerated& g : bindings_.generated)
      row[g.column] = coerce(g.expr->eval(env), ts.columns[g.column], ts);
  }
  for (size_t i = 0; i < row.size(); ++i) {
    const ColumnSchema& col = ts.columns[i];
    if (row[i].is_null() && col.not_null) {
      ConflictAction a = resolve(action, col.not_null_conflict);
      if (a == ConflictAction::kIgnore) return false;
      if (a == ConflictAction::kReplace) {
        // REPLACE substitutes the column's DEFAULT (sql-dml.md); without one, or with a
        // NULL default, it aborts.
        a = ConflictAction::kAbort;
        if (i < bindings_.defaults.size() && bindings_.defaults[i]) {
          row[i] = coerce(eval_default(static_cast<int>(i), row), col, ts);
          if (!row[i].is_null()) continue;
        }
      }
      fail(a, "NOT NULL constraint failed: " + ts.name + "." + col.name);
    }
  }
  return true;
}

bool DmlWriter::check_row(RowOp op, const Row* new_row, const Row* old_row, std::optional<ConflictAction> action) {
  Row images;
  for (const BoundCheck& c : bindings_.checks) {
    bool applies = op == RowOp::kInsert ? c.on_insert : op == RowOp::kUpdate ? c.on_update : c.on_delete;
    if (!applies) continue;
    if (images.empty()) {
      size_t n = table_->schema.columns.size();
      images.resize(2 * n);
      for (size_t i = 0; i < n; ++i) {
        if (new_row) images[i] = (*new_row)[i];
        if (old_row) images[n + i] = (*old_row)[i];
      }
    }
    if (c.deferred) {
      // Evaluated at COMMIT over the images captured now, reading the state then.
      db_.deferred().at_commit([expr = c.expr, name = c.name, text = c.text, images, context = context_row_,
                                row = new_row ? *new_row : *old_row](ExecContext& ctx) {
        EvalEnv image_env{&images, nullptr, &ctx};
        EvalEnv row_env{&row, &image_env, &ctx};
        EvalEnv env{&context, &row_env, &ctx};
        bool is_null = false;
        if (expr->eval(env).truthy(&is_null) || is_null) return;
        throw Error(StatusCode::kConstraint, "CHECK constraint failed: " + name + " (" + text + ")");
      });
      continue;
    }
    EvalEnv image_env{&images, nullptr, &ctx_};
    EvalEnv row_env{new_row ? new_row : old_row, &image_env, &ctx_};
    EvalEnv env{&context_row_, &row_env, &ctx_};
    bool is_null = false;
    if (c.expr->eval(env).truthy(&is_null) || is_null) continue;
    // REPLACE does not relax a CHECK: it aborts.
    ConflictAction a = resolve(action, c.on_conflict);
    if (a == ConflictAction::kIgnore) return false;
    if (a == ConflictAction::kReplace) a = ConflictAction::kAbort;
    fail(a, "CHECK constraint failed: " + c.name + " (" + c.text + ")");
  }
  return true;
}

Row DmlWriter::key_of(const Row& row) const {
  Row key;
  for (auto& k : table_->schema.primary_key) key.push_back(row[k.column]);
  return key;
}

std::string DmlWriter::unique_message() const {
  const TableSchema& ts = table_->schema;
  std::string cols;
  for (auto& k : ts.primary_key) {
    if (!cols.empty()) cols += ", ";
    cols += ts.name + "." + ts.columns[k.column].name;
  }
  // A singleton table (`primary key ()`) has no key columns to name: "<table> PK".
  return "UNIQUE constraint failed: " + (cols.empty() ? ts.name + " PK" : cols);
}

std::optional<Row> DmlWriter::handle(UpdateResult& r, ConflictAction action) {
  switch (r.outcome) {
    case UpdateResult::Outcome::kOk: return r.row ? std::move(r.row) : std::optional<Row>(Row{});
    case UpdateResult::Outcome::kNoop: return std::nullopt;
    case UpdateResult::Outcome::kConstraint:
      if (action == ConflictAction::kIgnore) return std::nullopt;
      switch (r.constraint_kind) {
        case QRS_CONSTRAINT_UNIQUE: fail(action, unique_message());
        case QRS_CONSTRAINT_NOT_NULL: fail(action, "NOT NULL constraint failed: " + table_->schema.name);
        case QRS_CONSTRAINT_CHECK: fail(action, "CHECK constraint failed: " + table_->schema.name);
        default: fail(action, "FOREIGN KEY constraint failed: " + table_->schema.name);
      }
  }
  return std::nullopt;
}

bool DmlWriter::resolve_unique(const Row& row, const Row& self, std::optional<ConflictAction> action,
                               std::optional<Row>* existing, int* conflict, ConflictAction pk, const Row* old_row) {
  if (!indexes_) return true;
  // REPLACE holders are deleted only once every other conflict of the row has passed, as
  // SQLite runs REPLACE constraints last: a row that an IGNORE or FAIL conflict then stops
  // must not have displaced anything, and such a conflict decides even when its holder is
  // the row a REPLACE would displace.
  std::vector<Row> evict;
  size_t start = 0;
  while (auto c = indexes_->find_conflict(row, self, start)) {
    const IndexSchema& ix = table_->schema.indexes[c->index];
    std::optional<Row> holder = fetch_by_key(*table_, c->key);
    if (!holder) throw Error(StatusCode::kInternal, "index '" + ix.name + "' names a row that does not exist");
    if (existing) {
      *existing = std::move(holder);
      *conflict = static_cast<int>(c->index);
      return false;
    }
    start = c->index + 1;  // a unique index holds at most one row with this key
    ConflictAction a = resolve(action, ix.on_conflict);
    if (a == ConflictAction::kIgnore) return false;
    if (a != ConflictAction::kReplace) fail(a, indexes_->unique_message(c->index));
    const Row key = key_of(*holder);
    bool seen = false;  // two REPLACE indexes may name one row
    for (const Row& e : evict) seen = seen || key_of(e) == key;
    if (!seen) evict.push_back(std::move(*holder));
  }
  if (evict.empty()) return true;
  // The primary key's own conflict, unless it is a REPLACE (the caller evicts that holder)
  // or the holder is the row an UPDATE rewrites.
  if (pk != ConflictAction::kReplace) {
    std::optional<Row> holder = fetch_by_key(*table_, key_of(row));
    if (holder && !(old_row && key_of(*holder) == key_of(*old_row))) {
      if (pk == ConflictAction::kIgnore) return false;
      fail(pk, unique_message());
    }
  }
  for (const Row& holder : evict) remove(holder);
  return true;
}

void DmlWriter::evict_key_holder(const Row& row, const Row* self) {
  Row key = key_of(row);
  if (self) {
    Row old_key = key_of(*self);
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) same = key[i] == old_key[i];
    if (same) return;
  }
  if (auto holder = fetch_by_key(*table_, key)) remove(*holder);
}

std::optional<Row> DmlWriter::write_insert(Row& row, std::optional<ConflictAction> action,
                                           std::optional<Row>* existing, int* conflict) {
  if (!prepare_row(row, action)) return std::nullopt;
  if (!check_row(RowOp::kInsert, &row, nullptr, action)) return std::nullopt;
  // An UPSERT's proposed row reaches its parents only when it is inserted: a conflict
  // routes it to DO UPDATE, which checks the row it writes, or DO NOTHING, which writes
  // nothing (sql-dml.md "UPSERT"; SQLite checks the keys of written rows only).
  if (!existing && !check_foreign_keys(row, nullptr, action)) return std::nullopt;
  ConflictAction pk = existing ? ConflictAction::kAbort : resolve(action, table_->schema.pk_conflict);
  if (indexes_) {
    if (!resolve_unique(row, key_of(row), action, existing, conflict, pk, nullptr)) return std::nullopt;
    // A REPLACE eviction goes through remove(), which keeps the evicted row's entries
    // (and, later, its dependents) in step.
    if (pk == ConflictAction::kReplace) evict_key_holder(row, nullptr);
  }
  // (Only a table with foreign keys to check reads its key first: without any, the write
  // below reports the key's holder itself.)
  if (existing && db_.foreign_keys_enforced() && !table_->schema.foreign_keys.empty()) {
    if (std::optional<Row> holder = fetch_by_key(*table_, key_of(row))) {
      *existing = std::move(holder);
      *conflict = -1;
      return std::nullopt;
    }
    if (!check_foreign_keys(row, nullptr, action)) return std::nullopt;
  }
  UpdateResult r = table_->table->update(RowOp::kInsert, row, {}, pk);
  if (existing && r.outcome == UpdateResult::Outcome::kConstraint && r.constraint_kind == QRS_CONSTRAINT_UNIQUE &&
      r.existing_row) {
    *existing = std::move(r.existing_row);
    *conflict = -1;
    return std::nullopt;
  }
  std::optional<Row> replaced = std::move(r.replaced_row);
  auto out = handle(r, pk);
  if (out && out->empty()) {
    // Stored as written. A plain insert hands its row on; UPSERT's caller keeps `row`.
    if (existing) out = row;
    else out = std::move(row);
  }
  if (out && indexes_) {
    if (replaced) indexes_->remove(*replaced);
    indexes_->add(*out);
  }
  if (out) {
    if (replaced) observe(RowOp::kDelete, &*replaced, nullptr);
    observe(RowOp::kInsert, nullptr, &*out);
  }
  if (out && db_.changes().capturing()) {
    if (replaced) db_.changes().record_delete(table_->schema, *replaced);
    db_.changes().record_insert(table_->schema, *out);
  }
  // REPLACE displaced a row: its references see a delete.
  if (out && replaced) apply_parent_actions(*replaced, nullptr, true);
  return out;
}

std::optional<Row> DmlWriter::insert(Row row, std::optional<ConflictAction> action) {
  return write_insert(row, action, nullptr, nullptr);
}

std::optional<Row> DmlWriter::insert_or_conflict(Row& row, std::optional<ConflictAction> action,
                                                 std::optional<Row>& existing, int& conflict) {
  existing.reset();
  conflict = -1;
  return write_insert(row, action, &existing, &conflict);
}

std::string DmlWriter::conflict_message(int conflict) const {
  if (conflict < 0 || !indexes_) return unique_message();
  return indexes_->unique_message(static_cast<size_t>(conflict));
}

std::optional<Row> DmlWriter::update(const Row& stale_row, Row new_row, std::optional<ConflictAction> action) {
  Row current;
  int fresh = refresh_after_self_cascade(stale_row, new_row, current);
  if (fresh < 0) return std::nullopt;
  // A REPLACE earlier in this statement may have displaced the row the statement read
  // (`update t set b = b + 1` with `b … unique on conflict replace`): such a row is no
  // longer there to update, as in SQLite — and its key may hold another row by now.
  if (!fresh && may_replace(table_->schema, action)) {
    std::optional<Row> stored = fetch_by_key(*table_, key_of(stale_row));
    if (!stored || *stored != stale_row) return std::nullopt;
  }
  const Row& old_row = fresh ? current : stale_row;
  if (!prepare_row(new_row, action)) return std::nullopt;
  if (!check_row(RowOp::kUpdate, &new_row, &old_row, action)) return std::nullopt;
  if (!check_foreign_keys(new_row, &old_row, action)) return std::nullopt;
  Row key = key_of(old_row);
  ConflictAction pk = resolve(action, table_->schema.pk_conflict);
  if (indexes_) {
    if (!resolve_unique(new_row, key, action, nullptr, nullptr, pk, &old_row)) return std::nullopt;
    if (pk == ConflictAction::kReplace) evict_key_holder(new_row, &old_row);
  }
  UpdateResult r = table_->table->update(RowOp::kUpdate, new_row, key, pk);
  std::optional<Row> replaced = std::move(r.replaced_row);
  auto out = handle(r, pk);
  if (out && out->empty()) out = std::move(new_row);
  if (out) {
    if (indexes_) {
      if (replaced) indexes_->remove(*replaced);
      indexes_->change(old_row, *out);
    }
    if (replaced) observe(RowOp::kDelete, &*replaced, nullptr);
    observe(RowOp::kUpdate, &old_row, &*out);
    if (db_.changes().capturing()) {
      if (replaced) db_.changes().record_delete(table_->schema, *replaced);
      db_.changes().record_update(table_->schema, old_row, *out);
    }
    if (replaced) apply_parent_actions(*replaced, nullptr, true);
    apply_parent_actions(old_row, &*out, false);
  }
  return out;
}

std::optional<Row> DmlWriter::remove(const Row& old_row) {
  if (!check_row(RowOp::kDelete, nullptr, &old_row, std::nullopt)) return std::nullopt;
  Row key = key_of(old_row);
  UpdateResult r = table_->table->update(RowOp::kDelete, {}, key, ConflictAction::kAbort);
  auto out = handle(r, ConflictAction::kAbort);
  if (!out) return out;
  if (indexes_) indexes_->remove(old_row);
  observe(RowOp::kDelete, &old_row, nullptr);
  if (db_.changes().capturing()) db_.changes().record_delete(table_->schema, old_row);
  apply_parent_actions(old_row, nullptr, false);
  return old_row;
}

void DmlWriter::observe(RowOp op, const Row* old_row, const Row* new_row) {
  db_.observe(*table_, op, old_row, new_row);
}

void BoundReturning::emit(const Row& row, const Row* old_row, ExecContext& ctx, std::vector<Row>& out) const {
  if (exprs.empty()) return;
  Row both;
  if (old_row) {
    both = row;
    both.insert(both.end(), old_row->begin(), old_row->end());
  }
  EvalEnv images{old_row ? &both : &row, nullptr, &ctx};
  EvalEnv env{&row, &images, &ctx};
  Row r;
  r.reserve(exprs.size());
  for (auto& e : exprs) r.push_back(e->eval(env));
  out.push_back(std::move(r));
}

void DmlWriter::emit_returning(const Row& row, const Row* old_row) {
  if (plan_ && returning_sink_) plan_->returning.emit(row, old_row, ctx_, *returning_sink_);
}

std::optional<Row> DmlWriter::apply(RowChange change) {
  switch (change.op) {
    case RowOp::kDelete: {
      if (!change.old_row) throw Error(StatusCode::kInternal, "a DELETE row change without the old row");
      auto removed = remove(*change.old_row);
      if (removed) emit_returning(*removed, nullptr);
      return removed;
    }
    case RowOp::kUpdate: {
      if (!change.old_row) throw Error(StatusCode::kInternal, "an UPDATE row change without the old row");
      auto stored = update(*change.old_row, std::move(change.new_row), action_);
      if (stored) emit_returning(*stored, change.old_row);
      return stored;
    }
    case RowOp::kInsert: break;
  }
  Row& row = change.new_row;
  // mutation_ordinal() reads this row's ordinal while it is written (its defaults read
  // it, and may read the supplied columns as `new.c`).
  MutationOrdinalScope produced(ctx_, change.ordinal);
  if (change.supplied) {
    const TableSchema& ts = table_->schema;
    const auto& supplied = *change.supplied;
    for (size_t i = 0; i < row.size(); ++i)
      if (!supplied[i] && i < bindings_.defaults.size() && bindings_.defaults[i] && !ts.columns[i].generated())
        row[i] = eval_default(static_cast<int>(i), row);
  }
  if (!plan_ || plan_->upserts.empty()) {
    auto stored = insert(std::move(row), action_);
    if (stored) emit_returning(*stored, nullptr);
    return stored;
  }
  std::optional<Row> existing;
  int conflict = -1;
  auto stored = insert_or_conflict(row, action_, existing, conflict);
  if (existing) stored = resolve_upsert(*existing, row, conflict);
  if (stored) emit_returning(*stored, nullptr);
  return stored;
}

std::optional<Row> DmlWriter::resolve_upsert(const Row& first, const Row& proposed, int conflict) {
  // The row may conflict on several constraints: the first clause in written order whose
  // target the row conflicts on takes it (sql-dml.md "First matching conflict target
  // wins"; SQLite's order), whichever conflict was found first; an untargeted clause takes
  // the conflict found. Only a conflict no clause names aborts.
  const BoundUpsert* clause = nullptr;
  std::optional<Row> named;
  for (const BoundUpsert& u : plan_->upserts) {
    if (u.target == BoundUpsert::kAnyConflict || u.target == conflict) {
      clause = &u;
      break;
    }
    if (u.target == -1) {
      named = fetch_by_key(*table_, key_of(proposed));
    } else if (u.target >= 0 && indexes_) {
      const size_t ix = static_cast<size_t>(u.target);
      auto c = indexes_->find_conflict(proposed, key_of(proposed), ix);
      if (c && c->index == ix) named = fetch_by_key(*table_, c->key);
    }
    if (named) {
      clause = &u;
      break;
    }
  }
  if (!clause) throw Error(StatusCode::kConstraint, conflict_message(conflict));
  const Row& existing = named ? *named : first;
  if (clause->do_nothing) return std::nullopt;
  EvalEnv outer{&proposed, nullptr, &ctx_};
  EvalEnv env{&existing, &outer, &ctx_};
  if (clause->where) {
    bool is_null = false;
    if (!clause->where->eval(env).truthy(&is_null) || is_null) return std::nullopt;
  }
  Row new_row = existing;
  for (auto& [idx, e] : clause->set) new_row[idx] = e->eval(env);
  return update(existing, std::move(new_row), std::nullopt);
}

}  // namespace quereus
