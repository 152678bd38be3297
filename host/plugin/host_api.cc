// The small C-ABI services the host offers plugins, and the conversions at the boundary.
#include "plugin/host_api.h"

#include <cxxabi.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <typeinfo>

#ifndef QUEREUS_VERSION
#define QUEREUS_VERSION "0.0.0"
#endif

namespace quereus {
namespace {

void host_log(void*, uint32_t level, const char* message, size_t len) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace,
                                                          spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  auto lvl = level <= QRS_LOG_ERROR ? kLevels[level] : spdlog::level::err;
  spdlog::log(lvl, "[plugin] {}", std::string_view(message ? message : "", message ? len : 0));
}

}  // namespace

const qrs_host_api* host_api() {
  static const qrs_host_api api = [] {
    qrs_host_api a{};
    a.struct_size = sizeof(a);
    a.abi_major = QRS_ABI_MAJOR;
    a.abi_minor = QRS_ABI_MINOR;
    a.host_version = to_qrs(QUEREUS_VERSION);
    a.log = &host_log;
    return a;
  }();
  return &api;
}

StatusCode map_status(qrs_status st) {
  switch (st) {
    case QRS_OK: return StatusCode::kOk;
    case QRS_INTERNAL: return StatusCode::kInternal;
    case QRS_BUSY:
    case QRS_LOCKED: return StatusCode::kBusy;
    case QRS_READONLY: return StatusCode::kReadOnly;
    case QRS_IOERR: return StatusCode::kIoErr;
    case QRS_CORRUPT: return StatusCode::kCorrupt;
    case QRS_NOTFOUND: return StatusCode::kNotFound;
    case QRS_CANTOPEN: return StatusCode::kCantOpen;
    case QRS_SCHEMA: return StatusCode::kSchema;
    case QRS_CONSTRAINT: return StatusCode::kConstraint;
    case QRS_MISMATCH: return StatusCode::kMismatch;
    case QRS_MISUSE: return StatusCode::kMisuse;
    case QRS_FORMAT: return StatusCode::kFormat;
    case QRS_RANGE: return StatusCode::kRange;
    case QRS_UNSUPPORTED: return StatusCode::kUnsupported;
    case QRS_NOMEM: return StatusCode::kNoMem;
    case QRS_INTERRUPT: return StatusCode::kInterrupt;
    case QRS_TOOBIG: return StatusCode::kTooBig;
    case QRS_ROW:
    case QRS_DONE: return StatusCode::kInternal;  // not an error status: a plugin bug
    default: return StatusCode::kError;
  }
}

const char* qrs_status_name(qrs_status st) {
  switch (st) {
    case QRS_OK: return "OK";
    case QRS_ERROR: return "ERROR";
    case QRS_INTERNAL: return "INTERNAL";
    case QRS_PERM: return "PERM";
    case QRS_ABORT: return "ABORT";
    case QRS_BUSY: return "BUSY";
    case QRS_LOCKED: return "LOCKED";
    case QRS_NOMEM: return "NOMEM";
    case QRS_READONLY: return "READONLY";
    case QRS_INTERRUPT: return "INTERRUPT";
    case QRS_IOERR: return "IOERR";
    case QRS_CORRUPT: return "CORRUPT";
    case QRS_NOTFOUND: return "NOTFOUND";
    case QRS_FULL: return "FULL";
    case QRS_CANTOPEN: return "CANTOPEN";
    case QRS_PROTOCOL: return "PROTOCOL";
    case QRS_EMPTY: return "EMPTY";
    case QRS_SCHEMA: return "SCHEMA";
    case QRS_TOOBIG: return "TOOBIG";
    case QRS_CONSTRAINT: return "CONSTRAINT";
    case QRS_MISMATCH: return "MISMATCH";
    case QRS_MISUSE: return "MISUSE";
    case QRS_NOLFS: return "NOLFS";
    case QRS_AUTH: return "AUTH";
    case QRS_FORMAT: return "FORMAT";
    case QRS_RANGE: return "RANGE";
    case QRS_NOTADB: return "NOTADB";
    case QRS_UNSUPPORTED: return "UNSUPPORTED";
    case QRS_ROW: return "ROW";
    case QRS_DONE: return "DONE";
  }
  return "UNKNOWN";
}

qrs_value to_qrs(const Value& v) {
  qrs_value q{};
  switch (v.type()) {
    case ValueType::kNull: q.type = QRS_TYPE_NULL; break;
    case ValueType::kInteger:
      q.type = QRS_TYPE_INTEGER;
      q.u.integer = v.as_int();
      break;
    case ValueType::kReal:
      q.type = QRS_TYPE_REAL;
      q.u.real = v.as_real();
      break;
    case ValueType::kBoolean:
      q.type = QRS_TYPE_BOOLEAN;
      q.u.boolean = v.as_bool() ? 1 : 0;
      break;
    case ValueType::kText:
      q.type = QRS_TYPE_TEXT;
      q.u.str = to_qrs(v.str());
      break;
    case ValueType::kBlob:
      q.type = QRS_TYPE_BLOB;
      q.u.str = to_qrs(v.str());
      break;
    case ValueType::kJson:
      q.type = QRS_TYPE_JSON;
      q.u.str = to_qrs(v.str());
      break;
    case ValueType::kBigInt:
      // INTEGER crosses the ABI as int64 (sdk.md, Values). The write path refuses such a
      // value with the table and column named before it gets here.
      throw Error(StatusCode::kRange,
                  "integer value " + v.str() + " is out of range for a plugin (exact 64-bit integers only)");
  }
  return q;
}

