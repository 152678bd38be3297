// modules/store/key_codec.cc — see key_codec.h for the byte layout.
#include "key_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "quereus/text_case.hpp"

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
  char be[8];
  for (int i = 0; i < 8; ++i) be[i] = static_cast<char>((x >> (56 - 8 * i)) & 0xFF);
  out.append(be, 8);
}

uint64_t ordered_double(double d) {
  uint64_t bits = std::bit_cast<uint64_t>(d);
  return (bits >> 63) ? ~bits : bits ^ (uint64_t{1} << 63);
}

void put_integer(std::string& out, int64_t i) {
  char enc[10];
  enc[0] = kNumber;
  const uint64_t x = static_cast<uint64_t>(i) ^ (uint64_t{1} << 63);
  for (int b = 0; b < 8; ++b) enc[1 + b] = static_cast<char>((x >> (56 - 8 * b)) & 0xFF);
  enc[9] = '\0';
  out.append(enc, 10);
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
  // d - f is exact for d >= 0 and d <= -1, but not for d in (-1, 0), where 1 + d needs
  // bits below 2^-53 (found by tests/fuzz/codec_fuzz: -1e-200 and -2e-200 encoded alike,
  // so distinct keys collided). There the fraction is rounded down and d itself follows
  // as a tiebreak: order is kept, and every exact encoding is unchanged.
  double frac = d - f;
  const double back = frac - d;                           // TwoSum: the rounding error of d - f
  const double err = (d - (frac - back)) + (-f - back);  // > 0: rounded down, < 0: rounded up
  out.push_back(kNumber);
  put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(f)) ^ (uint64_t{1} << 63));
  if (frac == 0 && err == 0) {
    out.push_back('\0');
    return;
  }
  if (err < 0) frac = std::nextafter(frac, 0.0);
  out.push_back('\x01');
  put_u64(out, std::bit_cast<uint64_t>(frac));  // a positive double below 1: bits order by value
  if (err != 0) put_u64(out, ordered_double(d));
}

void put_escaped(std::string& out, std::string_view bytes) {
  for (char c : bytes) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xff');
  }
  out.push_back('\0');
  out.push_back('\x01');
}

// The deepest JSON document a key holds (SQLite's JSON depth limit): put_json recurses
// per level, so a deeper document is refused instead of overflowing the stack.
constexpr int kMaxJsonKeyDepth = 1000;

void put_json(std::string& out, const nlohmann::json& j, int depth = 0) {
  using T = nlohmann::json::value_t;
  if (depth > kMaxJsonKeyDepth)
    throw sdk::Error(QRS_RANGE, "store: a JSON key value nested deeper than " + std::to_string(kMaxJsonKeyDepth) +
                                    " levels cannot be encoded");
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
      for (const auto& e : j) put_json(out, e, depth + 1);
      out.push_back('\0');
      return;
    case T::object:
      out.push_back('\x06');
      for (auto it = j.begin(); it != j.end(); ++it) {
        out.push_back('\x01');
        put_escaped(out, it.key());
      }
      out.push_back('\0');
      for (auto it = j.begin(); it != j.end(); ++it) put_json(out, it.value(), depth + 1);
      return;
    default: out.push_back('\x01'); return;  // discarded / binary: never in parsed text
  }
}

// ---- TIMESPAN: the host's ISO 8601 duration grammar (types/temporal.cc) ----

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool read_fraction(std::string_view s, size_t* i, int64_t* nanos) {
  size_t k = *i + 1, start = k;
  int64_t v = 0;
  while (k < s.size() && is_digit(s[k])) {
    if (k - start >= 9) return false;
    v = v * 10 + (s[k] - '0');
    ++k;
  }
  size_t n = k - start;
  if (n == 0) return false;
  for (size_t p = n; p < 9; ++p) v *= 10;
  *nanos = v;
  *i = k;
  return true;
}

