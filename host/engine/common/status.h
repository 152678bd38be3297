// Status and Error: how failures travel inside the engine and out of its public API.
//
// Public API calls return a Status. Inside the engine a query-terminating failure is
// thrown as an Error (which carries the same code, message and optional source site)
// and caught at the API boundary; it never crosses the SDK boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "quereus/abi.h"

namespace quereus {

// Stable codes; the numeric values equal the SDK's qrs_status.
enum class StatusCode : int {
  kOk = QRS_OK,
  kError = QRS_ERROR,
  kInternal = QRS_INTERNAL,
  kBusy = QRS_BUSY,
  kReadOnly = QRS_READONLY,
  kIoErr = QRS_IOERR,
  kCorrupt = QRS_CORRUPT,
  kNotFound = QRS_NOTFOUND,
  kCantOpen = QRS_CANTOPEN,
  kSchema = QRS_SCHEMA,
  kConstraint = QRS_CONSTRAINT,
  kMismatch = QRS_MISMATCH,
  kMisuse = QRS_MISUSE,
  kFormat = QRS_FORMAT,
  kRange = QRS_RANGE,
  kUnsupported = QRS_UNSUPPORTED,
  kNoMem = QRS_NOMEM,          // an allocation failed (std::bad_alloc) or a memory limit was hit
  kInterrupt = QRS_INTERRUPT,  // Database::interrupt() or the statement timeout
  kTooBig = QRS_TOOBIG,        // a configured limit was exceeded (docs/configuration.md)
  kSyntax = 1000,  // a parse error (reported as ERROR to plugins)
  kConfig = 1001,  // a bad deployment file
  kPlugin = 1002,  // a plugin was refused
};

// Returns a short stable name such as "CONSTRAINT" or "SYNTAX".
const char* status_code_name(StatusCode code);

// Where an error happened in the SQL text (1-based).
struct SourceSite {
  int line = 0;
  int column = 0;
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, std::optional<SourceSite> site = std::nullopt)
      : code_(code), message_(std::move(message)), site_(site) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The message, ending with " (at line L, column C)" when a site is known.
  std::string message() const;
  const std::string& raw_message() const { return message_; }
  const std::optional<SourceSite>& site() const { return site_; }
  // "CODE: message" for people.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<SourceSite> site_;
};

// The exception used inside the engine. what() is the full message.
class Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& message, std::optional<SourceSite> site = std::nullopt);
  StatusCode code() const { return code_; }
  const std::string& raw_message() const { return raw_; }
  const std::optional<SourceSite>& site() const { return site_; }
  Status status() const { return Status(code_, raw_, site_); }

 private:
  StatusCode code_;
  std::string raw_;
  std::optional<SourceSite> site_;
};

// The Status an exception caught at an API boundary becomes: an Error's own status,
// NOMEM for bad_alloc, TOOBIG for length_error, INTERNAL for anything else.
Status status_of(const std::exception& e);

[[noreturn]] inline void throw_error(StatusCode code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace quereus
