// Host-side adapters over the C ABI: engine calls become plugin calls with borrowed
// views of engine data; what the plugin hands back is copied into engine values.
#include "plugin/module_adapter.h"

#include <cctype>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>

#include <spdlog/spdlog.h>

#include "absl/container/inlined_vector.h"
#include "types/json_value.h"
#include "types/temporal.h"
#include "types/big_int.h"
#include "catalog/tag_set.h"

namespace quereus {

struct PluginTableHandle {
  std::shared_ptr<PluginModule> module;  // first member: outlives the release call
  void* self = nullptr;
  qrs_table_vtable vt{};
  ~PluginTableHandle() {
    if (vt.release) call_plugin_void("table release", vt.release, self);
  }
};

namespace {

std::string fold(std::string_view s, int (*f)(int)) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return out;
}

[[noreturn]] void plugin_bug(const std::string& what) { throw Error(StatusCode::kInternal, what); }

// TableSchema as a qrs_table_schema; borrows from `schema`, which must outlive the view.
class SchemaView {
 public:
  explicit SchemaView(const TableSchema& schema) {
    for (const ColumnSchema& c : schema.columns) {
      qrs_column_def d{};
      d.struct_size = sizeof(d);
      d.name = to_qrs(c.name);
      d.type_name = to_qrs(c.type_name);
      d.logical_type = c.logical_type;
      d.not_null = c.not_null;
      d.primary_key = c.primary_key;
      d.collation = collation(c);
      columns_.push_back(d);
    }
    for (const KeyColumn& k : schema.primary_key) {
      qrs_key_column d{};
      d.struct_size = sizeof(d);
      d.column_index = static_cast<uint32_t>(k.column);
      d.desc = k.desc;
      d.collation = collation(schema.columns.at(k.column));
      keys_.push_back(d);
    }
    for (const auto& [key, value] : schema.module_options)
      options_.push_back({to_qrs(key), to_qrs(value)});
    view_ = {};
    view_.struct_size = sizeof(view_);
    view_.schema_name = to_qrs(schema.schema_name);
    view_.table_name = to_qrs(schema.name);
    view_.columns = columns_.data();
    view_.column_count = static_cast<uint32_t>(columns_.size());
    view_.primary_key = keys_.data();
    view_.key_count = static_cast<uint32_t>(keys_.size());
    view_.options = options_.data();
    view_.option_count = static_cast<uint32_t>(options_.size());
  }
  SchemaView(const SchemaView&) = delete;
  SchemaView& operator=(const SchemaView&) = delete;
  const qrs_table_schema* get() const { return &view_; }

 private:
  // A column's key order as modules see it: its collation, or, for a type whose order is
  // not its text's (TIMESPAN, JSON) under BINARY, that type's order.
  static qrs_collation_ref collation(const ColumnSchema& c) {
    bool binary = !c.collation || c.collation->name() == "BINARY";
    if (binary && c.logical_type == QRS_LT_TIMESPAN) return timespan_order().ref();
    if (binary && c.logical_type == QRS_LT_JSON) return json_order().ref();
    return c.collation ? c.collation->ref() : Collation::binary().ref();
  }
  static int timespan_compare(void*, const char* a, size_t al, const char* b, size_t bl) {
    return temporal::compare_timespan_texts(std::string_view(a, al), std::string_view(b, bl));
  }
  static int json_compare(void*, const char* a, size_t al, const char* b, size_t bl) {
    int c = jsonv::compare_text(std::string_view(a, al), std::string_view(b, bl));
    return (c > 0) - (c < 0);
  }
  static const Collation& timespan_order() {
    static const Collation order("TIMESPAN", &timespan_compare, nullptr, 0);
    return order;
  }
  static const Collation& json_order() {
    static const Collation order("JSON", &json_compare, nullptr, 0);
    return order;
  }
  std::vector<qrs_column_def> columns_;
  std::vector<qrs_key_column> keys_;
  std::vector<qrs_option> options_;
  qrs_table_schema view_;
};

// Filters and orderings as C structs, borrowing the values of the engine specs.
class FilterViews {
 public:
  FilterViews(const std::vector<FilterSpec>& filters, const std::vector<OrderSpec>& ordering,
              bool bound) {
    in_lists_.reserve(filters.size());  // in place: pointers into it are taken below
    for (const FilterSpec& f : filters) {
      in_lists_.emplace_back();
      for (const Value& v : f.in_values) in_lists_.back().push_back(to_qrs(v));
      qrs_filter q{};
      q.struct_size = sizeof(q);
      q.column_index = static_cast<uint32_t>(f.column);
      q.op = f.op;
      q.usable = f.usable;
      q.has_value = bound || f.has_value;
      q.value = to_qrs(f.value);
      q.in_values = in_lists_.back().data();
      q.in_count = f.in_values.empty() ? f.in_count : static_cast<uint32_t>(f.in_values.size());
      q.form = {f.form.data(), f.form.size()};
      filters_.push_back(q);
    }
    for (const OrderSpec& o : ordering) {
      qrs_order_spec q{};
      q.column_index = static_cast<uint32_t>(o.column);
      q.desc = o.desc;
      ordering_.push_back(q);
    }
  }
  FilterViews(const FilterViews&) = delete;
  FilterViews& operator=(const FilterViews&) = delete;

  const qrs_filter* filters() const { return filters_.data(); }
  uint32_t filter_count() const { return static_cast<uint32_t>(filters_.size()); }
  const qrs_order_spec* ordering() const { return ordering_.data(); }
  uint32_t ordering_count() const { return static_cast<uint32_t>(ordering_.size()); }

