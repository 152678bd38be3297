// modules/store/row_codec.cc — see row_codec.h for the byte layout.
#include "row_codec.h"

#include <bit>
#include <cstring>

namespace quereus::store {
namespace {

constexpr char kRowFormat = 0x01;
constexpr char kSidecarFormat = 0x02;

[[noreturn]] void corrupt(std::string_view where, const char* what) {
  throw sdk::Error(QRS_CORRUPT, "store: corrupt row of " + std::string(where) + ": " + what);
}

}  // namespace

void put_varint(std::string& out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

bool get_varint(std::string_view& in, uint64_t* v) {
  // Only the form put_varint writes: at most 10 bytes, no bits beyond 64, no redundant
  // trailing zero group. Anything else is not a varint this module wrote.
  uint64_t r = 0;
  for (int i = 0, shift = 0; i < 10 && i < static_cast<int>(in.size()); ++i, shift += 7) {
    auto b = static_cast<unsigned char>(in[i]);
    if (i == 9 && b > 1) return false;  // past bit 63
    r |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      if (b == 0 && i > 0) return false;  // overlong
      in.remove_prefix(i + 1);
      *v = r;
      return true;
    }
  }
  return false;
}

void encode_row(std::string& out, std::span<const qrs_value> row) {
  out.push_back(kRowFormat);
  put_varint(out, row.size());
  for (const qrs_value& c : row) {
    out.push_back(static_cast<char>(c.type));
    switch (c.type) {
      case QRS_TYPE_NULL: break;
      case QRS_TYPE_INTEGER: {
        auto u = static_cast<uint64_t>(c.u.integer);
        put_varint(out, (u << 1) ^ static_cast<uint64_t>(c.u.integer >> 63));
        break;
      }
      case QRS_TYPE_REAL: {
        uint64_t bits = std::bit_cast<uint64_t>(c.u.real);
        char le[8];
        for (int i = 0; i < 8; ++i) le[i] = static_cast<char>((bits >> (8 * i)) & 0xFF);
        out.append(le, 8);
        break;
      }
      case QRS_TYPE_BOOLEAN: out.push_back(c.u.boolean != 0 ? 1 : 0); break;
      case QRS_TYPE_TEXT:
      case QRS_TYPE_BLOB:
      case QRS_TYPE_JSON: {
        size_t len = c.u.str.data ? c.u.str.len : 0;
        put_varint(out, len);
        if (len) out.append(c.u.str.data, len);
        break;
      }
      default: throw sdk::Error::mismatch("cannot store a value of type tag " + std::to_string(c.type));
    }
  }
}

std::string encode_row(std::span<const qrs_value> row) {
  std::string out;
  encode_row(out, row);
  return out;
}

std::string encode_row(const sdk::Row& row) {
  std::vector<qrs_value> cells;
  cells.reserve(row.size());
  for (const sdk::Value& v : row) cells.push_back(v.to_c());
  return encode_row(cells);
}

namespace {
// Splits a 02 row into its sidecar and its 01 body; a 01 row is all body.
void split(std::string_view in, std::string_view* sidecar, std::string_view* body, std::string_view where) {
  if (in.empty() || in.front() != kSidecarFormat) {
    *sidecar = {};
    *body = in;
    return;
  }
  in.remove_prefix(1);
  uint64_t n;
  // (An empty sidecar is written as the 01 form: one encoding per row.)
  if (!get_varint(in, &n) || n == 0 || n > in.size()) corrupt(where, "bad sidecar length");
  *sidecar = in.substr(0, n);
  *body = in.substr(n);
}
}  // namespace

std::string_view row_sidecar(std::string_view bytes, std::string_view where) {
  std::string_view sidecar, body;
  split(bytes, &sidecar, &body, where);
  return sidecar;
}

std::string_view row_body(std::string_view bytes, std::string_view where) {
  std::string_view sidecar, body;
  split(bytes, &sidecar, &body, where);
  return body;
}

size_t row_cell_count(std::string_view bytes, std::string_view where) {
  std::string_view body = row_body(bytes, where);
  if (body.empty() || body.front() != kRowFormat) corrupt(where, "unknown row format");
  body.remove_prefix(1);
  uint64_t n;
  if (!get_varint(body, &n) || n > body.size()) corrupt(where, "bad cell count");
  return static_cast<size_t>(n);
}

void wrap_row(std::string& out, std::string_view sidecar, std::string_view row) {
  const std::string_view body = row_body(row);
  out.clear();
  if (sidecar.empty()) {
    out.assign(body);
    return;
  }
  out.reserve(body.size() + sidecar.size() + 6);
  out.push_back(kSidecarFormat);
  put_varint(out, sidecar.size());
  out.append(sidecar);
  out.append(body);
}

void decode_row(std::string_view in, std::vector<qrs_value>& out, std::string_view where) {
  out.clear();
  in = row_body(in, where);
  if (in.empty() || in.front() != kRowFormat) corrupt(where, "unknown row format");
  in.remove_prefix(1);
  uint64_t n;
  // Every cell takes at least its type byte, so a count above the bytes left is corrupt
  // (and never reserves more than the row's size).
  if (!get_varint(in, &n) || n > in.size()) corrupt(where, "bad cell count");
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (in.empty()) corrupt(where, "truncated");
    qrs_value c{};
    c.type = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    switch (c.type) {
      case QRS_TYPE_NULL: break;
      case QRS_TYPE_INTEGER: {
        uint64_t z;
        if (!get_varint(in, &z)) corrupt(where, "bad integer");
        c.u.integer = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
        break;
      }
      case QRS_TYPE_REAL: {
        if (in.size() < 8) corrupt(where, "truncated real");
        uint64_t bits = 0;
        for (int b = 0; b < 8; ++b) bits |= static_cast<uint64_t>(static_cast<unsigned char>(in[b])) << (8 * b);
        in.remove_prefix(8);
        c.u.real = std::bit_cast<double>(bits);
        break;
      }
      case QRS_TYPE_BOOLEAN:
        if (in.empty()) corrupt(where, "truncated boolean");
        if (in.front() != 0 && in.front() != 1) corrupt(where, "bad boolean");
        c.u.boolean = in.front();
        in.remove_prefix(1);
        break;
      case QRS_TYPE_TEXT:
      case QRS_TYPE_BLOB:
      case QRS_TYPE_JSON: {
        uint64_t len;
        if (!get_varint(in, &len) || len > in.size()) corrupt(where, "bad string length");
        c.u.str = qrs_string{in.data(), static_cast<size_t>(len)};
        in.remove_prefix(len);
        break;
      }
      default: corrupt(where, "unknown cell type");
    }
    out.push_back(c);
  }
  if (!in.empty()) corrupt(where, "trailing bytes");
}

sdk::RowPtr decode_row_owned(std::string_view bytes) {
  std::vector<qrs_value> cells;
  decode_row(bytes, cells);
  sdk::Row row;
  row.reserve(cells.size());
  for (const qrs_value& c : cells) row.push_back(sdk::Value::from_c(c));
  return sdk::make_row(std::move(row));
}

}  // namespace quereus::store
