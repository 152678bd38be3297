// modules/store/key_codec.cc — see key_codec.h for the byte layout.
#include "key_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace quereus::store {
namespace {

constexpr char kNull = 0x05;
constexpr char kNaN = 0x0F;
constexpr char kLowReal = 0x10;
constexpr char kNumber = 0x11;
constexpr char kHighReal = 0x12;
constexpr char kText = 0x20;
constexpr char kBlob = 0x30;
constexpr char kJson = 0x40;

void put_u64(std::string& out, uint64_t x) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((x >> s) & 0xFF));
}

uint64_t ordered_double(double d) {
  uint64_t bits = std::bit_cast<uint64_t>(d);
  return (bits >> 63) ? ~bits : bits ^ (uint64_t{1} << 63);
}

void put_integer(std::string& out, int64_t i) {
  out.push_back(kNumber);
  put_u64(out, static_cast<uint64_t>(i) ^ (uint64_t{1} << 63));
  out.push_back('\0');
}

void put_real(std::string& out, double d) {
  if (std::isnan(d)) {
    out.push_back(kNaN);
    return;
  }
  if (d < -9223372036854775808.0) {
    out.push_back(kLowReal);
    put_u64(out, ordered_double(d));
    return;
  }
  if (d >= 9223372036854775808.0) {
    out.push_back(kHighReal);
    put_u64(out, ordered_double(d));
    return;
  }
  double f = std::floor(d);
  double frac = d - f;  // exact: f and d share their exponent range
  out.push_back(kNumber);
  put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(f)) ^ (uint64_t{1} << 63));
  if (frac == 0) {
    out.push_back('\0');
    return;
  }
  out.push_back('\x01');
  put_u64(out, std::bit_cast<uint64_t>(frac));  // a positive double below 1: bits order by value
}

void put_escaped(std::string& out, std::string_view bytes) {
  for (char c : bytes) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xff');
  }
  out.push_back('\0');
  out.push_back('\x01');
}

void put_json(std::string& out, const nlohmann::json& j) {
  using T = nlohmann::json::value_t;
  switch (j.type()) {
    case T::null: out.push_back('\x01'); return;
    case T::boolean:
      out.push_back('\x02');
      out.push_back(j.get<bool>() ? '\x01' : '\0');
      return;
    case T::number_integer:
      out.push_back('\x03');
      put_integer(out, j.get<int64_t>());
      return;
    case T::number_unsigned: {
      out.push_back('\x03');
      auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) put_integer(out, static_cast<int64_t>(u)); else put_real(out, static_cast<double>(u));
      return;
    }
    case T::number_float:
      out.push_back('\x03');
      put_real(out, j.get<double>());
      return;
    case T::string:
      out.push_back('\x04');
      put_escaped(out, j.get_ref<const std::string&>());
      return;
    case T::array:
      out.push_back('\x05');
      for (const auto& e : j) put_json(out, e);
      out.push_back('\0');
      return;
    case T::object:
      out.push_back('\x06');
      for (auto it = j.begin(); it != j.end(); ++it) {
        out.push_back('\x01');
        put_escaped(out, it.key());
      }
      out.push_back('\0');
      for (auto it = j.begin(); it != j.end(); ++it) put_json(out, it.value());
      return;
    default: out.push_back('\x01'); return;  // discarded / binary: never in parsed text
  }
}

void put_normalized(std::string& out, std::string_view s, Normalizer n) {
  switch (n) {
    case Normalizer::kJson: {
      nlohmann::json j = nlohmann::json::parse(s.begin(), s.end(), nullptr, false);
      if (j.is_discarded()) {
        out.push_back('\x7f');
        put_escaped(out, s);
      } else {
        put_json(out, j);
      }
      return;
    }
    case Normalizer::kBinary: put_escaped(out, s); return;
    case Normalizer::kRtrim: {
      size_t len = s.size();
      while (len > 0 && s[len - 1] == ' ') --len;
      put_escaped(out, s.substr(0, len));
      return;
    }
    case Normalizer::kNocase: {
      std::string folded(s);
      for (char& c : folded)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
      put_escaped(out, folded);
      return;
    }
  }
}

