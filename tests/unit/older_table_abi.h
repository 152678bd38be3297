// A C++ SDK module presented to the host as a plugin built for an older ABI minor: its
// table vtables end before the slot at byte offset `TableVtableSize` (struct_size says
// so), so the host must treat every later slot as absent. Used by the slot tests
// (lookup_slot_test.cc, alter_hook_abi_test.cc) to exercise the host's fallbacks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "plugin/module_adapter.h"
#include "quereus/sdk.hpp"

namespace quereus::testing {

template <size_t TableVtableSize>
struct OlderTableAbi {
  static qrs_table_vtable table_vt() {
    qrs_table_vtable vt = sdk::detail::kTableVtable;
    vt.struct_size = static_cast<uint32_t>(TableVtableSize);
    return vt;
  }
  static inline const qrs_table_vtable kTableVt = table_vt();
  static qrs_status create(void* self, const qrs_table_schema* s, qrs_table* out, qrs_error* err) {
    qrs_status st = sdk::detail::kModuleVtable.create(self, s, out, err);
    if (st == QRS_OK) out->vt = &kTableVt;
    return st;
  }
  static qrs_module_vtable module_vt() {
    qrs_module_vtable vt = sdk::detail::kModuleVtable;
    vt.create = &create;
    return vt;
  }
  static inline const qrs_module_vtable kModuleVt = module_vt();
};

// `module` wrapped as the host's PluginModule `name`; with `module_vt`, through that
// vtable (an OlderTableAbi<…>::kModuleVt), else the current one.
inline std::shared_ptr<PluginModule> wrap_sdk_module(const std::string& name, std::shared_ptr<sdk::Module> module,
                                                     const qrs_module_vtable* module_vt = nullptr) {
  auto* holder = new sdk::detail::ModuleHolder{std::move(module)};
  qrs_module m{holder, module_vt ? module_vt : &sdk::detail::kModuleVtable};
  return PluginModule::make(name, m, PluginLibrary());
}

}  // namespace quereus::testing