 private:
  // Inline buffers: a point lookup builds these once per execution.
  absl::InlinedVector<absl::InlinedVector<qrs_value, 2>, 4> in_lists_;
  absl::InlinedVector<qrs_filter, 4> filters_;
  absl::InlinedVector<qrs_order_spec, 2> ordering_;
};

// Integers cross the ABI as int64 only, so a filter comparing a column with an integer
// outside int64 is restated over a double a module can hold, with the same answer for
// every value a module can store: `c op B` becomes `c op d` when the double d equals B,
// and otherwise `c <= lo` / `c >= hi` around B (lo < B < hi the neighbouring doubles).
// IN lists drop the members no stored value can equal. Returns false when the filter
// can match nothing (`c = B` with B no double); with `for_costing` such a filter is kept
// as `c = nearest double` instead (the plan request only estimates).
bool to_module_filter(FilterSpec& f, bool for_costing) {
  auto restate = [for_costing](Value& v, qrs_filter_op& op) {
    double d;
    if (bigint::exact_double(v, &d)) {
      v = Value::Real(d);
      return true;
    }
    d = v.to_double();  // the nearest double (±Infinity past the double range)
    if (op == QRS_OP_EQ) {
      if (for_costing) v = Value::Real(d);
      return for_costing;
    }
    bool below = bigint::compare_real(v, d) > 0;  // d < B
    double lo = below ? d : std::nextafter(d, -INFINITY), hi = below ? std::nextafter(d, INFINITY) : d;
    bool less = op == QRS_OP_LT || op == QRS_OP_LE;
    op = less ? QRS_OP_LE : QRS_OP_GE;
    v = Value::Real(less ? lo : hi);
    return true;
  };
  if (f.op == QRS_OP_IN) {
    size_t kept = 0;
    for (Value& v : f.in_values) {
      qrs_filter_op eq = QRS_OP_EQ;
      if (v.type() != ValueType::kBigInt || restate(v, eq)) f.in_values[kept++] = std::move(v);
    }
    if (kept == f.in_values.size()) return true;
    f.in_values.resize(kept);
    f.in_count = static_cast<uint32_t>(kept);
    return kept > 0;
  }
  if (f.value.type() != ValueType::kBigInt) return true;
  return restate(f.value, f.op);
}

bool has_big_value(const std::vector<FilterSpec>& filters) {
  for (const FilterSpec& f : filters) {
    if (f.value.type() == ValueType::kBigInt) return true;
    for (const Value& v : f.in_values)
      if (v.type() == ValueType::kBigInt) return true;
  }
  return false;
}

class EmptyCursor final : public VtabCursor {
 public:
  size_t next_batch(std::vector<Row>&) override { return 0; }
};

bool same_row(const qrs_value* cells, std::span<const Value> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const qrs_value& c = cells[i];
    const Value& v = values[i];
    switch (c.type) {
      case QRS_TYPE_NULL: if (!v.is_null()) return false; break;
      case QRS_TYPE_INTEGER: if (v.type() != ValueType::kInteger || v.as_int() != c.u.integer) return false; break;
      case QRS_TYPE_REAL: if (v.type() != ValueType::kReal || !(v.as_real() == c.u.real)) return false; break;
      case QRS_TYPE_BOOLEAN: if (v.type() != ValueType::kBoolean || v.as_bool() != (c.u.boolean != 0)) return false; break;
      case QRS_TYPE_TEXT: if (v.type() != ValueType::kText || v.str() != to_view(c.u.str)) return false; break;
      case QRS_TYPE_BLOB: if (v.type() != ValueType::kBlob || v.str() != to_view(c.u.str)) return false; break;
      case QRS_TYPE_JSON: if (v.type() != ValueType::kJson || v.str() != to_view(c.u.str)) return false; break;
      default: return false;
    }
  }
  return true;
}

std::optional<Row> optional_row(const qrs_row& r) {
  if (r.count == 0) return std::nullopt;
  if (r.cells == nullptr) plugin_bug("update returned a row without cells");
  return copy_row(r.cells, r.count);
}

// A plugin's `user` pointer, released (before the library can go) by the last owner.
struct PluginUser {
  PluginUser(PluginLibrary lib, void* u, void (*rel)(void*))
      : library(std::move(lib)), user(u), release(rel) {}
  ~PluginUser() {
    if (release) call_plugin_void("release_user", release, user);
  }
  PluginUser(const PluginUser&) = delete;
  PluginUser& operator=(const PluginUser&) = delete;

  PluginLibrary library;
  void* user;
  void (*release)(void*);
};

// Calls an optional slot `fn(self, args..., err)`; a missing slot is a no-op.
template <class Fn, class... Args>
void call_slot(Fn fn, void* self, const char* what, Args... args) {
  if (!fn) return;
  ErrorBox err;
  check(call_plugin(what, fn, self, args..., err.get()), err, what);
}

void require(bool ok, const char* kind, const std::string& name, const std::string& what) {
  if (!ok) throw Error(StatusCode::kPlugin, std::string(kind) + " '" + name + "': " + what);
}

class PluginAggregateState final : public AggregateState {
 public:
  PluginAggregateState(std::shared_ptr<PluginUser> user, const qrs_aggregate_function_def& def,
                       std::string name)
      : user_(std::move(user)), def_(def), name_(std::move(name)) {
    ErrorBox err;
    check(call_plugin("aggregate init", def_.init, user_->user, &state_, err.get()), err, "aggregate " + name_ + " init");
  }
  ~PluginAggregateState() override {
    if (def_.free_state) call_plugin_void("aggregate free_state", def_.free_state, user_->user, state_);
  }
  void step(std::span<const Value> args) override {
    auto qargs = to_qrs(args);
    ErrorBox err;
    check(call_plugin("aggregate step", def_.step, user_->user, state_, qargs.data(),
                      static_cast<uint32_t>(qargs.size()), err.get()),
          err, "aggregate " + name_);
  }
  Value final() override {
    ResultBox out;
    ErrorBox err;
    check(call_plugin("aggregate final", def_.final, user_->user, state_, out.get(), err.get()), err, "aggregate " + name_);
    return out.take();
  }
  void merge(const AggregateState& other) override {
    const auto* o = dynamic_cast<const PluginAggregateState*>(&other);
    if (!o || o->def_.merge != def_.merge || !def_.merge)
      throw Error(StatusCode::kInternal, "aggregate " + name_ + ": merge of another function's state");
    ErrorBox err;
    check(call_plugin("aggregate merge", def_.merge, user_->user, state_, static_cast<const void*>(o->state_), err.get()),
          err, "aggregate " + name_ + " merge");
  }
  void negate() override {
    if (!def_.negate) throw Error(StatusCode::kInternal, "aggregate " + name_ + " has no negate");
    ErrorBox err;
    check(call_plugin("aggregate negate", def_.negate, user_->user, state_, err.get()), err,
          "aggregate " + name_ + " negate");
  }
  void decode(const Value& stored) override {
    if (!def_.decode) throw Error(StatusCode::kInternal, "aggregate " + name_ + " has no decode");
    qrs_value q = to_qrs(stored);
    ErrorBox err;
    check(call_plugin("aggregate decode", def_.decode, user_->user, state_, static_cast<const qrs_value*>(&q), err.get()),
          err, "aggregate " + name_ + " decode");
  }

 private:
  std::shared_ptr<PluginUser> user_;
  qrs_aggregate_function_def def_;
  std::string name_;
  void* state_ = nullptr;
};

}  // namespace

