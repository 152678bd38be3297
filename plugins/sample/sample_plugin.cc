// plugins/sample/sample_plugin.cc — a small third-party-style plugin: the NATURAL
// collation and the fnv1a() scalar function. Built against sdk/include only.
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "quereus/sdk.hpp"

extern const char kSampleManifest[];  // sample.plugin.json, embedded by CMake

namespace quereus::sample {
namespace {

namespace sdk = quereus::sdk;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
unsigned char ascii_lower(char c) {
  auto u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? static_cast<unsigned char>(u + 32) : u;
}

// NATURAL: runs of ASCII digits compare by numeric value (any length, leading zeros
// ignored, so "a01" == "a1"); everything else compares byte by byte, ASCII
// case-insensitively. A digit run against a non-digit compares the bytes, which is
// consistent because no non-digit byte lies inside '0'..'9': the order is total.
int natural_compare(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t si = i, sj = j;
      while (si < a.size() - 1 && a[si] == '0' && is_digit(a[si + 1])) ++si;  // skip leading zeros
      while (sj < b.size() - 1 && b[sj] == '0' && is_digit(b[sj + 1])) ++sj;
      for (i = si; i < a.size() && is_digit(a[i]);) ++i;
      for (j = sj; j < b.size() && is_digit(b[j]);) ++j;
      std::string_view x = a.substr(si, i - si), y = b.substr(sj, j - sj);
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;  // more digits: larger
      if (int c = x.compare(y)) return c < 0 ? -1 : 1;
      continue;
    }
    unsigned char x = ascii_lower(a[i++]), y = ascii_lower(b[j++]);
    if (x != y) return x < y ? -1 : 1;
  }
  bool a_done = i == a.size(), b_done = j == b.size();
  return a_done == b_done ? 0 : (a_done ? -1 : 1);
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// fnv1a(x): the 64-bit FNV-1a hash of x's bytes, as an INTEGER (the same 64 bits).
// TEXT / BLOB / JSON hash their bytes; INTEGER its decimal text; BOOLEAN "1" / "0";
// REAL its shortest round-trip decimal text (std::to_chars, identical everywhere); NULL
// gives NULL.
sdk::Value fnv1a(std::span<const sdk::Value> args) {
  const sdk::Value& v = args[0];
  char buf[64];
  std::string_view bytes;
  switch (v.type()) {
    case sdk::ValueType::kNull: return sdk::Value::null();
    case sdk::ValueType::kInteger: {
      auto r = std::to_chars(buf, buf + sizeof buf, v.as_integer());
      bytes = std::string_view(buf, static_cast<size_t>(r.ptr - buf));
      break;
    }
    case sdk::ValueType::kReal: {
      auto r = std::to_chars(buf, buf + sizeof buf, v.as_real());
      bytes = std::string_view(buf, static_cast<size_t>(r.ptr - buf));
      break;
    }
    case sdk::ValueType::kBoolean: bytes = v.as_boolean() ? "1" : "0"; break;
    default: bytes = v.bytes(); break;
  }
  return sdk::Value::integer(static_cast<int64_t>(fnv1a64(bytes)));
}

void register_sample(sdk::Registrar& r) {
  r.add_collation("NATURAL", QRS_COLLATION_REPLICABLE | QRS_COLLATION_ORDER_PRESERVING, natural_compare);
  r.add_scalar("fnv1a", 1, QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE, QRS_LT_INTEGER, fnv1a);
}

}  // namespace
}  // namespace quereus::sample

QUEREUS_PLUGIN(kSampleManifest, quereus::sample::register_sample)