std::string_view str_of(const qrs_value& v) {
  return v.u.str.data ? std::string_view(v.u.str.data, v.u.str.len) : std::string_view();
}

char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_upper(a[i]) != ascii_upper(b[i])) return false;
  return true;
}

}  // namespace

std::optional<Normalizer> normalizer_for(std::string_view name) {
  if (name.empty() || iequals(name, "BINARY")) return Normalizer::kBinary;
  if (iequals(name, "NOCASE")) return Normalizer::kNocase;
  if (iequals(name, "RTRIM")) return Normalizer::kRtrim;
  if (iequals(name, "JSON")) return Normalizer::kJson;
  return std::nullopt;
}

void encode_component(std::string& out, const qrs_value& v, Normalizer n, bool desc) {
  if (v.type == QRS_TYPE_NULL) {
    out.push_back(kNull);  // NULL sorts first in both directions
    return;
  }
  size_t start = out.size();
  switch (v.type) {
    case QRS_TYPE_INTEGER: put_integer(out, v.u.integer); break;
    case QRS_TYPE_BOOLEAN: put_integer(out, v.u.boolean != 0 ? 1 : 0); break;
    case QRS_TYPE_REAL: put_real(out, v.u.real); break;
    case QRS_TYPE_TEXT:
      out.push_back(kText);
      put_normalized(out, str_of(v), n);
      break;
    case QRS_TYPE_BLOB:
      out.push_back(kBlob);
      put_escaped(out, str_of(v));
      break;
    case QRS_TYPE_JSON:
      out.push_back(kJson);
      put_normalized(out, str_of(v), n);
      break;
    default: throw sdk::Error::mismatch("cannot key a value of type tag " + std::to_string(v.type));
  }
  if (desc)
    for (size_t i = start; i < out.size(); ++i) out[i] = static_cast<char>(~static_cast<unsigned char>(out[i]));
}

KeyCodec KeyCodec::of(const sdk::TableSchema& schema) {
  std::vector<KeyMember> members;
  for (const sdk::KeyColumn& k : schema.primary_key) {
    if (k.column >= schema.columns.size()) throw sdk::Error::schema("primary key names a missing column");
    std::optional<Normalizer> n = normalizer_for(k.collation.name());
    if (!n)
      throw sdk::Error(QRS_UNSUPPORTED, "store: primary-key column '" + schema.columns[k.column].name + "' of '" +
                                            schema.table_name + "' uses collation " + k.collation.name() +
                                            ", which the store cannot encode in key order (supported: BINARY, "
                                            "NOCASE, RTRIM, and JSON's structural order)");
    members.push_back(KeyMember{k.column, k.desc, *n, k.collation});
  }
  return KeyCodec(std::move(members));
}

void KeyCodec::encode_row(std::string& out, std::span<const qrs_value> row) const {
  for (const KeyMember& m : members_) {
    if (m.column >= row.size()) throw sdk::Error::misuse("row is missing key column " + std::to_string(m.column));
    encode_component(out, row[m.column], m.normalizer, m.desc);
  }
}

void KeyCodec::encode_key(std::string& out, std::span<const qrs_value> key) const {
  if (key.size() != members_.size())
    throw sdk::Error::misuse("key has " + std::to_string(key.size()) + " cells, primary key has " +
                             std::to_string(members_.size()));
  for (size_t i = 0; i < members_.size(); ++i)
    encode_component(out, key[i], members_[i].normalizer, members_[i].desc);
}

void KeyCodec::encode_prefix(std::string& out, std::span<const sdk::Value> prefix) const {
  for (size_t i = 0; i < prefix.size() && i < members_.size(); ++i)
    encode_component(out, prefix[i].to_c(), members_[i].normalizer, members_[i].desc);
}

}  // namespace quereus::store
