// quereus/detail/trampolines.hpp — the C vtables of abi.h implemented over the C++ SDK.
//
// Not part of the documented SDK surface: plugin authors never call these. Every slot
// converts the borrowed C arguments to owned C++ ones, calls the virtual, converts back,
// and catches every exception (see guard()). Each plugin gets its own hidden copy.
#ifndef QUEREUS_DETAIL_TRAMPOLINES_HPP_
#define QUEREUS_DETAIL_TRAMPOLINES_HPP_

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "quereus/error.hpp"
#include "quereus/function.hpp"
#include "quereus/module.hpp"
#include "quereus/value.hpp"

#if defined(__has_include)
#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define QUEREUS_SDK_HAS_CXXABI 1
#endif
#endif

// The offset just past `field`: a struct must be at least this large to hold it.
#define QRS_SDK_FIELD_END(type, field) (offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))

namespace quereus::sdk::detail {

// ---- errors -----------------------------------------------------------------------------

inline void set_error(qrs_error* err, std::string_view message) noexcept {
  if (err && err->struct_size >= QRS_SDK_FIELD_END(qrs_error, set_message) && err->set_message)
    err->set_message(err, message.data(), message.size());
}

// The host services handed to this plugin's entry (null before it ran, e.g. in a host's
// own unit tests). Used to log failures that a slot cannot report (close, release,
// capabilities, collation compare). Each plugin has its own copy (hidden visibility).
inline std::atomic<const qrs_host_api*>& host_slot() noexcept {
  static std::atomic<const qrs_host_api*> host{nullptr};
  return host;
}

// Writes to the host's log when the host gave a logger. Never throws.
inline void log_to_host(qrs_log_level level, std::string_view message) noexcept {
  const qrs_host_api* host = host_slot().load(std::memory_order_acquire);
  if (host && host->struct_size >= QRS_SDK_FIELD_END(qrs_host_api, log) && host->log)
    host->log(host->ctx, level, message.data(), message.size());
}

// The name of the exception type being handled, when the C++ runtime can tell.
inline std::string current_exception_type_name() {
#if defined(QUEREUS_SDK_HAS_CXXABI)
  if (const std::type_info* t = abi::__cxa_current_exception_type()) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
    std::string name = demangled && status == 0 ? demangled : t->name();
    std::free(demangled);
    return name;
  }
#endif
  return std::string();
}

// Inside a catch handler: the status and message the exception being handled maps to.
//
//   quereus::sdk::Error     its code() (QRS_INTERNAL for a non-error code) and message()
//   std::bad_alloc          QRS_NOMEM "out of memory"
//   std::exception          QRS_INTERNAL what()
//   std::string / char*     QRS_INTERNAL the text (`throw "message"` is common enough)
//   anything else           QRS_INTERNAL "unknown exception of type 'T' (not derived from
//                           std::exception)", T demangled when the runtime can tell
//
// Never throws: when even the message cannot be built, *message stays empty and the
// status is QRS_NOMEM.
inline qrs_status describe_current_exception(std::string* message) noexcept {
  try {
    try {
      throw;
    } catch (const Error& e) {
      qrs_status code = e.code();
      if (code == QRS_OK || code == QRS_ROW || code == QRS_DONE) code = QRS_INTERNAL;
      *message = e.message();
      return code;
    } catch (const std::bad_alloc&) {
      *message = "out of memory";
      return QRS_NOMEM;
    } catch (const std::exception& e) {
      const char* what = e.what();
      *message = what ? what : "";
      return QRS_INTERNAL;
    } catch (const std::string& s) {
      *message = s;
      return QRS_INTERNAL;
    } catch (const char* s) {
      *message = s ? s : "";
      return QRS_INTERNAL;
    } catch (...) {
      std::string type = current_exception_type_name();
      *message = type.empty() ? "unknown exception (not derived from std::exception)"
                              : "unknown exception of type '" + type + "' (not derived from std::exception)";
      return QRS_INTERNAL;
    }
  } catch (...) {
    message->clear();
    return QRS_NOMEM;
  }
}

// Runs f (returning qrs_status) and turns every exception into a status + message.
template <class F>
qrs_status guard(qrs_error* err, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    std::string message;
    qrs_status code = describe_current_exception(&message);
    set_error(err, message.empty() && code == QRS_NOMEM ? std::string_view("out of memory") : std::string_view(message));
    return code;
  }
}

// For slots that cannot report (close, release, capabilities): the exception is contained
// and written to the host's log as a warning naming `slot`. Destructors are not covered:
// C++ destructors are noexcept, so an exception escaping one terminates the process before
// any handler runs — catch inside your destructors (see module.hpp).
template <class F>
void guard_void(const char* slot, F&& f) noexcept {
  try {
    f();
  } catch (...) {
    std::string message;
    describe_current_exception(&message);
    try {
      log_to_host(QRS_LOG_WARN, std::string("plugin exception in ") + slot + " ignored: " + message);
    } catch (...) {
    }
  }
}

// ---- C -> C++ conversions -----------------------------------------------------------------