// ---- module ----

std::shared_ptr<PluginModule> PluginModule::make(std::string name, qrs_module module,
                                                 PluginLibrary library) {
  return std::shared_ptr<PluginModule>(
      new PluginModule(std::move(name), module, std::move(library)));
}

PluginModule::PluginModule(std::string name, qrs_module module, PluginLibrary library)
    : library_(std::move(library)),
      name_(std::move(name)),
      self_(module.self),
      vt_(copy_struct(module.vt)) {
  if (vt_.capabilities) {
    qrs_module_capabilities c{};
    c.struct_size = sizeof(c);
    call_plugin_void("capabilities", vt_.capabilities, self_, &c);
    caps_.persistent = c.persistent != 0;
    caps_.scan_snapshot_isolation = c.scan_snapshot_isolation != 0;
    caps_.committed_reads = c.committed_reads != 0;
    caps_.backing_host = c.backing_host != 0;  // zero from a plugin built before 1.5
    caps_.access_forms = c.access_forms != 0;  // zero from a plugin built before 1.11
  }
}

PluginModule::~PluginModule() {
  if (vt_.release) call_plugin_void("module release", vt_.release, self_);
}

std::unique_ptr<VtabTable> PluginModule::open(bool create, const TableSchema& schema) {
  auto slot = create ? vt_.create : vt_.connect;
  const char* what = create ? "create" : "connect";
  if (!slot)
    throw Error(StatusCode::kUnsupported, "module '" + name_ + "' does not support " + what);
  SchemaView view(schema);
  qrs_table out{};
  ErrorBox err;
  check(call_plugin(what, slot, self_, view.get(), &out, err.get()), err,
        "module '" + name_ + "' " + what + " of table " + schema.name);
  auto handle = std::make_shared<PluginTableHandle>();
  handle->module = shared_from_this();
  handle->self = out.self;
  handle->vt = copy_struct(out.vt);  // out.vt == nullptr leaves every slot empty
  if (!handle->vt.open_cursor || !handle->vt.update)
    plugin_bug("module '" + name_ + "' returned a table without open_cursor/update");
  return std::make_unique<PluginTable>(std::move(handle));
}

std::unique_ptr<VtabTable> PluginModule::create(const TableSchema& schema) {
  return open(true, schema);
}

std::unique_ptr<VtabTable> PluginModule::connect(const TableSchema& schema) {
  return open(false, schema);
}

void PluginModule::destroy(const std::string& schema_name, const std::string& table_name) {
  if (!vt_.destroy) return;  // nothing to destroy beyond the connected instances
  ErrorBox err;
  check(call_plugin("destroy", vt_.destroy, self_, to_qrs(schema_name), to_qrs(table_name), err.get()), err,
        "module '" + name_ + "' destroy of table " + table_name);
}

std::string module_open_context(std::string_view module, std::string_view database) {
  return "module '" + std::string(module) + "' open of database " + std::string(database);
}

std::shared_ptr<VtabModule> PluginModule::open_database(const std::string& database_name,
                                                        const std::vector<std::pair<std::string, Value>>& options) {
  if (!vt_.open_database) return nullptr;
  std::vector<qrs_option> opts;
  opts.reserve(options.size());
  for (const auto& [k, v] : options) opts.push_back(qrs_option{to_qrs(k), to_qrs(v)});
  qrs_module out{};
  ErrorBox err;
  // Every error says which module and database it is about, so that the host can name
  // where that module is configured (config/host_setup.h, attach_config_origin).
  const std::string context = module_open_context(name_, database_name);
  try {
    qrs_status st = call_plugin("open_database", vt_.open_database, self_, to_qrs(database_name), opts.data(),
                                static_cast<uint32_t>(opts.size()), &out, err.get());
    if (st == QRS_UNSUPPORTED) return nullptr;
    check(st, err, context);
  } catch (const Error& e) {
    if (e.raw_message().rfind(context, 0) == 0) throw;
    throw Error(e.code(), context + ": " + e.raw_message(), e.site());
  }
  if (!out.vt) plugin_bug("module '" + name_ + "' opened database " + database_name + " without a vtable");
  return make(name_, out, library_);
}

std::optional<uint32_t> PluginModule::notify_lens_deployment(const LensDeploymentSnapshot& snap) {
  if (!vt_.notify_lens_deployment) return std::nullopt;
  // The C form borrows the snapshot's strings; the arrays live until the call returns.
  std::vector<qrs_lens_table> tables;
  std::vector<std::vector<qrs_string>> columns(snap.tables.size());
  std::vector<std::vector<qrs_lens_relation>> relations(snap.tables.size());
  std::vector<std::vector<std::vector<qrs_lens_column_backing>>> backings(snap.tables.size());
  for (size_t t = 0; t < snap.tables.size(); ++t) {
    const LensTableSnapshot& st = snap.tables[t];
    for (const std::string& c : st.logical_columns) columns[t].push_back(to_qrs(c));
    backings[t].resize(st.relations.size());
    for (size_t r = 0; r < st.relations.size(); ++r) {
      for (const auto& [b, l] : st.relations[r].columns) backings[t][r].push_back({to_qrs(b), to_qrs(l)});
      relations[t].push_back({to_qrs(st.relations[r].schema), to_qrs(st.relations[r].table), backings[t][r].data(),
                              static_cast<uint32_t>(backings[t][r].size())});
    }
    tables.push_back({to_qrs(st.logical_table), to_qrs(st.get_body), columns[t].data(),
                      static_cast<uint32_t>(columns[t].size()), relations[t].data(),
                      static_cast<uint32_t>(relations[t].size())});
  }
  qrs_lens_snapshot c{};
  c.struct_size = sizeof(c);
  c.logical_schema = to_qrs(snap.logical_schema);
  c.basis_schema = to_qrs(snap.basis_schema);
  c.basis_hash = to_qrs(snap.basis_hash);
  c.tables = tables.data();
  c.table_count = static_cast<uint32_t>(tables.size());
  uint32_t backed = 0;
  ErrorBox err;
  qrs_status st = call_plugin("notify_lens_deployment", vt_.notify_lens_deployment, self_,
                              static_cast<const qrs_lens_snapshot*>(&c), &backed, err.get());
  if (st == QRS_UNSUPPORTED) return std::nullopt;
  check(st, err, "module '" + name_ + "' lens deployment notification for logical schema '" + snap.logical_schema + "'");
  return backed;
}

