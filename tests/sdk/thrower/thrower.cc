// tests/sdk/thrower — a test plugin that throws on demand inside every kind of plugin
// call, built with the SDK only. tests/unit/plugin_exceptions_test.cc drives it through
// SQL and checks that each exception becomes an error status carrying its message, and
// that the host keeps working.
//
// A table picks the call that throws and what is thrown through its module options:
//
//   create table t (id integer primary key, v text)
//     using thrower(throw_in = 'insert', throw_what = 'std', message = 'kaboom');
//
//   throw_in    create | destroy | plan | open_cursor | next_batch | insert | update |
//               delete | open_connection | begin | commit | rollback | savepoint |
//               release_savepoint | rollback_to_savepoint | alter_table | lookup
//   throw_what  error (sdk::Error, QRS_IOERR) | std (std::runtime_error) | bad_alloc |
//               string (a std::string) | cstr (a const char*) | int | custom (a class not
//               derived from std::exception)
//   message     the text thrown (default "thrower: boom in <call>")
//
// The same options under a database's module_options for `thrower` make open_database
// throw (throw_in = 'open_database').
//
// Otherwise the table is an ordinary (non-transactional) table keyed by its first column.
// Functions: thrower_fail(what, message) throws; thrower_agg(mode) throws in step when a
// row's mode is 'step', in final when some row's mode was 'final'. The collation THROWY
// throws on every comparison. Plugin settings: throw_in_entry (a throw_what: the register
// function throws it), throw_in_capabilities (true: Module::capabilities throws).
#include <quereus/sdk.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern const char kThrowerManifest[];

namespace thrower {

namespace sdk = quereus::sdk;
using sdk::Row;
using sdk::RowPtr;
using sdk::Value;

struct Custom {  // not derived from std::exception
  int code = 7;
};

struct Trigger {
  std::string call;
  std::string what = "std";
  std::string message;
};

[[noreturn]] void raise(const std::string& what, const std::string& message) {
  if (what == "error") throw sdk::Error(QRS_IOERR, message);
  if (what == "std") throw std::runtime_error(message);
  if (what == "bad_alloc") throw std::bad_alloc();
  if (what == "string") throw std::string(message);
  if (what == "cstr") throw message.c_str();  // `message` outlives the catch (the SDK copies it)
  if (what == "int") throw 42;
  if (what == "custom") throw Custom{};
  throw sdk::Error::misuse("thrower: unknown throw_what '" + what + "'");
}

void maybe(const Trigger& t, std::string_view call) {
  if (t.call == call) raise(t.what, t.message);
}

std::string option_text(const sdk::TableSchema& s, std::string_view key, std::string fallback) {
  const sdk::Option* o = s.find_option(key);
  return o && !o->value.is_null() ? std::string(o->value.bytes()) : fallback;
}

Trigger trigger_of(const sdk::TableSchema& s) {
  Trigger t;
  t.call = option_text(s, "throw_in", "");
  t.what = option_text(s, "throw_what", "std");
  t.message = option_text(s, "message", "thrower: boom in " + t.call);
  return t;
}

struct Store {
  std::mutex mu;
  std::map<std::string, RowPtr> rows;  // by the first column's debug text
};

class ThrowerCursor : public sdk::Cursor {
 public:
  ThrowerCursor(std::shared_ptr<const Trigger> t, std::vector<RowPtr> rows) : t_(std::move(t)), rows_(std::move(rows)) {}
  void next_batch(sdk::RowBatch& out) override {
    maybe(*t_, "next_batch");
    while (next_ < rows_.size() && !out.full()) out.add(rows_[next_++]);
  }

 private:
  std::shared_ptr<const Trigger> t_;
  std::vector<RowPtr> rows_;
  size_t next_ = 0;
};

class ThrowerConnection : public sdk::Connection {
 public:
  explicit ThrowerConnection(std::shared_ptr<const Trigger> t) : t_(std::move(t)) {}
  void begin() override { maybe(*t_, "begin"); }
  void commit() override { maybe(*t_, "commit"); }
  void rollback() override { maybe(*t_, "rollback"); }
  void savepoint(uint32_t) override { maybe(*t_, "savepoint"); }
  void release_savepoint(uint32_t) override { maybe(*t_, "release_savepoint"); }
  void rollback_to_savepoint(uint32_t) override { maybe(*t_, "rollback_to_savepoint"); }

 private:
  std::shared_ptr<const Trigger> t_;
};

class ThrowerTable : public sdk::Table {
 public:
  ThrowerTable(std::shared_ptr<const Trigger> t, std::shared_ptr<Store> s) : t_(std::move(t)), store_(std::move(s)) {}