inline std::string str(qrs_string s) { return s.data ? std::string(s.data, s.len) : std::string(); }
inline std::string_view view(qrs_string s) noexcept {
  return s.data ? std::string_view(s.data, s.len) : std::string_view();
}

template <class T>
void require(const T* p, size_t need, const char* what) {
  if (!p) throw Error::misuse(std::string("null ") + what);
  if (p->struct_size < need) throw Error::misuse(std::string(what) + ".struct_size is too small");
}

// Arrays of size-prefixed structs are strided by their elements' struct_size, so a host
// built against a newer (larger) struct still indexes correctly.
template <class T>
size_t stride_of(const T* base, uint32_t count, size_t need, const char* what) {
  if (count == 0) return sizeof(T);
  require(base, need, what);
  return base->struct_size;
}
template <class T>
const T& nth(const T* base, size_t i, size_t stride) noexcept {
  return *reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + i * stride);
}

inline Collation collation_from_c(const qrs_collation_ref& c) {
  return c.struct_size >= QRS_SDK_FIELD_END(qrs_collation_ref, compare) ? Collation(c) : Collation();
}

inline Row row_from_c_checked(const qrs_row& r, const char* what) {
  if (r.count && !r.cells) throw Error::misuse(std::string(what) + ": null cells");
  return row_from_c(r);
}

inline TableSchema schema_from_c(const qrs_table_schema* s) {
  require(s, QRS_SDK_FIELD_END(qrs_table_schema, option_count), "qrs_table_schema");
  TableSchema out;
  out.schema_name = str(s->schema_name);
  out.table_name = str(s->table_name);
  size_t cs = stride_of(s->columns, s->column_count, QRS_SDK_FIELD_END(qrs_column_def, collation), "qrs_column_def");
  for (uint32_t i = 0; i < s->column_count; ++i) {
    const qrs_column_def& c = nth(s->columns, i, cs);
    out.columns.push_back(ColumnDef{str(c.name), str(c.type_name), static_cast<qrs_logical_type>(c.logical_type),
                                    c.not_null != 0, c.primary_key != 0, collation_from_c(c.collation)});
  }
  size_t ks = stride_of(s->primary_key, s->key_count, QRS_SDK_FIELD_END(qrs_key_column, collation), "qrs_key_column");
  for (uint32_t i = 0; i < s->key_count; ++i) {
    const qrs_key_column& k = nth(s->primary_key, i, ks);
    if (k.column_index >= s->column_count)
      throw Error::schema("primary key member " + std::to_string(i) + " names column " +
                          std::to_string(k.column_index) + " of " + std::to_string(s->column_count));
    out.primary_key.push_back(KeyColumn{k.column_index, k.desc != 0, collation_from_c(k.collation)});
  }
  if (s->option_count && !s->options) throw Error::misuse("null qrs_table_schema.options");
  for (uint32_t i = 0; i < s->option_count; ++i)
    out.options.push_back(Option{str(s->options[i].key), Value::from_c(s->options[i].value)});
  return out;
}

inline std::vector<Filter> filters_from_c(const qrs_filter* f, uint32_t count) {
  size_t st = stride_of(f, count, QRS_SDK_FIELD_END(qrs_filter, in_count), "qrs_filter");
  std::vector<Filter> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    const qrs_filter& x = nth(f, i, st);
    Filter& y = out[i];
    y.column = x.column_index;
    y.op = static_cast<FilterOp>(x.op);
    y.usable = x.usable != 0;
    y.has_value = x.has_value != 0;
    y.in_count = x.in_count;
    if (x.op == QRS_OP_FORM && x.struct_size >= QRS_SDK_FIELD_END(qrs_filter, form)) y.form = str(x.form);
    if (!y.has_value) continue;
    if (x.op == QRS_OP_IN) {
      if (x.in_count && !x.in_values) throw Error::misuse("qrs_filter: null in_values");
      y.in_values.reserve(x.in_count);
      for (uint32_t j = 0; j < x.in_count; ++j) y.in_values.push_back(Value::from_c(x.in_values[j]));
    } else {
      y.value = Value::from_c(x.value);
    }
  }
  return out;
}

inline std::vector<OrderSpec> ordering_from_c(const qrs_order_spec* o, uint32_t count) {
  if (count && !o) throw Error::misuse("null ordering");
  std::vector<OrderSpec> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back(OrderSpec{o[i].column_index, o[i].desc != 0});
  return out;
}

inline PlanRequest plan_request_from_c(const qrs_plan_request* r) {
  require(r, QRS_SDK_FIELD_END(qrs_plan_request, estimated_rows), "qrs_plan_request");
  PlanRequest out;
  out.filters = filters_from_c(r->filters, r->filter_count);
  out.ordering = ordering_from_c(r->ordering, r->ordering_count);
  out.limit = r->limit;
  out.offset = r->offset;
  out.estimated_rows = r->estimated_rows;
  return out;
}