bool PluginModule::backup(const std::string& dest_dir,
                          const std::function<bool(uint64_t bytes_done, uint64_t bytes_total)>& progress) {
  if (!vt_.backup) return false;
  using Progress = std::function<bool(uint64_t, uint64_t)>;
  auto report = [](void* c, uint64_t done, uint64_t total) -> qrs_status {
    const Progress& p = *static_cast<const Progress*>(c);
    if (!p) return QRS_OK;
    try {
      return p(done, total) ? QRS_OK : QRS_INTERRUPT;
    } catch (...) {
      return QRS_INTERRUPT;
    }
  };
  ErrorBox err;
  qrs_status st = call_plugin("backup", vt_.backup, self_, to_qrs(dest_dir),
                              const_cast<void*>(static_cast<const void*>(&progress)),
                              static_cast<qrs_status (*)(void*, uint64_t, uint64_t)>(report), err.get());
  if (st == QRS_UNSUPPORTED) return false;
  check(st, err, "module '" + name_ + "' backup into '" + dest_dir + "'");
  return true;
}

std::optional<std::string> PluginModule::replication(const std::string& op, const std::string& args) {
  if (!vt_.replication) return std::nullopt;
  std::string out;
  auto reply = [](void* ctx, qrs_string json) {
    static_cast<std::string*>(ctx)->assign(json.data ? json.data : "", json.len);
  };
  ErrorBox err;
  qrs_status st = call_plugin("replication", vt_.replication, self_, to_qrs(op), to_qrs(args), &out,
                              static_cast<void (*)(void*, qrs_string)>(reply), err.get());
  if (st == QRS_UNSUPPORTED) return std::nullopt;
  check(st, err, "module '" + name_ + "' replication '" + op + "'");
  return out;
}

std::optional<std::vector<MappingAdvertisement>> PluginModule::mapping_advertisements(
    const std::string& basis_schema, const std::vector<const TableSchema*>& tables) {
  if (!vt_.mapping_advertisements) return std::nullopt;
  // The C form borrows the schemas and tag values; they live until the call returns.
  std::vector<std::unique_ptr<SchemaView>> views;
  std::vector<std::vector<Value>> values(tables.size());
  std::vector<std::vector<qrs_option>> tags(tables.size());
  std::vector<qrs_basis_table> in;
  for (size_t i = 0; i < tables.size(); ++i) {
    views.push_back(std::make_unique<SchemaView>(*tables[i]));
    for (const auto& [k, v] : tables[i]->tags.entries()) values[i].push_back(Value::Text(tag_text(v)));
    size_t j = 0;
    for (const auto& [k, v] : tables[i]->tags.entries()) tags[i].push_back({to_qrs(k), to_qrs(values[i][j++])});
    qrs_basis_table b{};
    b.struct_size = sizeof(b);
    b.schema = views.back()->get();
    b.tags = tags[i].data();
    b.tag_count = static_cast<uint32_t>(tags[i].size());
    in.push_back(b);
  }
  struct Sink {
    std::vector<MappingAdvertisement> ads;
    std::string error;
  } sink;
  auto emit = [](void* ctx, const qrs_mapping_advertisement* c) -> qrs_status {
    auto& out = *static_cast<Sink*>(ctx);
    auto str = [](qrs_string s) { return s.data ? std::string(s.data, s.len) : std::string(); };
    if (!c || c->struct_size < offsetof(qrs_mapping_advertisement, access_count) + sizeof(uint32_t) ||
        (c->member_count && !c->members)) {
      out.error = "a malformed qrs_mapping_advertisement";
      return QRS_MISUSE;
    }
    MappingAdvertisement ad;
    ad.id = str(c->id);
    ad.logical_table = str(c->logical_table);
    ad.auxiliary = c->role == QRS_AD_AUXILIARY_ACCESS;
    ad.anchor = str(c->anchor_relation_id);
    ad.surrogate = c->key_kind == QRS_AD_KEY_SURROGATE;
    if (c->role != QRS_AD_PRIMARY_STORAGE && c->role != QRS_AD_AUXILIARY_ACCESS) {
      out.error = "advertisement '" + ad.id + "' has role " + std::to_string(c->role);
      return QRS_MISUSE;
    }
    if (c->key_kind != QRS_AD_KEY_LOGICAL_TUPLE && c->key_kind != QRS_AD_KEY_SURROGATE) {
      out.error = "advertisement '" + ad.id + "' has key kind " + std::to_string(c->key_kind);
      return QRS_MISUSE;
    }
    const size_t stride = c->member_count ? c->members[0].struct_size : 0;
    if (c->member_count && stride < offsetof(qrs_ad_member, key_column_count) + sizeof(uint32_t)) {
      out.error = "advertisement '" + ad.id + "' has members of an unknown size";
      return QRS_MISUSE;
    }
    for (uint32_t i = 0; i < c->member_count; ++i) {
      const auto& m = *reinterpret_cast<const qrs_ad_member*>(reinterpret_cast<const char*>(c->members) + i * stride);
      if ((m.column_count && !m.columns) || (m.key_column_count && !m.key_columns)) {
        out.error = "advertisement '" + ad.id + "' has a member with null arrays";
        return QRS_MISUSE;
      }
      AdvertisedMember am;
      am.relation_id = str(m.relation_id);
      am.schema_name = str(m.schema_name);
      am.table_name = str(m.table_name);
      am.optional = m.presence == QRS_AD_OPTIONAL;
      for (uint32_t k = 0; k < m.column_count; ++k)
        am.columns.emplace_back(str(m.columns[k].logical_column), str(m.columns[k].basis_column));
      if (m.pivot) am.pivot = AdvertisedMember::Pivot{str(m.pivot->entity_column), str(m.pivot->attribute_column),
                                                      str(m.pivot->value_column)};
      for (uint32_t k = 0; k < m.key_column_count; ++k) am.key_columns.push_back(str(m.key_columns[k]));
      ad.members.push_back(std::move(am));
    }
    if (c->access_count && !c->access) {
      out.error = "advertisement '" + ad.id + "' has a null access array";
      return QRS_MISUSE;
    }
    for (uint32_t i = 0; i < c->access_count; ++i) {
      const qrs_ad_access& a = c->access[i];
      if ((a.column_count && !a.columns) || (a.form_count && !a.forms)) {
        out.error = "advertisement '" + ad.id + "' has an access shape with null arrays";
        return QRS_MISUSE;
      }
      MappingAdvertisement::Access acc;
      for (uint32_t k = 0; k < a.column_count; ++k) acc.columns.push_back(str(a.columns[k]));
      for (uint32_t k = 0; k < a.form_count; ++k) acc.forms.push_back(str(a.forms[k]));
      ad.access.push_back(std::move(acc));
    }
    out.ads.push_back(std::move(ad));
    return QRS_OK;
  };
  ErrorBox err;
  qrs_status st = call_plugin("mapping_advertisements", vt_.mapping_advertisements, self_, to_qrs(basis_schema),
                              static_cast<const qrs_basis_table*>(in.data()), static_cast<uint32_t>(in.size()),
                              static_cast<void*>(&sink),
                              static_cast<qrs_status (*)(void*, const qrs_mapping_advertisement*)>(emit), err.get());
  if (st == QRS_UNSUPPORTED) return std::nullopt;
  if (!sink.error.empty()) plugin_bug("module '" + name_ + "' emitted " + sink.error);
  check(st, err, "module '" + name_ + "' mapping advertisements for basis schema '" + basis_schema + "'");
  for (auto& ad : sink.ads) ad.module = name_;
  return std::move(sink.ads);
}

