// quereus/sdk.hpp — the header-only C++ SDK for Quereus plugins. Include this one header.
//
// Layout (everything under sdk/include/quereus/, nothing else is visible to plugins):
//
//   abi.h          the C ABI: the binary contract with the host (plain C, versioned)
//   error.hpp      Error: the exception carrying a qrs_status, caught at the boundary
//   value.hpp      Value, Row, RowPtr, Collation, compare_values (the engine's ordering)
//   module.hpp     Module, Table, Cursor, RowBatch, Connection and their argument types
//   function.hpp   ScalarFunction, Aggregate, CollationFunction
//   registrar.hpp  Registrar, Host
//   sdk.hpp        this umbrella + QUEREUS_PLUGIN, the macro that exports the entry points
//   detail/        trampolines from the C vtables to the C++ virtuals (not API)
//
// A minimal plugin:
//
//   #include <quereus/sdk.hpp>
//   namespace sdk = quereus::sdk;
//
//   static void register_all(sdk::Registrar& r) {
//     r.add_scalar("answer", 0, QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE, QRS_LT_INTEGER,
//                  [](std::span<const sdk::Value>) { return sdk::Value::integer(42); });
//   }
//   QUEREUS_PLUGIN(R"({"name": "answer", ...})", register_all)
//
// Exceptions never cross the boundary: every slot the SDK exports catches everything (see
// error.hpp for the mapping to status codes).
#ifndef QUEREUS_SDK_HPP_
#define QUEREUS_SDK_HPP_

#include "quereus/abi.h"
#include "quereus/detail/trampolines.hpp"
#include "quereus/error.hpp"
#include "quereus/function.hpp"
#include "quereus/mapping_advertisement.hpp"
#include "quereus/module.hpp"
#include "quereus/registrar.hpp"
#include "quereus/value.hpp"

namespace quereus::sdk::detail {

// The body of qrs_plugin_entry_v1: checks the host's ABI, runs `fn(Registrar&)`, catches.
template <class Fn>
qrs_status plugin_entry(const qrs_host_api* host, qrs_registrar* reg, qrs_error* err, Fn&& fn) noexcept {
  return guard(err, [&] {
    require(host, QRS_SDK_FIELD_END(qrs_host_api, log), "qrs_host_api");
    if (host->abi_major != QRS_ABI_MAJOR)
      throw Error::misuse("host ABI major " + std::to_string(host->abi_major) + ", plugin built for " +
                          std::to_string(QRS_ABI_MAJOR));
    host_slot().store(host, std::memory_order_release);  // for log_to_host
    Registrar registrar(host, reg);
    fn(registrar);
    return QRS_OK;
  });
}

}  // namespace quereus::sdk::detail

// Defines and exports the two entry points of an ABI-1 plugin:
//
//   const char* qrs_plugin_manifest_v1(void)   returns `manifest` (a NUL-terminated static
//                                              string: the sidecar <name>.plugin.json text)
//   qrs_status  qrs_plugin_entry_v1(host, reg, err)
//                                              calls `register_fn(quereus::sdk::Registrar&)`
//
// Use once per plugin, at namespace scope. `manifest` is any expression of type
// const char* with static storage (a literal, or an array generated from the .json file at
// build time — see sdk/cmake/QuereusManifest.cmake). An exception from register_fn refuses
// the plugin with its status code.
#define QUEREUS_PLUGIN(manifest, register_fn)                                                       \
  extern "C" QRS_EXPORT const char* qrs_plugin_manifest_v1(void) { return (manifest); }            \
  extern "C" QRS_EXPORT qrs_status qrs_plugin_entry_v1(const qrs_host_api* host, qrs_registrar* reg, \
                                                       qrs_error* err) {                            \
    return ::quereus::sdk::detail::plugin_entry(host, reg, err, (register_fn));                     \
  }

#endif  // QUEREUS_SDK_HPP_
