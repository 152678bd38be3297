// tests/sdk/abi_versions — one source, two test plugins for the ABI's minor-version rules
// (docs/sdk.md, "Versioning rules"), built with the SDK only:
//
//   abi_old (ABI_VERSIONS_OLD)  a plugin "built against SDK 1.0": its manifest says minor 0
//       and its vtables end where 1.0's ended (struct_size = the 1.0 size), so the slots
//       appended since — qrs_table_vtable.alter_table (1.2) and .lookup (1.3),
//       qrs_module_vtable.open_database / catalog_put / catalog_list (1.3) — are absent.
//       They are nevertheless FILLED in memory with poison functions that count a call as
//       `beyond`: a host that read past struct_size would call them.
//   abi_new                     a plugin "built against a future minor" (manifest minor 99)
//       whose module and table vtables carry one extra trailing slot the host does not
//       know (struct_size larger than the host's). The host must read its own prefix only.
//
// Both register a module of their own name (a simple table keyed by its primary-key cells,
// full scans only, no transactions) and a function <name>_calls(slot) returning how often
// the plugin's `open_cursor`, `lookup`, `alter_table`, `create` or `beyond` ran, so the
// tests can see which path the host took (tests/unit/abi_versions_test.cc).
#include <quereus/sdk.hpp>

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(ABI_VERSIONS_OLD)
#define ABI_NAME "abi_old"
extern const char kAbiOldManifest[];
#define ABI_MANIFEST kAbiOldManifest
#else
#define ABI_NAME "abi_new"
extern const char kAbiNewManifest[];
#define ABI_MANIFEST kAbiNewManifest
#endif

namespace abi_versions {

namespace sdk = quereus::sdk;
namespace detail = quereus::sdk::detail;
using sdk::RowPtr;
using sdk::Value;

enum Counter { kOpenCursor, kLookup, kAlterTable, kCreate, kBeyond, kCounterCount };
constexpr const char* kCounterNames[kCounterCount] = {"open_cursor", "lookup", "alter_table", "create", "beyond"};
std::atomic<int64_t> g_calls[kCounterCount];

void count(Counter c) { g_calls[c].fetch_add(1, std::memory_order_relaxed); }

// ---- a small table: rows by their primary-key cells, full scans ---------------------------

struct Store {
  std::mutex mu;
  std::map<std::string, RowPtr> rows;
};

class ListCursor : public sdk::Cursor {
 public:
  explicit ListCursor(std::vector<RowPtr> rows) : rows_(std::move(rows)) {}
  void next_batch(sdk::RowBatch& out) override {
    while (next_ < rows_.size() && !out.full()) out.add(rows_[next_++]);
  }

 private:
  std::vector<RowPtr> rows_;
  size_t next_ = 0;
};

class SimpleTable : public sdk::Table {
 public:
  SimpleTable(sdk::TableSchema s, std::shared_ptr<Store> store) : schema_(std::move(s)), store_(std::move(store)) {}

  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs&) override {
    count(kOpenCursor);
    std::vector<RowPtr> rows;
    std::lock_guard lock(store_->mu);
    for (const auto& [k, r] : store_->rows) rows.push_back(r);
    return std::make_unique<ListCursor>(std::move(rows));
  }

  sdk::UpdateResult update(sdk::UpdateArgs a) override {
    std::lock_guard lock(store_->mu);
    auto& rows = store_->rows;
    if (a.op != sdk::RowOp::kInsert) {
      auto it = rows.find(text_of(a.old_key));
      if (it == rows.end()) return sdk::UpdateResult::noop();
      RowPtr old = it->second;
      if (a.op == sdk::RowOp::kDelete) {
        rows.erase(it);
        return sdk::UpdateResult::ok(old);
      }
      rows.erase(it);
    }
    std::string k = key_of(a.values);
    if (auto it = rows.find(k); it != rows.end()) {
      if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
      if (a.on_conflict != sdk::Conflict::kReplace)
        return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, it->second);
    }
    rows[k] = sdk::make_row(std::move(a.values));
    return sdk::UpdateResult::ok(nullptr);
  }

  // Reached only through the lookup slot (1.3): never for abi_old.
  sdk::LookupResult lookup(std::span<const qrs_value> key) override {
    count(kLookup);
    if (key.size() != schema_.primary_key.size()) throw sdk::Error::unsupported("lookup by a key prefix");
    sdk::Row k;
    for (const qrs_value& c : key) k.push_back(Value::from_c(c));
    std::lock_guard lock(store_->mu);
    auto it = store_->rows.find(text_of(k));
    return it == store_->rows.end() ? sdk::LookupResult::not_found() : sdk::LookupResult::of_row(it->second);
  }

  // Reached only through the alter_table slot (1.2): never for abi_old.
  void alter_table(const sdk::SchemaChange&, const sdk::TableSchema&) override {
    count(kAlterTable);
    throw sdk::Error::unsupported(ABI_NAME " alter_table");
  }

 private:
  static std::string text_of(const sdk::Row& key) {
    std::string s;
    for (const Value& v : key) s += v.debug_string() + '\x1f';
    return s;
  }
  std::string key_of(const sdk::Row& row) const {
    sdk::Row key;
    for (const sdk::KeyColumn& k : schema_.primary_key) key.push_back(row.at(k.column));
    return text_of(key);
  }

  sdk::TableSchema schema_;
  std::shared_ptr<Store> store_;
};

