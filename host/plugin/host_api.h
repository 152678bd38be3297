// Host side of the C ABI's small pieces: the qrs_host_api services, error and result
// boxes, status mapping and Value <-> qrs_value conversion. Used by the loader and adapters.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "quereus/abi.h"
#include "types/value.h"

namespace boost::dll {
class shared_library;
}

namespace quereus {

// Holds a plugin's library loaded; every object created by the plugin keeps one.
using PluginLibrary = std::shared_ptr<const boost::dll::shared_library>;

// A host-sized copy of a size-prefixed struct received from a plugin: the fields the
// plugin's (possibly older) struct lacks are zero, so a missing slot reads as nullptr.
template <class T>
T copy_struct(const T* p) {
  T out{};
  if (p != nullptr) std::memcpy(&out, p, std::min<size_t>(p->struct_size, sizeof(T)));
  out.struct_size = sizeof(T);
  return out;
}

// The services handed to every plugin entry (logging goes to spdlog). Lives forever.
const qrs_host_api* host_api();

inline qrs_string to_qrs(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view to_view(qrs_string s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}

// Maps a plugin status to the engine's code (codes without an engine twin become kError).
StatusCode map_status(qrs_status st);
const char* qrs_status_name(qrs_status st);

// A borrowed view of `v`: its text/blob/json bytes stay owned by `v`. Throws Error(kRange)
// for an integer outside int64, which the ABI cannot carry.
qrs_value to_qrs(const Value& v);
// A copy of a value produced by a plugin. Throws Error(kMismatch) on an unknown type tag.
Value from_qrs(const qrs_value& v);
// Copies a borrowed row (`count` cells) into engine values.
Row copy_row(const qrs_value* cells, uint32_t count);
// Copies a C row into `row`, reusing its cells' buffers (no allocation in the steady state).
void assign_row(Row& row, const qrs_value* cells, uint32_t count);
// Borrowed views of `values`, for one call.
std::vector<qrs_value> to_qrs(std::span<const Value> values);

// Exceptions must not cross the C ABI: the SDK's trampolines catch everything a plugin
// throws, but a plugin written against bare abi.h in C++ can still let one escape a slot.
// Every slot call goes through one of these so it stops at the boundary instead of
// unwinding through the engine (where a non-std exception would end the process):
// call_plugin turns it into Error(kInternal, "plugin <what> let an exception cross the C
// ABI: <what()>" or "...: exception of type 'T'"); call_plugin_void, for slots that cannot
// fail (release, close, capabilities) and run in destructors, logs it and goes on.
[[noreturn]] void raise_escaped(std::string_view what);
void log_escaped(std::string_view what) noexcept;

template <class Fn, class... Args>
decltype(auto) call_plugin(std::string_view what, Fn fn, Args... args) {
  try {
    return fn(args...);
  } catch (...) {
    raise_escaped(what);
  }
}

template <class Fn, class... Args>
void call_plugin_void(std::string_view what, Fn fn, Args... args) noexcept {
  try {
    fn(args...);
  } catch (...) {
    log_escaped(what);
  }
}

// The qrs_error handed to one plugin call; keeps the last message the plugin set.
class ErrorBox {
 public:
  ErrorBox();
  ErrorBox(const ErrorBox&) = delete;
  ErrorBox& operator=(const ErrorBox&) = delete;

  qrs_error* get() { return &err_; }
  const std::string& message() const { return message_; }
  // "<message>", or "<what> failed (<STATUS>)" when the plugin gave none.
  std::string describe(qrs_status st, std::string_view what) const;
  // Throws Error(map_status(st), describe(st, what)).
  [[noreturn]] void raise(qrs_status st, std::string_view what) const;

 private:
  qrs_error err_;
  std::string message_;
};

// Throws via `box` unless st == QRS_OK.
inline void check(qrs_status st, const ErrorBox& box, std::string_view what) {
  if (st != QRS_OK) box.raise(st, what);
}

// The qrs_result_sink of one function call; keeps a copy of the value the plugin set.
class ResultBox {
 public:
  ResultBox();
  ResultBox(const ResultBox&) = delete;
  ResultBox& operator=(const ResultBox&) = delete;

  qrs_result_sink* get() { return &sink_; }
  // The value set last (NULL when the plugin set none). Throws Error(kMismatch) when the
  // plugin set a value the host cannot read.
  Value take();

 private:
  qrs_result_sink sink_;
  Value value_;
  std::string bad_;  // why the last value was unreadable (set() must not throw into C)
};

}  // namespace quereus