  sdk::PlanResult best_access_plan(const sdk::PlanRequest& req) override {
    maybe(*t_, "plan");
    sdk::PlanResult r;
    r.cost = 1000;
    r.rows = 100;
    r.explain = "thrower full scan";
    (void)req;
    return r;
  }
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs&) override {
    maybe(*t_, "open_cursor");
    std::vector<RowPtr> rows;
    std::lock_guard lock(store_->mu);
    for (const auto& [k, r] : store_->rows) rows.push_back(r);
    return std::make_unique<ThrowerCursor>(t_, std::move(rows));
  }
  sdk::UpdateResult update(sdk::UpdateArgs a) override {
    std::lock_guard lock(store_->mu);
    switch (a.op) {
      case sdk::RowOp::kInsert: {
        maybe(*t_, "insert");
        std::string k = a.values.at(0).debug_string();
        if (auto it = store_->rows.find(k); it != store_->rows.end())
          return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, it->second);
        store_->rows[k] = sdk::make_row(std::move(a.values));
        return sdk::UpdateResult::ok(nullptr);
      }
      case sdk::RowOp::kUpdate: {
        maybe(*t_, "update");
        store_->rows.erase(a.old_key.at(0).debug_string());
        std::string k = a.values.at(0).debug_string();
        store_->rows[k] = sdk::make_row(std::move(a.values));
        return sdk::UpdateResult::ok(nullptr);
      }
      case sdk::RowOp::kDelete: {
        maybe(*t_, "delete");
        auto it = store_->rows.find(a.old_key.at(0).debug_string());
        if (it == store_->rows.end()) return sdk::UpdateResult::noop();
        RowPtr old = it->second;
        store_->rows.erase(it);
        return sdk::UpdateResult::ok(old);
      }
    }
    throw sdk::Error::misuse("unknown row op");
  }
  std::unique_ptr<sdk::Connection> open_connection() override {
    maybe(*t_, "open_connection");
    return std::make_unique<ThrowerConnection>(t_);
  }
  void alter_table(const sdk::SchemaChange&, const sdk::TableSchema&) override {
    maybe(*t_, "alter_table");
    throw sdk::Error::unsupported("thrower alter_table");
  }
  sdk::LookupResult lookup(std::span<const qrs_value> key) override {
    maybe(*t_, "lookup");
    std::lock_guard lock(store_->mu);
    auto it = store_->rows.find(Value::from_c(key[0]).debug_string());
    return it == store_->rows.end() ? sdk::LookupResult::not_found() : sdk::LookupResult::of_row(it->second);
  }

 private:
  std::shared_ptr<const Trigger> t_;
  std::shared_ptr<Store> store_;
};

class ThrowerModule : public sdk::Module {
 public:
  explicit ThrowerModule(bool throw_in_capabilities) : throw_in_capabilities_(throw_in_capabilities) {}

  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& s) override {
    auto t = std::make_shared<const Trigger>(trigger_of(s));
    maybe(*t, "create");
    return open(s, t);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& s) override {
    auto t = std::make_shared<const Trigger>(trigger_of(s));
    maybe(*t, "connect");
    return open(s, t);
  }
  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard lock(mu_);
    std::string k = std::string(schema_name) + "." + std::string(table_name);
    auto it = triggers_.find(k);
    if (it != triggers_.end()) {
      Trigger t = *it->second;
      if (t.call == "destroy") raise(t.what, t.message);  // the table stays
      triggers_.erase(it);
    }
    stores_.erase(k);
  }
  // Options throw_in = 'open_database' (+ throw_what, message) make opening a database
  // throw; otherwise this one instance serves every database.
  std::shared_ptr<sdk::Module> open_database(std::string_view, const std::vector<sdk::Option>& options) override {
    auto text = [&](std::string_view key, std::string fallback) {
      for (const sdk::Option& o : options)
        if (o.key == key && !o.value.is_null()) return std::string(o.value.bytes());
      return fallback;
    };
    if (text("throw_in", "") == "open_database")
      raise(text("throw_what", "std"), text("message", "thrower: boom in open_database"));
    return nullptr;
  }
  sdk::Capabilities capabilities() const override {
    if (throw_in_capabilities_) throw std::runtime_error("thrower: boom in capabilities");
    return {};
  }

 private:
  std::unique_ptr<sdk::Table> open(const sdk::TableSchema& s, std::shared_ptr<const Trigger> t) {
    std::lock_guard lock(mu_);
    std::string k = s.schema_name + "." + s.table_name;
    triggers_[k] = t;
    auto& store = stores_[k];
    if (!store) store = std::make_shared<Store>();
    return std::make_unique<ThrowerTable>(std::move(t), store);
  }

  bool throw_in_capabilities_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Trigger>> triggers_;
  std::map<std::string, std::shared_ptr<Store>> stores_;
};

class ThrowerAggregate : public sdk::Aggregate {
 public:
  void step(std::span<const Value> args) override {
    std::string mode = args.empty() || args[0].is_null() ? "" : std::string(args[0].bytes());
    if (mode == "step") throw std::runtime_error("thrower: boom in aggregate step");
    if (mode == "final") fail_final_ = true;
    ++count_;
  }
  Value finish() override {
    if (fail_final_) throw sdk::Error(QRS_RANGE, "thrower: boom in aggregate final");
    return Value::integer(count_);
  }

 private:
  bool fail_final_ = false;
  int64_t count_ = 0;
};

void register_plugin(sdk::Registrar& r) {
  const Value* entry = r.setting("throw_in_entry");
  if (entry && !entry->is_null() && !entry->bytes().empty())
    raise(std::string(entry->bytes()), "thrower: boom in the plugin entry");
  const Value* caps = r.setting("throw_in_capabilities");
  bool throw_caps = caps && caps->type() == sdk::ValueType::kBoolean && caps->as_boolean();
  r.add_module("thrower", std::make_shared<ThrowerModule>(throw_caps));
  r.add_scalar("thrower_fail", 2, 0, QRS_LT_ANY, [](std::span<const Value> a) -> Value {
    raise(std::string(a[0].bytes()), std::string(a[1].bytes()));
  });
  r.add_aggregate("thrower_agg", 1, 0, QRS_LT_INTEGER, [] { return std::make_unique<ThrowerAggregate>(); });
  r.add_collation("THROWY", 0, [](std::string_view, std::string_view) -> int {
    throw std::runtime_error("thrower: boom in collation THROWY");
  });
}

}  // namespace thrower

QUEREUS_PLUGIN(kThrowerManifest, thrower::register_plugin)