bool PluginModule::catalog_put(const std::string& key, const std::string& text) {
  if (!vt_.catalog_put) return false;
  ErrorBox err;
  qrs_status st = call_plugin("catalog_put", vt_.catalog_put, self_, to_qrs(key), to_qrs(text), err.get());
  if (st == QRS_UNSUPPORTED) return false;
  check(st, err, "module '" + name_ + "' catalog write of " + key);
  return true;
}

bool PluginModule::catalog_list(const std::function<void(const std::string& key, const std::string& text)>& emit) {
  if (!vt_.catalog_list) return false;
  struct Ctx {
    const std::function<void(const std::string&, const std::string&)>* emit;
    std::exception_ptr failure;
  } ctx{&emit, nullptr};
  auto cb = [](void* c, qrs_string key, qrs_string text) -> qrs_status {
    auto* x = static_cast<Ctx*>(c);
    try {
      (*x->emit)(std::string(key.data ? key.data : "", key.len), std::string(text.data ? text.data : "", text.len));
      return QRS_OK;
    } catch (...) {
      x->failure = std::current_exception();
      return QRS_ERROR;
    }
  };
  ErrorBox err;
  qrs_status st = call_plugin("catalog_list", vt_.catalog_list, self_, static_cast<void*>(&ctx), +cb, err.get());
  if (ctx.failure) std::rethrow_exception(ctx.failure);
  if (st == QRS_UNSUPPORTED) return false;
  check(st, err, "module '" + name_ + "' catalog listing");
  return true;
}

bool PluginModule::schema_begin() {
  if (!vt_.schema_begin || !vt_.schema_commit || !vt_.schema_rollback) return false;
  ErrorBox err;
  qrs_status st = call_plugin("schema_begin", vt_.schema_begin, self_, err.get());
  if (st == QRS_UNSUPPORTED) return false;
  check(st, err, "module '" + name_ + "' schema-change scope");
  return true;
}

void PluginModule::schema_commit() {
  ErrorBox err;
  check(call_plugin("schema_commit", vt_.schema_commit, self_, err.get()), err,
        "module '" + name_ + "' schema-change commit");
}

void PluginModule::schema_rollback() noexcept {
  try {
    call_plugin_void("schema_rollback", vt_.schema_rollback, self_);
  } catch (const std::exception& e) {
    spdlog::error("module '{}': schema-change rollback failed: {}", name_, e.what());
  }
}

// ---- table ----

PlanResult PluginTable::best_access_plan(const PlanRequest& req) {
  PlanResult result;
  result.handled.assign(req.filters.size(), false);
  auto full_scan = [&] {
    result.cost = 1e6;
    result.rows = req.estimated_rows >= 0 ? req.estimated_rows : 1e6;
    result.explain = "full scan";
    return result;
  };
  if (!h_->vt.best_access_plan) return full_scan();

  std::vector<FilterSpec> restated;
  if (has_big_value(req.filters)) {
    restated = req.filters;
    for (FilterSpec& f : restated) to_module_filter(f, /*for_costing=*/true);
  }
  FilterViews fv(restated.empty() ? req.filters : restated, req.ordering, false);
  qrs_plan_request q{};
  q.struct_size = sizeof(q);
  q.filters = fv.filters();
  q.filter_count = fv.filter_count();
  q.ordering = fv.ordering();
  q.ordering_count = fv.ordering_count();
  q.limit = req.limit;
  q.offset = req.offset;
  q.estimated_rows = req.estimated_rows;
  std::vector<uint8_t> handled(req.filters.size() + 1, 0);  // +1: never a null pointer
  qrs_plan_result out{};
  out.struct_size = sizeof(out);
  out.handled_filters = handled.data();
  ErrorBox err;
  qrs_status st = call_plugin("best_access_plan", h_->vt.best_access_plan, h_->self, &q, &out, err.get());
  if (st == QRS_UNSUPPORTED) return full_scan();
  check(st, err, "best_access_plan");

  for (size_t i = 0; i < req.filters.size(); ++i) result.handled[i] = handled[i] != 0;
  result.cost = out.cost;
  result.rows = out.rows;
  result.provides_ordering = out.provides_ordering != 0;
  result.plan_id = out.plan_id;
  result.explain.assign(out.explain, strnlen(out.explain, sizeof(out.explain)));
  return result;
}

std::unique_ptr<VtabCursor> PluginTable::open_cursor(const ScanArgs& args) {
  std::vector<FilterSpec> restated;
  if (has_big_value(args.filters)) {
    restated = args.filters;
    for (FilterSpec& f : restated)
      if (!to_module_filter(f, /*for_costing=*/false)) return std::make_unique<EmptyCursor>();
  }
  FilterViews fv(restated.empty() ? args.filters : restated, args.ordering, true);
  absl::InlinedVector<uint8_t, 16> handled(args.filters.size() + 1, 0);
  for (size_t i = 0; i < args.filters.size() && i < args.handled.size(); ++i)
    handled[i] = args.handled[i];
  qrs_scan_args q{};
  q.struct_size = sizeof(q);
  q.plan_id = args.plan_id;
  q.filters = fv.filters();
  q.filter_count = fv.filter_count();
  q.handled = handled.data();
  q.provides_ordering = args.provides_ordering;
  q.ordering = fv.ordering();
  q.ordering_count = fv.ordering_count();
  q.limit = args.limit;
  q.read_committed = args.read_committed ? 1 : 0;
  qrs_cursor out{};
  ErrorBox err;
  check(call_plugin("open_cursor", h_->vt.open_cursor, h_->self, &q, &out, err.get()), err, "open_cursor");
  return std::make_unique<PluginCursor>(h_, out);
}