inline void plan_result_to_c(const PlanResult& r, uint32_t filter_count, qrs_plan_result* out) {
  require(out, QRS_SDK_FIELD_END(qrs_plan_result, plan_id), "qrs_plan_result");
  if (!r.handled.empty() && r.handled.size() != filter_count)
    throw Error::internal("PlanResult.handled has " + std::to_string(r.handled.size()) + " entries for " +
                          std::to_string(filter_count) + " filters");
  if (!(r.cost >= 0) || !(r.rows >= 0)) throw Error::internal("PlanResult cost and rows must be >= 0");
  if (filter_count && !out->handled_filters) throw Error::misuse("null qrs_plan_result.handled_filters");
  for (uint32_t i = 0; i < filter_count; ++i) out->handled_filters[i] = i < r.handled.size() && r.handled[i];
  out->cost = r.cost;
  out->rows = r.rows;
  out->provides_ordering = r.provides_ordering ? 1 : 0;
  out->plan_id = r.plan_id;
  if (out->struct_size >= QRS_SDK_FIELD_END(qrs_plan_result, explain)) {
    size_t n = r.explain.size() < sizeof(out->explain) - 1 ? r.explain.size() : sizeof(out->explain) - 1;
    std::memcpy(out->explain, r.explain.data(), n);
    out->explain[n] = '\0';
  }
}

inline ScanArgs scan_args_from_c(const qrs_scan_args* a) {
  require(a, QRS_SDK_FIELD_END(qrs_scan_args, limit), "qrs_scan_args");
  ScanArgs out;
  out.plan_id = a->plan_id;
  out.filters = filters_from_c(a->filters, a->filter_count);
  out.handled.resize(a->filter_count, false);
  if (a->handled)
    for (uint32_t i = 0; i < a->filter_count; ++i) out.handled[i] = a->handled[i] != 0;
  out.provides_ordering = a->provides_ordering != 0;
  if (a->struct_size >= QRS_SDK_FIELD_END(qrs_scan_args, read_committed)) out.read_committed = a->read_committed != 0;
  out.ordering = ordering_from_c(a->ordering, a->ordering_count);
  out.limit = a->limit;
  return out;
}

inline std::span<const qrs_value> cells_from_c(const qrs_row& r, const char* what) {
  if (r.count && !r.cells) throw Error::misuse(std::string(what) + ": null cells");
  for (uint32_t i = 0; i < r.count; ++i)
    if (r.cells[i].type > QRS_TYPE_JSON)
      throw Error::mismatch(std::string(what) + ": unknown qrs_value type tag " + std::to_string(r.cells[i].type));
  return {r.cells, r.count};
}

inline UpdateCells update_cells_from_c(const qrs_update_args* a) {
  require(a, QRS_SDK_FIELD_END(qrs_update_args, old_key), "qrs_update_args");
  if (a->op < QRS_ROW_INSERT || a->op > QRS_ROW_DELETE) throw Error::misuse("unknown qrs_row_op " + std::to_string(a->op));
  UpdateCells out;
  out.op = static_cast<RowOp>(a->op);
  out.on_conflict = static_cast<Conflict>(a->on_conflict);
  if (out.op != RowOp::kDelete) out.values = cells_from_c(a->values, "qrs_update_args.values");
  if (out.op != RowOp::kInsert) out.old_key = cells_from_c(a->old_key, "qrs_update_args.old_key");
  return out;
}

// Fills `buf` with C views of `row` and returns the qrs_row over it ({NULL, 0} when absent).
inline qrs_row row_to_c(const RowPtr& row, std::vector<qrs_value>& buf) {
  buf.clear();
  if (!row) return qrs_row{nullptr, 0};
  for (const Value& v : *row) buf.push_back(v.to_c());
  return qrs_row{buf.data(), static_cast<uint32_t>(buf.size())};
}

inline void emit_result(qrs_result_sink* out, const Value& v) {
  require(out, QRS_SDK_FIELD_END(qrs_result_sink, set), "qrs_result_sink");
  if (!out->set) throw Error::misuse("null qrs_result_sink.set");
  qrs_value c = v.to_c();
  out->set(out, &c);
}

inline std::vector<Value> args_from_c(const qrs_value* args, uint32_t argc) {
  if (argc && !args) throw Error::misuse("null function arguments");
  std::vector<Value> out;
  out.reserve(argc);
  for (uint32_t i = 0; i < argc; ++i) out.push_back(Value::from_c(args[i]));
  return out;
}

// ---- holders: what `self` points at ------------------------------------------------------

struct ModuleHolder {
  std::shared_ptr<Module> module;
};

struct TableHolder {
  std::unique_ptr<Table> table;
  UpdateResult last;              // keeps the rows of the last update result alive
  std::vector<qrs_value> cells[3];  // C views of last.row / replaced_row / existing_row
  LookupResult looked_up;           // keeps the row of the last lookup alive
  std::vector<qrs_value> lookup_cells;  // C views of looked_up.row
};

