// quereus/registrar.hpp — what a plugin's register function receives.
//
// The host calls the plugin entry once (see QUEREUS_PLUGIN in sdk.hpp), which hands the
// plugin's register function a Registrar. Everything the plugin provides is registered
// through it; a throw from the register function refuses the whole plugin.
#ifndef QUEREUS_REGISTRAR_HPP_
#define QUEREUS_REGISTRAR_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "quereus/detail/trampolines.hpp"
#include "quereus/error.hpp"
#include "quereus/function.hpp"
#include "quereus/module.hpp"
#include "quereus/value.hpp"

namespace quereus::sdk {

// The services the host offers. A cheap copyable handle, valid for the life of the
// process: a plugin may keep one (e.g. in its Module) to log later.
// Thread safety: every method may be called from any thread.
class Host {
 public:
  Host() = default;  // a detached handle: log() does nothing
  explicit Host(const qrs_host_api* api) : api_(api) {}

  uint32_t abi_major() const noexcept { return api_ ? api_->abi_major : 0; }
  uint32_t abi_minor() const noexcept { return api_ ? api_->abi_minor : 0; }
  std::string_view version() const noexcept { return api_ ? detail::view(api_->host_version) : std::string_view(); }

  // Writes one message to the host's log. Never fails.
  void log(qrs_log_level level, std::string_view message) const noexcept {
    if (api_ && api_->log) api_->log(api_->ctx, level, message.data(), message.size());
  }

 private:
  const qrs_host_api* api_ = nullptr;
};

// Registers modules, functions and collations with the host. Valid only during the plugin
// entry call; not thread-safe (the entry runs on one thread).
//
// Every add_* copies `name`, transfers ownership of the callable / module to the host and
// throws Error when the host refuses (e.g. QRS_ERROR for a duplicate name, QRS_UNSUPPORTED
// when the host lacks the registration slot).
class Registrar {
 public:
  // REQUIRES: host and reg valid for the duration of the entry call (checked: QRS_MISUSE).
  Registrar(const qrs_host_api* host, qrs_registrar* reg) : host_(host), reg_(reg) {
    detail::require(reg, QRS_SDK_FIELD_END(qrs_registrar, register_collation), "qrs_registrar");
    if (reg->setting_count && !reg->settings) throw Error::misuse("null qrs_registrar.settings");
    for (uint32_t i = 0; i < reg->setting_count; ++i)
      settings_.push_back(Option{detail::str(reg->settings[i].key), Value::from_c(reg->settings[i].value)});
  }
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  const Host& host() const noexcept { return host_; }

  // The plugin's settings from the YAML `config:` map, in the host's order.
  const std::vector<Option>& settings() const noexcept { return settings_; }
  // The setting named `key` (exact match), or nullptr.
  const Value* setting(std::string_view key) const noexcept {
    for (const Option& o : settings_)
      if (o.key == key) return &o.value;
    return nullptr;
  }

  // Registers a storage module under `name` (`CREATE TABLE … USING name`). The same
  // module object may be registered under several names (aliases share its state); the
  // host releases each registration, and the module is destroyed with the last one.
  // A std::unique_ptr<M> converts implicitly.
  void add_module(std::string_view name, std::shared_ptr<Module> module) {
    if (!module) throw Error::misuse("add_module: null module");
    auto holder = std::make_unique<detail::ModuleHolder>(detail::ModuleHolder{std::move(module)});
    qrs_module m{holder.get(), &detail::kModuleVtable};
    check(reg_->register_module ? reg_->register_module(reg_->ctx, {name.data(), name.size()}, m, capture_.reset())
                                : QRS_UNSUPPORTED,
          "module", name);
    holder.release();  // owned by the host now
  }