UpdateResult PluginTable::update(RowOp op, std::span<const Value> values,
                                 std::span<const Value> old_key, ConflictAction on_conflict) {
  // Inline buffers: a row write converts its cells without a heap allocation.
  absl::InlinedVector<qrs_value, 8> qvalues, qkey;
  for (const Value& v : values) qvalues.push_back(to_qrs(v));
  for (const Value& v : old_key) qkey.push_back(to_qrs(v));
  qrs_update_args a{};
  a.struct_size = sizeof(a);
  a.op = static_cast<uint32_t>(op);
  a.on_conflict = static_cast<uint32_t>(on_conflict);
  a.values = {qvalues.data(), static_cast<uint32_t>(qvalues.size())};
  a.old_key = {qkey.data(), static_cast<uint32_t>(qkey.size())};
  qrs_update_result out{};
  out.struct_size = sizeof(out);
  ErrorBox err;
  check(call_plugin("update", h_->vt.update, h_->self, &a, &out, err.get()), err, "update");

  UpdateResult r;
  switch (out.outcome) {
    case QRS_UPDATE_OK: r.outcome = UpdateResult::Outcome::kOk; break;
    case QRS_UPDATE_NOOP: r.outcome = UpdateResult::Outcome::kNoop; break;
    case QRS_UPDATE_CONSTRAINT: r.outcome = UpdateResult::Outcome::kConstraint; break;
    default: plugin_bug("update returned unknown outcome " + std::to_string(out.outcome));
  }
  if (r.outcome == UpdateResult::Outcome::kConstraint)
    r.constraint_kind = static_cast<qrs_constraint_kind>(out.constraint_kind);
  // The stored row usually equals the row written (already coerced by the engine): then
  // it is not copied back, and an absent row in an OK result means "as written".
  // A module may also leave `row` empty for "as written" (abi.h).
  if (op != RowOp::kDelete && r.outcome == UpdateResult::Outcome::kOk && out.row.count == 0 && !out.row.cells) {
    r.row_as_written = true;
  } else if (op != RowOp::kDelete && out.row.count == values.size() && out.row.cells &&
      same_row(out.row.cells, values)) {
    r.row.reset();
    r.row_as_written = true;
  } else {
    r.row = optional_row(out.row);
  }
  r.replaced_row = optional_row(out.replaced_row);
  r.existing_row = optional_row(out.existing_row);
  return r;
}

std::unique_ptr<VtabConnection> PluginTable::open_connection() {
  if (!h_->vt.open_connection) return nullptr;
  qrs_connection out{};
  ErrorBox err;
  qrs_status st = call_plugin("open_connection", h_->vt.open_connection, h_->self, &out, err.get());
  if (st == QRS_UNSUPPORTED) return nullptr;
  check(st, err, "open_connection");
  return std::make_unique<PluginConnection>(h_, out);
}

namespace {

// The host side of a qrs_schema_change: the engine's callbacks behind the C slots. A value
// handed to the plugin stays in `last` until the next callback.
struct ChangeCallbacks {
  const SchemaChange* change;
  Value last;

  template <class F>
  static qrs_status run(qrs_error* err, F&& f) noexcept {
    auto fail = [err](qrs_status st, const std::string& m) {
      if (err && err->set_message) err->set_message(err, m.data(), m.size());
      return st;
    };
    try {
      return f();
    } catch (const Error& e) {
      auto st = static_cast<qrs_status>(e.code());
      return fail(st == QRS_OK ? QRS_ERROR : st, e.raw_message());
    } catch (const std::exception& e) {
      return fail(QRS_INTERNAL, e.what());
    } catch (...) {
      return fail(QRS_INTERNAL, "unknown exception");
    }
  }
  static qrs_status fill(void* ctx, const qrs_row* old_row, qrs_value* out, qrs_error* err) {
    auto* self = static_cast<ChangeCallbacks*>(ctx);
    return run(err, [&] {
      Row row = copy_row(old_row->cells, old_row->count);
      self->last = self->change->fill ? self->change->fill(row) : Value();
      *out = to_qrs(self->last);
      return QRS_OK;
    });
  }
  static qrs_status convert(void* ctx, const qrs_value* in, qrs_value* out, qrs_error* err) {
    auto* self = static_cast<ChangeCallbacks*>(ctx);
    return run(err, [&] {
      Value v = from_qrs(*in);
      self->last = self->change->convert ? self->change->convert(v) : std::move(v);
      *out = to_qrs(self->last);
      return QRS_OK;
    });
  }
};

}  // namespace

bool PluginTable::alter_table(const SchemaChange& change, const TableSchema& new_schema) {
  if (!h_->vt.alter_table) return false;
  ChangeCallbacks cb{&change, Value()};
  qrs_schema_change c{};
  c.struct_size = sizeof(c);
  c.kind = change.kind;
  c.column_index = change.column < 0 ? 0 : static_cast<uint32_t>(change.column);
  c.name = to_qrs(change.name);
  c.new_name = to_qrs(change.new_name);
  c.ctx = &cb;
  c.fill = &ChangeCallbacks::fill;
  c.convert = &ChangeCallbacks::convert;
  SchemaView schema(new_schema);
  ErrorBox err;
  qrs_status st = call_plugin("alter_table", h_->vt.alter_table, h_->self, &c, schema.get(), err.get());
  if (st == QRS_UNSUPPORTED) return false;
  check(st, err, "alter_table");
  return true;
}

LookupStatus PluginTable::lookup(std::span<const Value> key, Row& out) {
  if (!h_->vt.lookup || key.empty()) return LookupStatus::kUnsupported;
  const uint64_t length_bit = key.size() <= 64 ? uint64_t{1} << (key.size() - 1) : 0;
  if (refused_lookup_lengths_.load(std::memory_order_relaxed) & length_bit) return LookupStatus::kUnsupported;
  absl::InlinedVector<qrs_value, 4> cells;
  for (const Value& v : key) {
    if (v.type() == ValueType::kBigInt) return LookupStatus::kUnsupported;
    cells.push_back(to_qrs(v));
  }
  qrs_row k{cells.data(), static_cast<uint32_t>(cells.size())};
  qrs_row row{};
  ErrorBox err;
  qrs_status st = call_plugin("lookup", h_->vt.lookup, h_->self, &k, &row, err.get());
  if (st == QRS_NOTFOUND) return LookupStatus::kNotFound;
  if (st == QRS_UNSUPPORTED) {
    refused_lookup_lengths_.fetch_or(length_bit, std::memory_order_relaxed);
    return LookupStatus::kUnsupported;
  }
  check(st, err, "lookup");
  if (row.count > 0 && !row.cells) plugin_bug("lookup returned a row without cells");
  assign_row(out, row.cells, row.count);
  return LookupStatus::kFound;
}

