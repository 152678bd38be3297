// quereus/error.hpp — the exception plugins throw inside their own code.
//
// Exceptions never cross the plugin boundary: the SDK trampolines (detail/trampolines.hpp)
// catch everything a virtual throws and turn it into a qrs_status plus a message:
//
//   quereus::sdk::Error    -> its code() and message()
//   std::bad_alloc         -> QRS_NOMEM
//   std::exception         -> QRS_INTERNAL with what()
//   std::string, char*     -> QRS_INTERNAL with the text
//   anything else          -> QRS_INTERNAL "unknown exception of type 'T' (not derived
//                             from std::exception)"
//
// Slots that cannot report a status (close, release, capabilities, a collation's compare)
// contain the exception and write it to the host's log. Destructors are the exception to
// the rule: they are noexcept in C++, so a throw escaping one terminates the process —
// catch inside them.
//
// Throw an Error with the most specific code: the host acts on codes (QRS_UNSUPPORTED
// makes it fall back, QRS_BUSY is retryable, QRS_CONSTRAINT is reported to SQL).
#ifndef QUEREUS_ERROR_HPP_
#define QUEREUS_ERROR_HPP_

#include <exception>
#include <string>
#include <utility>

#include "quereus/abi.h"

namespace quereus::sdk {

// A failure with a stable status code and a human-readable message.
//
// REQUIRES: code is an error code (not QRS_OK, QRS_ROW or QRS_DONE); the trampolines map
// such a misuse to QRS_INTERNAL.
// Thread safety: immutable after construction.
class Error : public std::exception {
 public:
  Error(qrs_status code, std::string message) : code_(code), message_(std::move(message)) {}

  qrs_status code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

  // Named constructors for the codes plugins use most.
  static Error generic(std::string m) { return {QRS_ERROR, std::move(m)}; }
  static Error internal(std::string m) { return {QRS_INTERNAL, std::move(m)}; }
  static Error busy(std::string m) { return {QRS_BUSY, std::move(m)}; }
  static Error readonly(std::string m) { return {QRS_READONLY, std::move(m)}; }
  static Error not_found(std::string m) { return {QRS_NOTFOUND, std::move(m)}; }
  static Error schema(std::string m) { return {QRS_SCHEMA, std::move(m)}; }
  static Error constraint(std::string m) { return {QRS_CONSTRAINT, std::move(m)}; }
  static Error mismatch(std::string m) { return {QRS_MISMATCH, std::move(m)}; }
  static Error misuse(std::string m) { return {QRS_MISUSE, std::move(m)}; }
  static Error range(std::string m) { return {QRS_RANGE, std::move(m)}; }
  // "This plugin does not implement <what>": the host falls back or refuses cleanly.
  static Error unsupported(std::string what) {
    return {QRS_UNSUPPORTED, std::move(what) + " is not supported"};
  }

 private:
  qrs_status code_;
  std::string message_;
};

}  // namespace quereus::sdk

#endif  // QUEREUS_ERROR_HPP_
