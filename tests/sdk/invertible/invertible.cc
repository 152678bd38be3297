// tests/sdk/invertible — a plugin whose scalar functions declare how a write through a
// view inverts them (SDK 1.8, abi.h QRS_INVERT_*; tests/unit/invertible_functions_test.cc):
//
//   cents(x) = x * 100         INVERSE by uncents(v) = v / 100
//   shift(x, k) = x + k        INVERSE of argument 0 by unshift(v, k) = v - k
//   label(x, tag) = x          PASSTHROUGH argument 0
//   legacy_cents(x) = x * 100  declares INVERSE too, but through a struct as a 1.7 plugin
//                              built it (struct_size ends before the profile): the host must
//                              read it as opaque
//
// With INVERTIBLE_BROKEN defined it also registers broken_inverse(x) whose inverse names a
// function nobody registered: the host must refuse the plugin.
#include <quereus/sdk.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace invertible {

using quereus::sdk::Invertibility;
using quereus::sdk::Registrar;
using quereus::sdk::Value;

int64_t int_arg(std::span<const Value> a, size_t i) {
  if (a[i].is_null()) throw quereus::sdk::Error::mismatch("expects an integer");
  return a[i].as_integer();
}

// A raw registration with the struct as a 1.7 plugin would pass it (its size ends before
// the 1.8 fields), the 1.8 fields filled in memory all the same.
void register_legacy(qrs_registrar* reg) {
  using Holder = quereus::sdk::detail::ScalarHolder;
  auto* user = new Holder{[](std::span<const Value> a) {
    return a[0].is_null() ? Value() : Value::integer(int_arg(a, 0) * 100);
  }};
  qrs_scalar_function_def def{};
  def.struct_size = offsetof(qrs_scalar_function_def, invertibility);
  def.name = {"legacy_cents", 12};
  def.num_args = 1;
  def.flags = QRS_FUNC_DETERMINISTIC;
  def.return_type = QRS_LT_INTEGER;
  def.user = user;
  def.call = &quereus::sdk::detail::scalar_call;
  def.release_user = [](void* u) { delete static_cast<Holder*>(u); };
  def.invertibility = QRS_INVERT_INVERSE;  // past struct_size: must be ignored
  def.invert_arg = 0;
  def.inverse = {"uncents", 7};
  std::string message;
  qrs_error err{sizeof(qrs_error), &message, [](qrs_error* e, const char* text, size_t len) {
                  static_cast<std::string*>(e->ctx)->assign(text, len);
                }};
  if (reg->register_scalar(reg->ctx, &def, &err) != QRS_OK) {
    delete user;
    throw quereus::sdk::Error(QRS_ERROR, "registering legacy_cents: " + message);
  }
}

void register_plugin(Registrar& r, qrs_registrar* reg) {
  const uint32_t det = QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE;
  r.add_scalar(
      "cents", 1, det, QRS_LT_INTEGER,
      [](std::span<const Value> a) { return a[0].is_null() ? Value() : Value::integer(int_arg(a, 0) * 100); },
      Invertibility::inverse_by(0, "uncents"));
  r.add_scalar("uncents", 1, det, QRS_LT_INTEGER,
               [](std::span<const Value> a) { return a[0].is_null() ? Value() : Value::integer(int_arg(a, 0) / 100); });
  r.add_scalar(
      "shift", 2, det, QRS_LT_INTEGER,
      [](std::span<const Value> a) {
        return a[0].is_null() || a[1].is_null() ? Value() : Value::integer(int_arg(a, 0) + int_arg(a, 1));
      },
      Invertibility::inverse_by(0, "unshift"));
  r.add_scalar("unshift", 2, det, QRS_LT_INTEGER, [](std::span<const Value> a) {
    return a[0].is_null() || a[1].is_null() ? Value() : Value::integer(int_arg(a, 0) - int_arg(a, 1));
  });
  r.add_scalar(
      "label", 2, det, QRS_LT_ANY, [](std::span<const Value> a) { return a[0]; }, Invertibility::passthrough(0));
  register_legacy(reg);
#if defined(INVERTIBLE_BROKEN)
  r.add_scalar(
      "broken_inverse", 1, det, QRS_LT_INTEGER, [](std::span<const Value> a) { return a[0]; },
      Invertibility::inverse_by(0, "no_such_function"));
#endif
}

}  // namespace invertible

#if defined(INVERTIBLE_BROKEN)
extern const char kInvertibleBrokenManifest[];
#define INVERTIBLE_MANIFEST kInvertibleBrokenManifest
#else
extern const char kInvertibleManifest[];
#define INVERTIBLE_MANIFEST kInvertibleManifest
#endif

// The entry by hand: register_legacy needs the raw registrar.
extern "C" QRS_EXPORT const char* qrs_plugin_manifest_v1(void) { return INVERTIBLE_MANIFEST; }
extern "C" QRS_EXPORT qrs_status qrs_plugin_entry_v1(const qrs_host_api* host, qrs_registrar* reg, qrs_error* err) {
  return quereus::sdk::detail::plugin_entry(host, reg, err,
                                            [reg](quereus::sdk::Registrar& r) { invertible::register_plugin(r, reg); });
}