struct CursorHolder {
  explicit CursorHolder(std::unique_ptr<Cursor> c) : cursor(std::move(c)) {}
  std::unique_ptr<Cursor> cursor;
  RowBatch batch;  // the rows handed out by the last next_batch
  bool done = false;
};

// ---- cursor -------------------------------------------------------------------------------

inline qrs_status cursor_next_batch(void* self, qrs_row_batch* out, qrs_error* err) {
  auto* h = static_cast<CursorHolder*>(self);
  return guard(err, [&] {
    require(out, QRS_SDK_FIELD_END(qrs_row_batch, column_count), "qrs_row_batch");
    h->batch.clear();
    out->cells = nullptr;
    out->row_count = 0;
    out->column_count = 0;
    if (h->done) return QRS_DONE;
    h->cursor->next_batch(h->batch);
    if (h->batch.empty()) {
      h->done = true;
      return QRS_DONE;
    }
    out->cells = h->batch.cells().data();
    out->row_count = static_cast<uint32_t>(h->batch.size());
    out->column_count = h->batch.column_count();
    return QRS_ROW;
  });
}

inline void cursor_close(void* self) {
  guard_void("cursor close", [&] { delete static_cast<CursorHolder*>(self); });
}

inline constexpr qrs_cursor_vtable kCursorVtable{sizeof(qrs_cursor_vtable), &cursor_next_batch, &cursor_close};

// ---- connection ---------------------------------------------------------------------------

template <void (Connection::*kMethod)()>
qrs_status connection_call(void* self, qrs_error* err) {
  return guard(err, [&] {
    (static_cast<Connection*>(self)->*kMethod)();
    return QRS_OK;
  });
}

template <void (Connection::*kMethod)(uint32_t)>
qrs_status connection_depth_call(void* self, uint32_t depth, qrs_error* err) {
  return guard(err, [&] {
    (static_cast<Connection*>(self)->*kMethod)(depth);
    return QRS_OK;
  });
}

inline void connection_close(void* self) {
  guard_void("connection close", [&] { delete static_cast<Connection*>(self); });
}

inline constexpr qrs_connection_vtable kConnectionVtable{
    sizeof(qrs_connection_vtable),
    &connection_call<&Connection::begin>,
    &connection_call<&Connection::commit>,
    &connection_call<&Connection::rollback>,
    &connection_depth_call<&Connection::savepoint>,
    &connection_depth_call<&Connection::release_savepoint>,
    &connection_depth_call<&Connection::rollback_to_savepoint>,
    &connection_close};

// ---- table --------------------------------------------------------------------------------

inline qrs_status table_best_access_plan(void* self, const qrs_plan_request* req, qrs_plan_result* out,
                                         qrs_error* err) {
  return guard(err, [&] {
    PlanRequest request = plan_request_from_c(req);
    PlanResult result = static_cast<TableHolder*>(self)->table->best_access_plan(request);
    plan_result_to_c(result, req->filter_count, out);
    return QRS_OK;
  });
}

inline qrs_status table_open_cursor(void* self, const qrs_scan_args* args, qrs_cursor* out, qrs_error* err) {
  return guard(err, [&] {
    if (!out) throw Error::misuse("null qrs_cursor");
    std::unique_ptr<Cursor> cursor = static_cast<TableHolder*>(self)->table->open_cursor(scan_args_from_c(args));
    if (!cursor) throw Error::internal("open_cursor returned no cursor");
    out->self = new CursorHolder(std::move(cursor));
    out->vt = &kCursorVtable;
    return QRS_OK;
  });
}

inline qrs_status table_update(void* self, const qrs_update_args* args, qrs_update_result* out, qrs_error* err) {
  auto* h = static_cast<TableHolder*>(self);
  return guard(err, [&] {
    require(out, QRS_SDK_FIELD_END(qrs_update_result, row), "qrs_update_result");
    h->last = UpdateResult();  // the previous result's rows are released here
    h->last = h->table->update_cells(update_cells_from_c(args));
    out->outcome = static_cast<uint32_t>(h->last.outcome);
    out->constraint_kind =
        h->last.outcome == UpdateOutcome::kConstraint ? static_cast<uint32_t>(h->last.constraint_kind) : 0;
    out->row = row_to_c(h->last.row, h->cells[0]);
    if (out->struct_size >= QRS_SDK_FIELD_END(qrs_update_result, replaced_row))
      out->replaced_row = row_to_c(h->last.replaced_row, h->cells[1]);
    if (out->struct_size >= QRS_SDK_FIELD_END(qrs_update_result, existing_row))
      out->existing_row = row_to_c(h->last.existing_row, h->cells[2]);
    return QRS_OK;
  });
}

inline qrs_status table_open_connection(void* self, qrs_connection* out, qrs_error* err) {
  return guard(err, [&] {
    if (!out) throw Error::misuse("null qrs_connection");
    std::unique_ptr<Connection> conn = static_cast<TableHolder*>(self)->table->open_connection();
    if (!conn) throw Error::internal("open_connection returned no connection");
    out->self = conn.release();
    out->vt = &kConnectionVtable;
    return QRS_OK;
  });
}

