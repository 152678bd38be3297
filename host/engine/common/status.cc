#include "common/status.h"

#include <new>
#include <stdexcept>

namespace quereus {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kError: return "ERROR";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kBusy: return "BUSY";
    case StatusCode::kReadOnly: return "READONLY";
    case StatusCode::kIoErr: return "IOERR";
    case StatusCode::kCorrupt: return "CORRUPT";
    case StatusCode::kNotFound: return "NOTFOUND";
    case StatusCode::kCantOpen: return "CANTOPEN";
    case StatusCode::kSchema: return "SCHEMA";
    case StatusCode::kConstraint: return "CONSTRAINT";
    case StatusCode::kMismatch: return "MISMATCH";
    case StatusCode::kMisuse: return "MISUSE";
    case StatusCode::kFormat: return "FORMAT";
    case StatusCode::kRange: return "RANGE";
    case StatusCode::kUnsupported: return "UNSUPPORTED";
    case StatusCode::kNoMem: return "NOMEM";
    case StatusCode::kInterrupt: return "INTERRUPT";
    case StatusCode::kTooBig: return "TOOBIG";
    case StatusCode::kSyntax: return "SYNTAX";
    case StatusCode::kConfig: return "CONFIG";
    case StatusCode::kPlugin: return "PLUGIN";
  }
  return "ERROR";
}

static std::string with_site(const std::string& m, const std::optional<SourceSite>& site) {
  if (!site) return m;
  return m + " (at line " + std::to_string(site->line) + ", column " +
         std::to_string(site->column) + ")";
}

std::string Status::message() const { return with_site(message_, site_); }

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(status_code_name(code_)) + ": " + message();
}

Error::Error(StatusCode code, const std::string& message, std::optional<SourceSite> site)
    : std::runtime_error(with_site(message, site)), code_(code), raw_(message), site_(site) {}

Status status_of(const std::exception& e) {
  if (auto* err = dynamic_cast<const Error*>(&e)) return err->status();
  if (dynamic_cast<const std::bad_alloc*>(&e)) return Status(StatusCode::kNoMem, "out of memory");
  if (dynamic_cast<const std::length_error*>(&e)) return Status(StatusCode::kTooBig, "string or blob too big");
  return Status(StatusCode::kInternal, e.what());
}

}  // namespace quereus