  // Registers a scalar function. num_args: exact arity, or -1 for variadic. flags:
  // QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE. return_type: QRS_LT_ANY when it varies.
  // `invert` declares how a write through a view inverts it (function.hpp, SDK 1.8); a
  // host older than 1.8 ignores it (the function is opaque there). `form` (SDK 1.11)
  // declares the call a predicate of an access form (function.hpp AccessFormCall).
  void add_scalar(std::string_view name, int32_t num_args, uint32_t flags, qrs_logical_type return_type,
                  ScalarFunction fn, Invertibility invert = {}, AccessFormCall form = {}) {
    if (!fn) throw Error::misuse("add_scalar: empty function");
    auto holder = std::make_unique<detail::ScalarHolder>(detail::ScalarHolder{std::move(fn)});
    qrs_scalar_function_def def{sizeof(qrs_scalar_function_def),
                                {name.data(), name.size()},
                                num_args,
                                flags,
                                static_cast<uint32_t>(return_type),
                                holder.get(),
                                &detail::scalar_call,
                                &detail::release_user<detail::ScalarHolder>,
                                invert.kind,
                                invert.arg,
                                {invert.inverse.data(), invert.inverse.size()},
                                {form.form.data(), form.form.size()},
                                form.column_arg,
                                form.value_arg};
    check(reg_->register_scalar ? reg_->register_scalar(reg_->ctx, &def, capture_.reset()) : QRS_UNSUPPORTED,
          "function", name);
    holder.release();
  }

  // Registers an aggregate: `factory` makes one Aggregate state per group. `algebra`
  // (SDK 1.9) declares which of Aggregate::merge / negate / decode the states implement,
  // so materialized views over the aggregate fold writes instead of recomputing groups.
  void add_aggregate(std::string_view name, int32_t num_args, uint32_t flags, qrs_logical_type return_type,
                     AggregateFactory factory, AggregateAlgebra algebra = {}) {
    if (!factory) throw Error::misuse("add_aggregate: empty factory");
    if ((algebra.negate || algebra.decode) && !algebra.merge)
      throw Error::misuse("add_aggregate: negate and decode need merge");
    if (algebra.decode_exact && !algebra.decode) throw Error::misuse("add_aggregate: decode_exact needs decode");
    auto holder = std::make_unique<detail::AggregateHolder>(detail::AggregateHolder{std::move(factory)});
    qrs_aggregate_function_def def{sizeof(qrs_aggregate_function_def),
                                   {name.data(), name.size()},
                                   num_args,
                                   flags,
                                   static_cast<uint32_t>(return_type),
                                   holder.get(),
                                   &detail::aggregate_init,
                                   &detail::aggregate_step,
                                   &detail::aggregate_final,
                                   &detail::aggregate_free_state,
                                   &detail::release_user<detail::AggregateHolder>,
                                   algebra.merge ? &detail::aggregate_merge : nullptr,
                                   algebra.negate ? &detail::aggregate_negate : nullptr,
                                   algebra.decode ? &detail::aggregate_decode : nullptr,
                                   algebra.decode_exact ? uint32_t{QRS_AGG_DECODE_EXACT} : 0u};
    check(reg_->register_aggregate ? reg_->register_aggregate(reg_->ctx, &def, capture_.reset()) : QRS_UNSUPPORTED,
          "aggregate", name);
    holder.release();
  }

  // Registers a collation (`COLLATE name`). flags: QRS_COLLATION_REPLICABLE |
  // QRS_COLLATION_ORDER_PRESERVING. See CollationFunction for the rules on `compare`.
  void add_collation(std::string_view name, uint32_t flags, CollationFunction compare) {
    if (!compare) throw Error::misuse("add_collation: empty function");
    auto holder = std::make_unique<detail::CollationHolder>();
    holder->fn = std::move(compare);
    holder->name = std::string(name);
    qrs_collation_def def{sizeof(qrs_collation_def), {name.data(), name.size()}, flags, holder.get(),
                          &detail::collation_call, &detail::release_user<detail::CollationHolder>};
    check(reg_->register_collation ? reg_->register_collation(reg_->ctx, &def, capture_.reset()) : QRS_UNSUPPORTED,
          "collation", name);
    holder.release();
  }

 private:
  // Collects the host's message for a refused registration.
  struct Capture {
    qrs_error err{sizeof(qrs_error), this, &Capture::set};
    std::string message;
    qrs_error* reset() {
      message.clear();
      return &err;
    }
    static void set(qrs_error* self, const char* m, size_t n) {
      static_cast<Capture*>(self->ctx)->message.assign(m ? m : "", m ? n : 0);
    }
  };

  void check(qrs_status s, const char* kind, std::string_view name) {
    if (s == QRS_OK) return;
    std::string m = std::string("registering ") + kind + " '" + std::string(name) + "' failed";
    if (!capture_.message.empty()) m += ": " + capture_.message;
    throw Error(s, std::move(m));
  }

  Host host_;
  qrs_registrar* reg_;
  std::vector<Option> settings_;
  Capture capture_;
};

}  // namespace quereus::sdk

#endif  // QUEREUS_REGISTRAR_HPP_