class SimpleModule : public sdk::Module {
 public:
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& s) override {
    count(kCreate);
    std::lock_guard lock(mu_);
    auto& store = stores_[s.schema_name + "." + s.table_name];
    if (store) throw sdk::Error::generic("table " + s.schema_name + "." + s.table_name + " already exists");
    store = std::make_shared<Store>();
    return std::make_unique<SimpleTable>(s, store);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& s) override {
    std::lock_guard lock(mu_);
    auto& store = stores_[s.schema_name + "." + s.table_name];
    if (!store) store = std::make_shared<Store>();
    return std::make_unique<SimpleTable>(s, store);
  }
  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard lock(mu_);
    stores_.erase(std::string(schema_name) + "." + std::string(table_name));
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Store>> stores_;
};

// ---- the vtables as the plugin's SDK version would have laid them out ----------------------

#if defined(ABI_VERSIONS_OLD)

// Slots past struct_size: a correct host never calls them.
qrs_status poison_alter(void*, const qrs_schema_change*, const qrs_table_schema*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called alter_table past the 1.0 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_lookup(void*, const qrs_row*, qrs_row*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called lookup past the 1.0 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_open_database(void*, qrs_string, const qrs_option*, uint32_t, qrs_module*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called open_database past the 1.0 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_catalog_put(void*, qrs_string, qrs_string, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called catalog_put past the 1.0 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_catalog_list(void*, void*, qrs_status (*)(void*, qrs_string, qrs_string), qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called catalog_list past the 1.0 struct_size");
  return QRS_INTERNAL;
}

// An aggregate as 1.8 laid it out (its def ends before the 1.9 algebra): abi_old_sum(x),
// the sum of integers. Its algebra slots are filled with poison: a host that read past
// struct_size would fold through them; a correct one recomputes the groups.
struct SumState {
  int64_t sum = 0;
  bool any = false;
};
qrs_status sum_init(void*, void** state, qrs_error*) {
  *state = new SumState();
  return QRS_OK;
}
qrs_status sum_step(void*, void* state, const qrs_value* args, uint32_t argc, qrs_error* err) {
  if (argc != 1 || args[0].type != QRS_TYPE_INTEGER) {
    if (argc == 1 && args[0].type == QRS_TYPE_NULL) return QRS_OK;
    detail::set_error(err, "abi_old_sum takes one INTEGER");
    return QRS_MISMATCH;
  }
  auto* s = static_cast<SumState*>(state);
  s->sum += args[0].u.integer;
  s->any = true;
  return QRS_OK;
}
qrs_status sum_final(void*, void* state, qrs_result_sink* out, qrs_error*) {
  auto* s = static_cast<SumState*>(state);
  qrs_value v{};
  v.type = s->any ? QRS_TYPE_INTEGER : QRS_TYPE_NULL;
  v.u.integer = s->sum;
  out->set(out, &v);
  return QRS_OK;
}
void sum_free(void*, void* state) { delete static_cast<SumState*>(state); }
qrs_status poison_merge(void*, void*, const void*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called merge past the 1.8 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_negate(void*, void*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called negate past the 1.8 struct_size");
  return QRS_INTERNAL;
}
qrs_status poison_decode(void*, void*, const qrs_value*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called decode past the 1.8 struct_size");
  return QRS_INTERNAL;
}
constexpr uint32_t kAggregateDefSize18 = offsetof(qrs_aggregate_function_def, merge);

// ABI 1.0 ended both vtables before these slots.
constexpr uint32_t kTableVtableSize10 = offsetof(qrs_table_vtable, alter_table);
constexpr uint32_t kModuleVtableSize10 = offsetof(qrs_module_vtable, open_database);

const qrs_table_vtable kTableVt = [] {
  qrs_table_vtable vt = detail::kTableVtable;
  vt.struct_size = kTableVtableSize10;
  vt.alter_table = &poison_alter;
  vt.lookup = &poison_lookup;
  return vt;
}();

qrs_status module_create(void* self, const qrs_table_schema* s, qrs_table* out, qrs_error* err) {
  qrs_status st = detail::kModuleVtable.create(self, s, out, err);
  if (st == QRS_OK) out->vt = &kTableVt;
  return st;
}
qrs_status module_connect(void* self, const qrs_table_schema* s, qrs_table* out, qrs_error* err) {
  qrs_status st = detail::kModuleVtable.connect(self, s, out, err);
  if (st == QRS_OK) out->vt = &kTableVt;
  return st;
}

const qrs_module_vtable kModuleVt = [] {
  qrs_module_vtable vt = detail::kModuleVtable;
  vt.struct_size = kModuleVtableSize10;
  vt.create = &module_create;
  vt.connect = &module_connect;
  vt.open_database = &poison_open_database;
  vt.catalog_put = &poison_catalog_put;
  vt.catalog_list = &poison_catalog_list;
  return vt;
}();

const qrs_module_vtable* module_vtable() { return &kModuleVt; }

#else  // abi_new: one trailing slot the host does not know

qrs_status future_slot(void*, qrs_error* err) {
  count(kBeyond);
  detail::set_error(err, "host called a slot it does not know");
  return QRS_INTERNAL;
}

struct FutureTableVtable {
  qrs_table_vtable base;
  qrs_status (*future)(void* self, qrs_error* err);
};
struct FutureModuleVtable {
  qrs_module_vtable base;
  qrs_status (*future)(void* self, qrs_error* err);
};

const FutureTableVtable kTableVt = [] {
  FutureTableVtable vt{detail::kTableVtable, &future_slot};
  vt.base.struct_size = sizeof(FutureTableVtable);
  return vt;
}();

qrs_status module_create(void* self, const qrs_table_schema* s, qrs_table* out, qrs_error* err) {
  qrs_status st = detail::kModuleVtable.create(self, s, out, err);
  if (st == QRS_OK) out->vt = &kTableVt.base;
  return st;
}
qrs_status module_connect(void* self, const qrs_table_schema* s, qrs_table* out, qrs_error* err) {
  qrs_status st = detail::kModuleVtable.connect(self, s, out, err);
  if (st == QRS_OK) out->vt = &kTableVt.base;
  return st;
}

const FutureModuleVtable kModuleVt = [] {
  FutureModuleVtable vt{detail::kModuleVtable, &future_slot};
  vt.base.struct_size = sizeof(FutureModuleVtable);
  vt.base.create = &module_create;
  vt.base.connect = &module_connect;
  return vt;
}();

const qrs_module_vtable* module_vtable() { return &kModuleVt.base; }

#endif

// ---- registration: the module through the raw registrar, so our vtable is the one used ----

void register_plugin(sdk::Registrar& r, qrs_registrar* reg) {
  auto holder = std::make_unique<detail::ModuleHolder>(detail::ModuleHolder{std::make_shared<SimpleModule>()});
  qrs_module m{holder.get(), module_vtable()};
  std::string message;
  qrs_error err{sizeof(qrs_error), &message, [](qrs_error* e, const char* text, size_t len) {
                  static_cast<std::string*>(e->ctx)->assign(text, len);
                }};
  qrs_status st = reg->register_module(reg->ctx, {ABI_NAME, sizeof(ABI_NAME) - 1}, m, &err);
  if (st != QRS_OK) throw sdk::Error(st, "registering module " ABI_NAME ": " + message);
  holder.release();  // the host owns it now
#if defined(ABI_VERSIONS_OLD)
  qrs_aggregate_function_def sum{};
  sum.struct_size = kAggregateDefSize18;
  sum.name = {ABI_NAME "_sum", sizeof(ABI_NAME "_sum") - 1};
  sum.num_args = 1;
  sum.flags = QRS_FUNC_DETERMINISTIC;
  sum.return_type = QRS_LT_INTEGER;
  sum.init = &sum_init;
  sum.step = &sum_step;
  sum.final = &sum_final;
  sum.free_state = &sum_free;
  sum.merge = &poison_merge;  // past struct_size: never read
  sum.negate = &poison_negate;
  sum.decode = &poison_decode;
  sum.algebra_flags = QRS_AGG_DECODE_EXACT;
  st = reg->register_aggregate(reg->ctx, &sum, &err);
  if (st != QRS_OK) throw sdk::Error(st, "registering aggregate " ABI_NAME "_sum: " + message);
#endif
  r.add_scalar(ABI_NAME "_calls", 1, 0, QRS_LT_INTEGER, [](std::span<const Value> a) {
    for (int c = 0; c < kCounterCount; ++c)
      if (a[0].bytes() == kCounterNames[c]) return Value::integer(g_calls[c].load());
    throw sdk::Error::misuse("unknown counter");
  });
}

}  // namespace abi_versions

// The entry by hand (QUEREUS_PLUGIN hides the raw registrar, which we need above).
extern "C" QRS_EXPORT const char* qrs_plugin_manifest_v1(void) { return ABI_MANIFEST; }
extern "C" QRS_EXPORT qrs_status qrs_plugin_entry_v1(const qrs_host_api* host, qrs_registrar* reg, qrs_error* err) {
  return quereus::sdk::detail::plugin_entry(
      host, reg, err, [reg](quereus::sdk::Registrar& r) { abi_versions::register_plugin(r, reg); });
}