// Elapsed nanoseconds of the duration `s` from 2024-01-01T00:00, or false when `s` is
// not a duration (same grammar and arithmetic as the host's compare_timespan_texts).
bool timespan_nanos(std::string_view s, __int128* out) {
  constexpr int64_t kSec = 1'000'000'000, kMin = 60 * kSec, kHour = 60 * kMin, kDay = 24 * kHour;
  size_t i = 0;
  int sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    sign = s[i] == '-' ? -1 : 1;
    ++i;
  } else if (s.substr(0, 3) == "\xE2\x88\x92") {
    sign = -1;
    i = 3;
  }
  if (i >= s.size() || (s[i] != 'P' && s[i] != 'p')) return false;
  ++i;
  int64_t date[4] = {0, 0, 0, 0};  // years, months, weeks, days
  int64_t clock[6] = {0, 0, 0, 0, 0, 0};  // hours, minutes, seconds, ms, us, ns
  bool any = false;
  const char kDateUnits[] = {'Y', 'M', 'W', 'D'};
  int next_unit = 0;
  // A run of at most 16 digits at i (false: too long).
  auto read_digits = [&](int64_t* v) {
    *v = 0;
    for (size_t start = i; i < s.size() && is_digit(s[i]); ++i) {
      if (i - start > 15) return false;
      *v = *v * 10 + (s[i] - '0');
    }
    return true;
  };
  // The unit letter at i among units[from..n) (case-insensitive), consumed; -1 when none.
  auto read_unit = [&](const char* units, int from, int n) {
    if (i >= s.size()) return -1;
    char u = s[i] >= 'a' && s[i] <= 'z' ? static_cast<char>(s[i] - 32) : s[i];
    for (int k = from; k < n; ++k)
      if (units[k] == u) {
        ++i;
        return k;
      }
    return -1;
  };
  while (i < s.size() && is_digit(s[i])) {
    int64_t v = 0;
    if (!read_digits(&v)) return false;
    int idx = read_unit(kDateUnits, next_unit, 4);
    if (idx < 0) return false;
    next_unit = idx + 1;
    any = true;
    date[idx] = v;
  }
  if (i < s.size() && (s[i] == 'T' || s[i] == 't')) {
    ++i;
    const char kTimeUnits[] = {'H', 'M', 'S'};
    int next = 0;
    bool any_time = false, fractional = false;
    while (i < s.size()) {
      if (fractional || !is_digit(s[i])) return false;
      int64_t v = 0;
      if (!read_digits(&v)) return false;
      int64_t frac = 0;
      if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
        if (!read_fraction(s, &i, &frac)) return false;
        fractional = true;
      }
      int idx = read_unit(kTimeUnits, next, 3);
      if (idx < 0) return false;
      next = idx + 1;
      any_time = true;
      int64_t extra = 0;
      switch (idx) {
        case 0: clock[0] = v; extra = frac * 3600; break;
        case 1: clock[1] = v; extra = frac * 60; break;
        default: clock[2] = v; extra = frac; break;
      }
      if (extra) {
        if (idx == 0) {
          clock[1] = extra / kMin;
          extra %= kMin;
        }
        if (idx <= 1) {
          clock[2] += extra / kSec;
          extra %= kSec;
        }
        clock[3] = extra / 1'000'000;
        clock[4] = (extra / 1'000) % 1'000;
        clock[5] = extra % 1'000;
      }
    }
    if (!any_time) return false;
    any = true;
  }
  if (i != s.size() || !any) return false;
  // From 2024-01-01 (day 1: no month-end constraint applies).
  int64_t total = 2024 * 12 + sign * (date[0] * 12 + date[1]);
  int64_t year = total >= 0 ? total / 12 : -((-total + 11) / 12);
  int64_t month = total - year * 12 + 1;
  int64_t days = days_from_civil(year, month, 1) - days_from_civil(2024, 1, 1) + sign * (date[2] * 7 + date[3]);
  __int128 clock_ns = static_cast<__int128>(clock[0]) * kHour + static_cast<__int128>(clock[1]) * kMin +
                      static_cast<__int128>(clock[2]) * kSec + static_cast<__int128>(clock[3]) * 1'000'000 +
                      static_cast<__int128>(clock[4]) * 1'000 + clock[5];
  *out = static_cast<__int128>(days) * kDay + sign * clock_ns;
  return true;
}

void put_normalized(std::string& out, std::string_view s, Normalizer n) {
  switch (n) {
    case Normalizer::kTimespan: {
      __int128 ns;
      if (!timespan_nanos(s, &ns)) {
        out.push_back('\x7f');
        put_escaped(out, s);
        return;
      }
      out.push_back('\x01');
      auto u = static_cast<unsigned __int128>(ns) ^ (static_cast<unsigned __int128>(1) << 127);
      for (int sh = 120; sh >= 0; sh -= 8) out.push_back(static_cast<char>(static_cast<uint64_t>(u >> sh) & 0xFF));
      return;
    }
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
    case Normalizer::kNocase: {  // the engine's NOCASE fold (store format 2; format 1 folded A-Z only)
      put_escaped(out, sdk::nocase_fold(s));
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
  if (iequals(name, "TIMESPAN")) return Normalizer::kTimespan;
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
                                            "NOCASE, RTRIM, and the JSON and TIMESPAN orders)");
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
