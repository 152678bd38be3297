// tests/sdk/raw_thrower — a misbehaving plugin written against bare abi.h, without the
// SDK's C++ layer and its trampolines: its slots let C++ exceptions escape, which the C ABI
// forbids. The host must stop them at the boundary (host/plugin/host_api.h call_plugin)
// and report an error naming the call, not crash (tests/unit/plugin_exceptions_test.cc).
//
//   raw_fail('std')   throws std::runtime_error("raw boom")
//   raw_fail('int')   throws 42
//   setting throw_in_entry: true  -> the plugin entry throws std::runtime_error
#include <quereus/abi.h>

#include <cstring>
#include <stdexcept>

extern const char kRawThrowerManifest[];

namespace {

qrs_status raw_fail(void*, const qrs_value* args, uint32_t argc, qrs_result_sink*, qrs_error*) {
  if (argc == 1 && args[0].type == QRS_TYPE_TEXT && args[0].u.str.len == 3 &&
      std::memcmp(args[0].u.str.data, "int", 3) == 0)
    throw 42;
  throw std::runtime_error("raw boom");
}

}  // namespace

extern "C" QRS_EXPORT const char* qrs_plugin_manifest_v1(void) { return kRawThrowerManifest; }

extern "C" QRS_EXPORT qrs_status qrs_plugin_entry_v1(const qrs_host_api*, qrs_registrar* reg, qrs_error* err) {
  for (uint32_t i = 0; i < reg->setting_count; ++i) {
    const qrs_option& o = reg->settings[i];
    if (o.key.len == 14 && std::memcmp(o.key.data, "throw_in_entry", 14) == 0 && o.value.type == QRS_TYPE_BOOLEAN &&
        o.value.u.boolean)
      throw std::runtime_error("raw entry boom");
  }
  qrs_scalar_function_def def{};
  def.struct_size = sizeof(def);
  def.name = {"raw_fail", 8};
  def.num_args = 1;
  def.return_type = QRS_LT_ANY;
  def.call = &raw_fail;
  return reg->register_scalar(reg->ctx, &def, err);
}
