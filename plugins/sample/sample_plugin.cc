// plugins/sample/sample_plugin.cc — a small third-party-style plugin: the NATURAL
// collation, the fnv1a() scalar function and two aggregates that declare their algebra
// (xor_agg, longest). Built against sdk/include only.
#include <charconv>
#include <cstdint>
#include <memory>
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

// xor_agg(x): the bitwise XOR of a group's non-NULL INTEGERs (NULL for none). Declares
// its whole algebra (SDK 1.9), so a materialized view over it folds inserts, deletes and
// updates into the stored value: XOR is its own inverse. `count` is the contributions
// (negative for a retraction); a decoded state's count is unknown, so it is pinned
// non-empty (decode is not exact: the engine retracts through it only with a NOT NULL
// argument and rows left in the group).
class XorAgg final : public sdk::Aggregate {
 public:
  void step(std::span<const sdk::Value> args) override {
    const sdk::Value& v = args[0];
    if (v.is_null()) return;
    if (v.type() != sdk::ValueType::kInteger) throw sdk::Error::mismatch("xor_agg() takes INTEGER values");
    acc_ ^= v.as_integer();
    ++count_;
  }
  sdk::Value finish() override { return decoded_ || count_ != 0 ? sdk::Value::integer(acc_) : sdk::Value::null(); }
  void merge(const sdk::Aggregate& other) override {
    const auto& o = static_cast<const XorAgg&>(other);
    acc_ ^= o.acc_;
    count_ += o.count_;
    decoded_ = decoded_ || o.decoded_;
  }
  void negate() override { count_ = -count_; }  // x ^ x = 0: the value is its own inverse
  void decode(const sdk::Value& stored) override {
    if (stored.is_null()) return;  // the empty state
    acc_ = stored.as_integer();
    decoded_ = true;
  }

 private:
  int64_t acc_ = 0;
  int64_t count_ = 0;
  bool decoded_ = false;
};

// longest(x): the longest TEXT of a group (of two as long, the greater by bytes; NULL for
// none). Its algebra merges and decodes but has no inverse: a view over it folds inserts
// and recomputes a group a delete or update reaches (tighten-only, like max).
class LongestAgg final : public sdk::Aggregate {
 public:
  void step(std::span<const sdk::Value> args) override {
    if (!args[0].is_null()) offer(std::string(args[0].bytes()));
  }
  sdk::Value finish() override { return has_ ? sdk::Value::text(best_) : sdk::Value::null(); }
  void merge(const sdk::Aggregate& other) override {
    const auto& o = static_cast<const LongestAgg&>(other);
    if (o.has_) offer(o.best_);
  }
  void decode(const sdk::Value& stored) override {
    if (!stored.is_null()) offer(std::string(stored.bytes()));
  }

 private:
  void offer(std::string s) {
    if (!has_ || s.size() > best_.size() || (s.size() == best_.size() && s > best_)) best_ = std::move(s);
    has_ = true;
  }
  bool has_ = false;
  std::string best_;
};

void register_sample(sdk::Registrar& r) {
  r.add_collation("NATURAL", QRS_COLLATION_REPLICABLE | QRS_COLLATION_ORDER_PRESERVING, natural_compare);
  r.add_scalar("fnv1a", 1, QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE, QRS_LT_INTEGER, fnv1a);
  const uint32_t pure = QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE;
  r.add_aggregate("xor_agg", 1, pure, QRS_LT_INTEGER, [] { return std::make_unique<XorAgg>(); },
                  {.merge = true, .negate = true, .decode = true});
  r.add_aggregate("longest", 1, pure, QRS_LT_TEXT, [] { return std::make_unique<LongestAgg>(); },
                  {.merge = true, .decode = true});
}

}  // namespace
}  // namespace quereus::sample

QUEREUS_PLUGIN(kSampleManifest, quereus::sample::register_sample)