inline void table_release(void* self) {
  guard_void("table release", [&] { delete static_cast<TableHolder*>(self); });
}

inline qrs_status table_alter_table(void* self, const qrs_schema_change* change, const qrs_table_schema* new_schema,
                                    qrs_error* err) {
  return guard(err, [&] {
    require(change, QRS_SDK_FIELD_END(qrs_schema_change, convert), "qrs_schema_change");
    static_cast<TableHolder*>(self)->table->alter_table(SchemaChange(*change), schema_from_c(new_schema));
    return QRS_OK;
  });
}

inline qrs_status table_lookup(void* self, const qrs_row* key, qrs_row* out, qrs_error* err) {
  auto* h = static_cast<TableHolder*>(self);
  return guard(err, [&] {
    if (!key || !out) throw Error::misuse("null lookup key or result");
    if (key->count == 0 || !key->cells) throw Error::misuse("lookup with an empty key");
    h->looked_up = LookupResult();  // the previous lookup's row is released here
    h->looked_up = h->table->lookup(std::span<const qrs_value>(key->cells, key->count));
    if (!h->looked_up.found) return QRS_NOTFOUND;
    if (h->looked_up.row) {
      *out = row_to_c(h->looked_up.row, h->lookup_cells);
    } else {
      *out = qrs_row{h->looked_up.cells.data(), static_cast<uint32_t>(h->looked_up.cells.size())};
    }
    return QRS_OK;
  });
}

// 1.5: the ops are an array of size-prefixed structs (strided by their struct_size); the
// sink must be large enough to hold `emit`.
inline qrs_status table_apply_maintenance(void* self, const qrs_maintenance_op* ops, uint32_t count,
                                          qrs_change_sink* sink, qrs_error* err) {
  return guard(err, [&] {
    require(sink, QRS_SDK_FIELD_END(qrs_change_sink, emit), "qrs_change_sink");
    if (!sink->emit) throw Error::misuse("null qrs_change_sink.emit");
    size_t stride = stride_of(ops, count, QRS_SDK_FIELD_END(qrs_maintenance_op, row), "qrs_maintenance_op");
    std::vector<MaintenanceOp> converted;
    converted.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const qrs_maintenance_op& op = nth(ops, i, stride);
      if (op.kind != QRS_MAINT_UPSERT && op.kind != QRS_MAINT_DELETE_KEY)
        throw Error::misuse("unknown qrs_maintenance_kind " + std::to_string(op.kind));
      converted.push_back(MaintenanceOp{static_cast<MaintenanceKind>(op.kind), cells_from_c(op.row, "qrs_maintenance_op.row")});
    }
    ChangeSink s(*sink);
    static_cast<TableHolder*>(self)->table->apply_maintenance(converted, s);
    return QRS_OK;
  });
}

inline qrs_status table_replace_contents(void* self, qrs_row_source* rows, qrs_error* err) {
  return guard(err, [&] {
    require(rows, QRS_SDK_FIELD_END(qrs_row_source, next), "qrs_row_source");
    if (!rows->next) throw Error::misuse("null qrs_row_source.next");
    RowSource source(*rows);
    static_cast<TableHolder*>(self)->table->replace_contents(source);
    return QRS_OK;
  });
}

inline constexpr qrs_table_vtable kTableVtable{sizeof(qrs_table_vtable), &table_best_access_plan,
                                               &table_open_cursor,       &table_update,
                                               &table_open_connection,   &table_release,
                                               &table_alter_table,       &table_lookup,
                                               &table_apply_maintenance, &table_replace_contents};

inline void wrap_table(std::unique_ptr<Table> table, qrs_table* out) {
  if (!table) throw Error::internal("module returned no table");
  auto* h = new TableHolder();
  h->table = std::move(table);
  out->self = h;
  out->vt = &kTableVtable;
}

// ---- module -------------------------------------------------------------------------------

inline qrs_status module_create(void* self, const qrs_table_schema* schema, qrs_table* out, qrs_error* err) {
  return guard(err, [&] {
    if (!out) throw Error::misuse("null qrs_table");
    wrap_table(static_cast<ModuleHolder*>(self)->module->create(schema_from_c(schema)), out);
    return QRS_OK;
  });
}

inline qrs_status module_connect(void* self, const qrs_table_schema* schema, qrs_table* out, qrs_error* err) {
  return guard(err, [&] {
    if (!out) throw Error::misuse("null qrs_table");
    wrap_table(static_cast<ModuleHolder*>(self)->module->connect(schema_from_c(schema)), out);
    return QRS_OK;
  });
}

inline qrs_status module_destroy(void* self, qrs_string schema_name, qrs_string table_name, qrs_error* err) {
  return guard(err, [&] {
    static_cast<ModuleHolder*>(self)->module->destroy(view(schema_name), view(table_name));
    return QRS_OK;
  });
}