std::vector<qrs_value> to_qrs(std::span<const Value> values) {
  std::vector<qrs_value> out;
  out.reserve(values.size());
  for (const Value& v : values) out.push_back(to_qrs(v));
  return out;
}

Value from_qrs(const qrs_value& v) {
  switch (v.type) {
    case QRS_TYPE_NULL: return Value();
    case QRS_TYPE_INTEGER: return Value::Integer(v.u.integer);
    case QRS_TYPE_REAL: return Value::Real(v.u.real);
    case QRS_TYPE_BOOLEAN: return Value::Boolean(v.u.boolean != 0);
    case QRS_TYPE_TEXT: return Value::Text(std::string(to_view(v.u.str)));
    case QRS_TYPE_BLOB: return Value::Blob(std::string(to_view(v.u.str)));
    case QRS_TYPE_JSON: return Value::Json(std::string(to_view(v.u.str)));
  }
  throw Error(StatusCode::kMismatch,
              "plugin returned a value of unknown type " + std::to_string(v.type));
}

Row copy_row(const qrs_value* cells, uint32_t count) {
  Row row;
  row.reserve(count);
  for (uint32_t i = 0; i < count; ++i) row.push_back(from_qrs(cells[i]));
  return row;
}

void assign_row(Row& row, const qrs_value* cells, uint32_t count) {
  row.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const qrs_value& v = cells[i];
    Value& out = row[i];
    switch (v.type) {
      case QRS_TYPE_NULL: out.assign_null(); break;
      case QRS_TYPE_INTEGER: out.assign_integer(v.u.integer); break;
      case QRS_TYPE_REAL: out.assign_real(v.u.real); break;
      case QRS_TYPE_BOOLEAN: out.assign_boolean(v.u.boolean != 0); break;
      case QRS_TYPE_TEXT: out.assign_bytes(ValueType::kText, to_view(v.u.str)); break;
      case QRS_TYPE_BLOB: out.assign_bytes(ValueType::kBlob, to_view(v.u.str)); break;
      case QRS_TYPE_JSON: out.assign_bytes(ValueType::kJson, to_view(v.u.str)); break;
      default:
        throw Error(StatusCode::kMismatch, "plugin returned a value of unknown type " + std::to_string(v.type));
    }
  }
}

namespace {

// What the exception being handled says: what() for a std::exception, else its type.
std::string escaped_description() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    const std::type_info* t = abi::__cxa_current_exception_type();
    if (!t) return "an exception of unknown type";
    int status = 0;
    char* demangled = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
    std::string name = demangled && status == 0 ? demangled : t->name();
    std::free(demangled);
    return "an exception of type '" + name + "'";
  }
}

}  // namespace

void raise_escaped(std::string_view what) {
  throw Error(StatusCode::kInternal,
              "plugin " + std::string(what) + " let an exception cross the C ABI: " + escaped_description());
}

void log_escaped(std::string_view what) noexcept {
  try {
    spdlog::error("plugin {} let an exception cross the C ABI (ignored): {}", what, escaped_description());
  } catch (...) {
  }
}

ErrorBox::ErrorBox() : err_{} {
  err_.struct_size = sizeof(err_);
  err_.ctx = &message_;
  err_.set_message = [](qrs_error* self, const char* m, size_t len) {
    try {
      static_cast<std::string*>(self->ctx)->assign(m ? m : "", m ? len : 0);
    } catch (...) {  // must not throw into plugin code
    }
  };
}

std::string ErrorBox::describe(qrs_status st, std::string_view what) const {
  if (!message_.empty()) return message_;
  return std::string(what) + " failed (" + qrs_status_name(st) + ")";
}

void ErrorBox::raise(qrs_status st, std::string_view what) const {
  throw Error(map_status(st), describe(st, what));
}

ResultBox::ResultBox() : sink_{} {
  sink_.struct_size = sizeof(sink_);
  sink_.ctx = this;
  sink_.set = [](qrs_result_sink* self, const qrs_value* v) {
    auto* box = static_cast<ResultBox*>(self->ctx);
    try {
      box->value_ = v ? from_qrs(*v) : Value();
      box->bad_.clear();
    } catch (const std::exception& e) {
      box->bad_ = e.what();
    }
  };
}

Value ResultBox::take() {
  if (!bad_.empty()) throw Error(StatusCode::kMismatch, bad_);
  return std::move(value_);
}

}  // namespace quereus