namespace {

// The host side of a qrs_change_sink / qrs_row_source: engine code behind a C callback.
// An exception must not cross into the plugin, so it is kept here and rethrown once the
// plugin call returned.
struct BackingCallbacks {
  std::exception_ptr failure;

  template <class F>
  qrs_status run(qrs_error* err, F&& f) noexcept {
    try {
      return f();
    } catch (...) {
      failure = std::current_exception();
      std::string m = "the host failed";
      qrs_status st = QRS_ERROR;
      try {
        throw;
      } catch (const Error& e) {
        m = e.raw_message();
        st = static_cast<qrs_status>(e.code());
        if (st == QRS_OK || st == QRS_ROW || st == QRS_DONE) st = QRS_ERROR;
      } catch (const std::exception& e) {
        m = e.what();
        st = QRS_INTERNAL;
      } catch (...) {
        st = QRS_INTERNAL;
      }
      if (err && err->set_message) err->set_message(err, m.data(), m.size());
      return st;
    }
  }
  // After the plugin call: the host's own exception first, then the plugin's status.
  void finish(qrs_status st, const ErrorBox& box, std::string_view what) {
    if (failure) std::rethrow_exception(failure);
    check(st, box, what);
  }
};

struct SinkCtx : BackingCallbacks {
  std::vector<BackingChange>* out;
  static qrs_status emit(void* ctx, uint32_t op, const qrs_row* old_row, const qrs_row* new_row) {
    auto* self = static_cast<SinkCtx*>(ctx);
    return self->run(nullptr, [&] {
      if (op < QRS_ROW_INSERT || op > QRS_ROW_DELETE) plugin_bug("apply_maintenance reported unknown row op " + std::to_string(op));
      BackingChange c;
      c.op = static_cast<RowOp>(op);
      bool want_old = c.op != RowOp::kInsert, want_new = c.op != RowOp::kDelete;
      if (want_old != (old_row != nullptr) || want_new != (new_row != nullptr))
        plugin_bug("apply_maintenance reported a change without the rows its op needs");
      for (const qrs_row* r : {old_row, new_row})
        if (r && r->count > 0 && !r->cells) plugin_bug("apply_maintenance reported a row without cells");
      if (old_row) c.old_row = copy_row(old_row->cells, old_row->count);
      if (new_row) c.new_row = copy_row(new_row->cells, new_row->count);
      self->out->push_back(std::move(c));
      return QRS_OK;
    });
  }
};

struct SourceCtx : BackingCallbacks {
  const std::function<bool(Row&)>* next;
  Row row;                       // the row handed out last (its bytes are borrowed)
  std::vector<qrs_value> cells;  // its C views
  static qrs_status pull(void* ctx, qrs_row* out, qrs_error* err) {
    auto* self = static_cast<SourceCtx*>(ctx);
    return self->run(err, [&] {
      self->row.clear();
      if (!(*self->next)(self->row)) return QRS_DONE;
      self->cells.clear();
      for (const Value& v : self->row) self->cells.push_back(to_qrs(v));
      *out = qrs_row{self->cells.data(), static_cast<uint32_t>(self->cells.size())};
      return QRS_ROW;
    });
  }
};

}  // namespace

bool PluginTable::apply_maintenance(std::span<const MaintenanceOp> ops, std::vector<BackingChange>& out) {
  if (!h_->vt.apply_maintenance) return false;
  std::vector<std::vector<qrs_value>> cells(ops.size());
  std::vector<qrs_maintenance_op> qops(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    cells[i] = to_qrs(std::span<const Value>(ops[i].row));
    qops[i].struct_size = sizeof(qrs_maintenance_op);
    qops[i].kind = static_cast<uint32_t>(ops[i].kind);
    qops[i].row = {cells[i].data(), static_cast<uint32_t>(cells[i].size())};
  }
  SinkCtx ctx;
  ctx.out = &out;
  qrs_change_sink sink{sizeof(qrs_change_sink), &ctx, &SinkCtx::emit};
  ErrorBox err;
  qrs_status st = call_plugin("apply_maintenance", h_->vt.apply_maintenance, h_->self, qops.data(),
                              static_cast<uint32_t>(qops.size()), &sink, err.get());
  if (st == QRS_UNSUPPORTED && !ctx.failure) return false;
  ctx.finish(st, err, "apply_maintenance");
  return true;
}

bool PluginTable::replace_contents(const std::function<bool(Row&)>& next) {
  if (!h_->vt.replace_contents) return false;
  SourceCtx ctx;
  ctx.next = &next;
  qrs_row_source source{sizeof(qrs_row_source), &ctx, &SourceCtx::pull};
  ErrorBox err;
  qrs_status st = call_plugin("replace_contents", h_->vt.replace_contents, h_->self, &source, err.get());
  if (st == QRS_UNSUPPORTED && !ctx.failure) return false;
  ctx.finish(st, err, "replace_contents");
  return true;
}

// ---- cursor ----

PluginCursor::PluginCursor(std::shared_ptr<PluginTableHandle> table, qrs_cursor cursor)
    : table_(std::move(table)), self_(cursor.self), vt_(copy_struct(cursor.vt)) {
  if (!vt_.next_batch) {
    if (vt_.close) call_plugin_void("cursor close", vt_.close, self_);
    plugin_bug("open_cursor returned a cursor without next_batch");
  }
}

PluginCursor::~PluginCursor() {
  if (vt_.close) call_plugin_void("cursor close", vt_.close, self_);
}

size_t PluginCursor::next_batch(std::vector<Row>& rows) {
  if (done_) return 0;
  qrs_row_batch b{};
  b.struct_size = sizeof(b);
  ErrorBox err;
  qrs_status st = call_plugin("next_batch", vt_.next_batch, self_, &b, err.get());
  if (st != QRS_ROW && st != QRS_DONE && st != QRS_OK) err.raise(st, "next_batch");
  if (b.row_count > 0 && b.cells == nullptr) plugin_bug("next_batch returned rows without cells");
  if (rows.size() < b.row_count) rows.resize(b.row_count);
  for (uint32_t r = 0; r < b.row_count; ++r)
    assign_row(rows[r], b.cells + size_t(r) * b.column_count, b.column_count);
  done_ = st == QRS_DONE || b.row_count == 0;  // rows that came with DONE are still returned
  return b.row_count;
}