// A throwing capabilities() leaves the defaults (everything off) and is logged.
inline void module_capabilities(void* self, qrs_module_capabilities* out) {
  guard_void("Module::capabilities (the host uses the defaults)", [&] {
    if (!out || out->struct_size < QRS_SDK_FIELD_END(qrs_module_capabilities, scan_snapshot_isolation)) return;
    Capabilities c = static_cast<ModuleHolder*>(self)->module->capabilities();
    out->persistent = c.persistent ? 1 : 0;
    out->scan_snapshot_isolation = c.scan_snapshot_isolation ? 1 : 0;
    if (out->struct_size >= QRS_SDK_FIELD_END(qrs_module_capabilities, committed_reads))
      out->committed_reads = c.committed_reads ? 1 : 0;
    if (out->struct_size >= QRS_SDK_FIELD_END(qrs_module_capabilities, backing_host))
      out->backing_host = c.backing_host ? 1 : 0;
    if (out->struct_size >= QRS_SDK_FIELD_END(qrs_module_capabilities, access_forms))
      out->access_forms = c.access_forms ? 1 : 0;
  });
}

inline void module_release(void* self) {
  guard_void("module release", [&] { delete static_cast<ModuleHolder*>(self); });
}

inline qrs_status module_open_database(void* self, qrs_string database_name, const qrs_option* options, uint32_t option_count,
                                qrs_module* out, qrs_error* err);

inline qrs_status module_catalog_put(void* self, qrs_string key, qrs_string text, qrs_error* err) {
  return guard(err, [&] {
    static_cast<ModuleHolder*>(self)->module->catalog_put(view(key), view(text));
    return QRS_OK;
  });
}

inline qrs_status module_catalog_list(void* self, void* ctx, qrs_status (*emit)(void* ctx, qrs_string key, qrs_string text),
                                      qrs_error* err) {
  return guard(err, [&] {
    if (!emit) throw Error::misuse("null catalog emit");
    static_cast<ModuleHolder*>(self)->module->catalog_list([&](std::string_view key, std::string_view text) {
      qrs_status st = emit(ctx, {key.data(), key.size()}, {text.data(), text.size()});
      if (st != QRS_OK) throw Error(st, "catalog listing stopped by the host");
    });
    return QRS_OK;
  });
}

inline qrs_status module_schema_begin(void* self, qrs_error* err) {
  return guard(err, [&] {
    static_cast<ModuleHolder*>(self)->module->schema_begin();
    return QRS_OK;
  });
}

inline qrs_status module_schema_commit(void* self, qrs_error* err) {
  return guard(err, [&] {
    static_cast<ModuleHolder*>(self)->module->schema_commit();
    return QRS_OK;
  });
}

inline void module_schema_rollback(void* self) {
  guard_void("module schema_rollback", [&] { static_cast<ModuleHolder*>(self)->module->schema_rollback(); });
}

inline qrs_status module_notify_lens_deployment(void* self, const qrs_lens_snapshot* snap, uint32_t* backed,
                                                qrs_error* err) {
  return guard(err, [&] {
    if (!snap || !backed) throw Error::misuse("null lens snapshot");
    require(snap, QRS_SDK_FIELD_END(qrs_lens_snapshot, table_count), "qrs_lens_snapshot");
    LensDeploymentSnapshot s;
    s.logical_schema = str(snap->logical_schema);
    s.basis_schema = str(snap->basis_schema);
    s.basis_hash = str(snap->basis_hash);
    for (uint32_t t = 0; t < snap->table_count; ++t) {
      const qrs_lens_table& ct = snap->tables[t];
      LensTableSnapshot table;
      table.logical_table = str(ct.logical_table);
      table.get_body = str(ct.get_body);
      for (uint32_t c = 0; c < ct.logical_column_count; ++c) table.logical_columns.push_back(str(ct.logical_columns[c]));
      for (uint32_t r = 0; r < ct.relation_count; ++r) {
        const qrs_lens_relation& cr = ct.relations[r];
        LensRelationBacking rel;
        rel.schema_name = str(cr.schema_name);
        rel.table_name = str(cr.table_name);
        for (uint32_t c = 0; c < cr.column_count; ++c)
          rel.columns.emplace_back(str(cr.columns[c].basis_column), str(cr.columns[c].logical_column));
        table.relations.push_back(std::move(rel));
      }
      s.tables.push_back(std::move(table));
    }
    *backed = static_cast<ModuleHolder*>(self)->module->notify_lens_deployment(s);
    return QRS_OK;
  });
}

inline qrs_status module_backup(void* self, qrs_string dest_dir, void* ctx,
                                qrs_status (*progress)(void*, uint64_t, uint64_t), qrs_error* err) {
  return guard(err, [&] {
    Module::BackupProgress report;
    if (progress)
      report = [&](uint64_t done, uint64_t total) {
        const qrs_status st = progress(ctx, done, total);
        if (st != QRS_OK) throw Error(st, "backup stopped by the host");
        return true;
      };
    static_cast<ModuleHolder*>(self)->module->backup(view(dest_dir), report);
    return QRS_OK;
  });
}

// A tag value as the builder reads it: text as itself, numbers in decimal, true / false.
inline std::string tag_text(const qrs_value& v) {
  switch (v.type) {
    case QRS_TYPE_TEXT:
    case QRS_TYPE_JSON:
    case QRS_TYPE_BLOB: return str(v.u.str);
    case QRS_TYPE_INTEGER: return std::to_string(v.u.integer);
    case QRS_TYPE_REAL: return std::to_string(v.u.real);
    case QRS_TYPE_BOOLEAN: return v.u.boolean ? "true" : "false";
    default: return "";
  }
}

inline qrs_status module_mapping_advertisements(void* self, qrs_string basis_schema, const qrs_basis_table* tables,
                                                uint32_t table_count, void* ctx,
                                                qrs_status (*emit)(void*, const qrs_mapping_advertisement*),
                                                qrs_error* err) {
  return guard(err, [&] {
    if (!emit) throw Error::misuse("null emit");
    if (table_count && !tables) throw Error::misuse("null basis tables");
    std::vector<BasisTable> in;
    for (uint32_t i = 0; i < table_count; ++i) {
      const qrs_basis_table& t = tables[i];
      require(&t, QRS_SDK_FIELD_END(qrs_basis_table, tag_count), "qrs_basis_table");
      BasisTable b;
      b.schema = schema_from_c(t.schema);
      for (uint32_t k = 0; k < t.tag_count; ++k) b.tags.emplace_back(str(t.tags[k].key), tag_text(t.tags[k].value));
      in.push_back(std::move(b));
    }
    std::vector<MappingAdvertisement> ads = static_cast<ModuleHolder*>(self)->module->mapping_advertisements(view(basis_schema), in);
    auto q = [](const std::string& x) { return qrs_string{x.data(), x.size()}; };
    for (const MappingAdvertisement& ad : ads) {
      // The C form borrows the advertisement's strings for the emit call.
      std::vector<std::vector<qrs_ad_column>> cols(ad.members.size());
      std::vector<std::vector<qrs_string>> keys(ad.members.size());
      std::vector<qrs_ad_pivot> pivots(ad.members.size());
      std::vector<qrs_ad_member> members;
      for (size_t m = 0; m < ad.members.size(); ++m) {
        const AdMember& am = ad.members[m];
        for (const auto& [l, b] : am.columns) cols[m].push_back({q(l), q(b)});
        for (const std::string& k : am.key_columns) keys[m].push_back(q(k));
        if (am.pivot) pivots[m] = {q(am.pivot->entity_column), q(am.pivot->attribute_column), q(am.pivot->value_column)};
        qrs_ad_member cm{};
        cm.struct_size = sizeof(cm);
        cm.relation_id = q(am.relation_id);
        cm.schema_name = q(am.schema_name);
        cm.table_name = q(am.table_name);
        cm.presence = am.optional ? QRS_AD_OPTIONAL : QRS_AD_MANDATORY;
        cm.columns = cols[m].data();
        cm.column_count = static_cast<uint32_t>(cols[m].size());
        cm.pivot = am.pivot ? &pivots[m] : nullptr;
        cm.key_columns = keys[m].data();
        cm.key_column_count = static_cast<uint32_t>(keys[m].size());
        members.push_back(cm);
      }
      std::vector<std::vector<qrs_string>> acols(ad.access.size()), aforms(ad.access.size());
      std::vector<qrs_ad_access> access;
      for (size_t a = 0; a < ad.access.size(); ++a) {
        for (const std::string& c : ad.access[a].columns) acols[a].push_back(q(c));
        for (const std::string& f : ad.access[a].forms) aforms[a].push_back(q(f));
        access.push_back({acols[a].data(), static_cast<uint32_t>(acols[a].size()), aforms[a].data(),
                          static_cast<uint32_t>(aforms[a].size())});
      }
      qrs_mapping_advertisement c{};
      c.struct_size = sizeof(c);
      c.id = q(ad.id);
      c.logical_table = q(ad.logical_table);
      c.role = static_cast<uint32_t>(ad.role);
      c.anchor_relation_id = q(ad.anchor_relation_id);
      c.key_kind = static_cast<uint32_t>(ad.key_kind);
      c.members = members.data();
      c.member_count = static_cast<uint32_t>(members.size());
      c.access = access.data();
      c.access_count = static_cast<uint32_t>(access.size());
      const qrs_status st = emit(ctx, &c);
      if (st != QRS_OK) throw Error(st, "mapping advertisement refused by the host");
    }
    return QRS_OK;
  });
}

inline qrs_status module_replication(void* self, qrs_string op, qrs_string args, void* ctx,
                                     void (*reply)(void*, qrs_string), qrs_error* err) {
  return guard(err, [&] {
    if (!reply) throw Error::misuse("null reply");
    const std::string out = static_cast<ModuleHolder*>(self)->module->replication(view(op), view(args));
    reply(ctx, qrs_string{out.data(), out.size()});
    return QRS_OK;
  });
}