// ---- connection ----

PluginConnection::PluginConnection(std::shared_ptr<PluginTableHandle> table, qrs_connection conn)
    : table_(std::move(table)), self_(conn.self), vt_(copy_struct(conn.vt)) {}

PluginConnection::~PluginConnection() {
  if (vt_.close) call_plugin_void("connection close", vt_.close, self_);
}

void PluginConnection::begin() { call_slot(vt_.begin, self_, "begin"); }
void PluginConnection::commit() { call_slot(vt_.commit, self_, "commit"); }
void PluginConnection::rollback() { call_slot(vt_.rollback, self_, "rollback"); }
void PluginConnection::savepoint(uint32_t depth) {
  call_slot(vt_.savepoint, self_, "savepoint", depth);
}
void PluginConnection::release_savepoint(uint32_t depth) {
  call_slot(vt_.release_savepoint, self_, "release_savepoint", depth);
}
void PluginConnection::rollback_to_savepoint(uint32_t depth) {
  call_slot(vt_.rollback_to_savepoint, self_, "rollback_to_savepoint", depth);
}

// ---- functions and collations ----

ScalarFunction make_plugin_scalar(const qrs_scalar_function_def& def, PluginLibrary library) {
  std::string name = fold(to_view(def.name), ::tolower);
  require(!name.empty(), "function", name, "empty name");
  require(def.call != nullptr, "function", name, "no call callback");
  auto user = std::make_shared<PluginUser>(std::move(library), def.user, def.release_user);
  ScalarFunction fn;
  fn.name = name;
  fn.num_args = def.num_args;
  fn.flags = def.flags;
  if (def.return_type <= QRS_LT_TIMESPAN) fn.return_type = static_cast<qrs_logical_type>(def.return_type);
  // 1.8: the invertibility profile (a shorter struct was zero-filled: opaque).
  switch (def.invertibility) {
    case QRS_INVERT_OPAQUE: break;
    case QRS_INVERT_PASSTHROUGH:
    case QRS_INVERT_INVERSE: {
      const bool inverse = def.invertibility == QRS_INVERT_INVERSE;
      require(def.flags & QRS_FUNC_DETERMINISTIC, "function", name,
              "declares an invertibility profile but is not deterministic");
      require(def.invert_arg >= 0 && (def.num_args < 0 || def.invert_arg < def.num_args), "function", name,
              "invert_arg " + std::to_string(def.invert_arg) + " is not one of its arguments");
      fn.invertibility.kind = inverse ? Invertibility::Kind::kInverse : Invertibility::Kind::kPassthrough;
      fn.invertibility.arg = def.invert_arg;
      if (inverse) {
        fn.invertibility.inverse = fold(to_view(def.inverse), ::tolower);
        require(!fn.invertibility.inverse.empty(), "function", name, "an INVERSE profile names no inverse function");
        require(fn.invertibility.inverse != name || def.num_args == 1, "function", name,
                "is declared its own inverse with more than one argument");
      }
      break;
    }
    default:
      require(false, "function", name, "unknown invertibility " + std::to_string(def.invertibility));
  }
  // 1.11: an access-form recognizer (a shorter struct was zero-filled: none).
  fn.access_form = fold(to_view(def.access_form), ::tolower);
  if (!fn.access_form.empty()) {
    auto is_arg = [&](int32_t a) { return a >= 0 && (def.num_args < 0 || a < def.num_args); };
    require(is_arg(def.form_column_arg) && is_arg(def.form_value_arg) && def.form_column_arg != def.form_value_arg,
            "function", name, "access form '" + fn.access_form + "' names arguments " +
            std::to_string(def.form_column_arg) + " and " + std::to_string(def.form_value_arg) +
            ", which are not two distinct arguments of it");
    require(def.flags & QRS_FUNC_DETERMINISTIC, "function", name,
            "declares access form '" + fn.access_form + "' but is not deterministic");
    fn.form_column_arg = def.form_column_arg;
    fn.form_value_arg = def.form_value_arg;
  }
  fn.call = [user, call = def.call, what = "function " + name](std::span<const Value> args) {
    auto qargs = to_qrs(args);
    ResultBox out;
    ErrorBox err;
    check(call_plugin(what, call, user->user, qargs.data(), static_cast<uint32_t>(qargs.size()), out.get(), err.get()),
          err, what);
    return out.take();
  };
  fn.keepalive = user;
  return fn;
}

AggregateFunction make_plugin_aggregate(const qrs_aggregate_function_def& def,
                                        PluginLibrary library) {
  std::string name = fold(to_view(def.name), ::tolower);
  require(!name.empty(), "aggregate", name, "empty name");
  require(def.init && def.step && def.final, "aggregate", name, "missing init/step/final callback");
  auto user = std::make_shared<PluginUser>(std::move(library), def.user, def.release_user);
  AggregateFunction fn;
  fn.name = name;
  fn.num_args = def.num_args;
  fn.flags = def.flags;
  fn.make_state = [user, def, name]() -> std::unique_ptr<AggregateState> {
    return std::make_unique<PluginAggregateState>(user, def, name);
  };
  fn.keepalive = user;
  // SDK 1.9: the algebra (a 1.8 struct, copied host-sized, has none).
  require(def.merge || (!def.negate && !def.decode), "aggregate", name, "negate and decode need merge");
  require(def.decode || !(def.algebra_flags & QRS_AGG_DECODE_EXACT), "aggregate", name,
          "QRS_AGG_DECODE_EXACT needs decode");
  fn.algebra.merge = def.merge != nullptr;
  fn.algebra.negate = def.negate != nullptr;
  fn.algebra.decode = def.decode != nullptr;
  fn.algebra.decode_exact = (def.algebra_flags & QRS_AGG_DECODE_EXACT) != 0;
  return fn;
}

std::shared_ptr<const Collation> make_plugin_collation(const qrs_collation_def& def,
                                                       PluginLibrary library) {
  std::string name = fold(to_view(def.name), ::toupper);
  require(!name.empty(), "collation", name, "empty name");
  require(def.compare != nullptr, "collation", name, "no compare callback");
  auto user = std::make_shared<PluginUser>(std::move(library), def.user, def.release_user);
  return std::make_shared<const Collation>(name, def.compare, def.user, def.flags, user);
}

}  // namespace quereus