inline constexpr qrs_module_vtable kModuleVtable{sizeof(qrs_module_vtable),
                                                 &module_create,
                                                 &module_connect,
                                                 &module_destroy,
                                                 &module_capabilities,
                                                 &module_release,
                                                 &module_open_database,
                                                 &module_catalog_put,
                                                 &module_catalog_list,
                                                 &module_schema_begin,
                                                 &module_schema_commit,
                                                 &module_schema_rollback,
                                                 &module_notify_lens_deployment,
                                                 &module_backup,
                                                 &module_mapping_advertisements,
                                                 &module_replication};

inline qrs_status module_open_database(void* self, qrs_string database_name, const qrs_option* options,
                                       uint32_t option_count, qrs_module* out, qrs_error* err) {
  return guard(err, [&] {
    if (!out) throw Error::misuse("null qrs_module");
    if (option_count && !options) throw Error::misuse("null options");
    std::vector<Option> opts;
    for (uint32_t i = 0; i < option_count; ++i) opts.push_back(Option{str(options[i].key), Value::from_c(options[i].value)});
    std::shared_ptr<Module> m = static_cast<ModuleHolder*>(self)->module->open_database(view(database_name), opts);
    if (!m) return QRS_UNSUPPORTED;
    out->self = new ModuleHolder{std::move(m)};
    out->vt = &kModuleVtable;
    return QRS_OK;
  });
}

// ---- functions and collations ---------------------------------------------------------------

struct ScalarHolder {
  ScalarFunction fn;
};

inline qrs_status scalar_call(void* user, const qrs_value* args, uint32_t argc, qrs_result_sink* out,
                              qrs_error* err) {
  return guard(err, [&] {
    std::vector<Value> a = args_from_c(args, argc);
    emit_result(out, static_cast<ScalarHolder*>(user)->fn(std::span<const Value>(a)));
    return QRS_OK;
  });
}

struct AggregateHolder {
  AggregateFactory factory;
};

inline qrs_status aggregate_init(void* user, void** state, qrs_error* err) {
  return guard(err, [&] {
    if (!state) throw Error::misuse("null aggregate state slot");
    std::unique_ptr<Aggregate> a = static_cast<AggregateHolder*>(user)->factory();
    if (!a) throw Error::internal("aggregate factory returned no state");
    *state = a.release();
    return QRS_OK;
  });
}

inline qrs_status aggregate_step(void*, void* state, const qrs_value* args, uint32_t argc, qrs_error* err) {
  return guard(err, [&] {
    std::vector<Value> a = args_from_c(args, argc);
    static_cast<Aggregate*>(state)->step(std::span<const Value>(a));
    return QRS_OK;
  });
}

inline qrs_status aggregate_final(void*, void* state, qrs_result_sink* out, qrs_error* err) {
  return guard(err, [&] {
    emit_result(out, static_cast<Aggregate*>(state)->finish());
    return QRS_OK;
  });
}

inline qrs_status aggregate_merge(void*, void* state, const void* other, qrs_error* err) {
  return guard(err, [&] {
    if (!other) throw Error::misuse("null aggregate state to merge");
    static_cast<Aggregate*>(state)->merge(*static_cast<const Aggregate*>(other));
    return QRS_OK;
  });
}

inline qrs_status aggregate_negate(void*, void* state, qrs_error* err) {
  return guard(err, [&] {
    static_cast<Aggregate*>(state)->negate();
    return QRS_OK;
  });
}

inline qrs_status aggregate_decode(void*, void* state, const qrs_value* stored, qrs_error* err) {
  return guard(err, [&] {
    if (!stored) throw Error::misuse("null stored aggregate value");
    static_cast<Aggregate*>(state)->decode(Value::from_c(*stored));
    return QRS_OK;
  });
}

inline void aggregate_free_state(void*, void* state) {
  guard_void("aggregate free_state", [&] { delete static_cast<Aggregate*>(state); });
}

struct CollationHolder {
  CollationFunction fn;
  std::string name;                  // for the log line
  std::atomic<bool> logged{false};  // a throwing collation is logged once, not per compare
};

// A collation cannot report an error (the C slot returns the order), so a throw answers
// with BINARY order for that comparison and is logged once per collation as an error.
inline int collation_call(void* user, const char* a, size_t a_len, const char* b, size_t b_len) {
  auto* h = static_cast<CollationHolder*>(user);
  std::string_view x = a ? std::string_view(a, a_len) : std::string_view();
  std::string_view y = b ? std::string_view(b, b_len) : std::string_view();
  try {
    return h->fn(x, y);
  } catch (...) {
    if (!h->logged.exchange(true)) {
      std::string message;
      describe_current_exception(&message);
      try {
        log_to_host(QRS_LOG_ERROR, "collation " + h->name + " threw (answering with BINARY order): " + message);
      } catch (...) {
      }
    }
    return Collation::binary_compare(x, y);
  }
}

template <class T>
void release_user(void* user) {
  guard_void("release_user", [&] { delete static_cast<T*>(user); });
}

}  // namespace quereus::sdk::detail

#endif  // QUEREUS_DETAIL_TRAMPOLINES_HPP_
