// The store module's key encoding (golden vectors + an order property test), its row
// codec and its KV layer over LevelDB. See modules/store/key_codec.h for the layout.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../modules/store/key_codec.h"
#include "../../modules/store/kv.h"
#include "../../modules/store/row_codec.h"
#include "types/json_value.h"
#include "types/temporal.h"
#include "types/collation.h"

namespace quereus::store {
namespace {

using sdk::Value;

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

std::string enc(const Value& v, Normalizer n = Normalizer::kBinary, bool desc = false) {
  std::string out;
  encode_component(out, v.to_c(), n, desc);
  return hex(out);
}

TEST(StoreKeyCodec, GoldenVectors) {
  EXPECT_EQ(enc(Value()), "05");
  EXPECT_EQ(enc(Value::integer(0)), "11800000000000000000");
  EXPECT_EQ(enc(Value::integer(1)), "11800000000000000100");
  EXPECT_EQ(enc(Value::integer(-1)), "117fffffffffffffff00");
  EXPECT_EQ(enc(Value::integer(std::numeric_limits<int64_t>::max())), "11ffffffffffffffff00");
  EXPECT_EQ(enc(Value::integer(std::numeric_limits<int64_t>::min())), "11000000000000000000");
  EXPECT_EQ(enc(Value::boolean(true)), enc(Value::integer(1)));
  EXPECT_EQ(enc(Value::real(2.0)), enc(Value::integer(2)));  // equal values, equal keys
  EXPECT_EQ(enc(Value::real(-0.0)), enc(Value::integer(0)));
  EXPECT_EQ(enc(Value::real(1.5)), "118000000000000001013fe0000000000000");
  EXPECT_EQ(enc(Value::real(-0.5)), "117fffffffffffffff013fe0000000000000");
  EXPECT_EQ(enc(Value::real(std::nan(""))), "0f");
  EXPECT_EQ(enc(Value::real(INFINITY)), "12fff0000000000000");
  EXPECT_EQ(enc(Value::real(-INFINITY)), "10000fffffffffffff");
  EXPECT_EQ(enc(Value::text("abc")), "206162630001");
  EXPECT_EQ(enc(Value::text("ABC"), Normalizer::kNocase), "206162630001");
  EXPECT_EQ(enc(Value::text("ab  "), Normalizer::kRtrim), "2061620001");
  EXPECT_EQ(enc(Value::text(std::string("a\0b", 3))), "206100ff620001");
  EXPECT_EQ(enc(Value::blob(std::string("\x00\xff", 2))), "3000ffff0001");
  EXPECT_EQ(enc(Value::json("{\"a\":1}")), "407b2261223a317d0001");
  // DESC: every byte inverted, except NULL (first in both directions).
  EXPECT_EQ(enc(Value::integer(1), Normalizer::kBinary, true), "ee7ffffffffffffffeff");
  EXPECT_EQ(enc(Value::text("a"), Normalizer::kBinary, true), "df9efffe");
  EXPECT_EQ(enc(Value(), Normalizer::kBinary, true), "05");
  // A two-member key (1, 'x') is the concatenation.
  KeyCodec codec({KeyMember{0, false, Normalizer::kBinary, {}}, KeyMember{1, false, Normalizer::kBinary, {}}});
  std::vector<qrs_value> row{Value::integer(1).to_c(), Value::text("x").to_c()};
  Value x = Value::text("x");
  row[1] = x.to_c();
  std::string key;
  codec.encode_row(key, row);
  EXPECT_EQ(hex(key), "11800000000000000100" "20780001");
}

TEST(StoreKeyCodec, NormalizerOfCollations) {
  EXPECT_EQ(normalizer_for("BINARY"), Normalizer::kBinary);
  EXPECT_EQ(normalizer_for("nocase"), Normalizer::kNocase);
  EXPECT_EQ(normalizer_for("RTRIM"), Normalizer::kRtrim);
  EXPECT_EQ(normalizer_for("TIMESPAN"), Normalizer::kTimespan);
  EXPECT_FALSE(normalizer_for("NATURAL").has_value());
  EXPECT_EQ(normalizer_for("JSON"), Normalizer::kJson);
  sdk::TableSchema s;
  s.table_name = "t";
  s.columns.push_back(sdk::ColumnDef{"d", "text", QRS_LT_TEXT, true, true, sdk::Collation()});
  sdk::KeyColumn k;
  k.collation = sdk::Collation("NATURAL", nullptr, nullptr);
  s.primary_key.push_back(k);
  try {
    KeyCodec::of(s);
    FAIL() << "an unencodable collation was accepted";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_UNSUPPORTED);
    EXPECT_NE(e.message().find("'d'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("NATURAL"), std::string::npos) << e.message();
  }
}

// Random values of every class, with the edge cases close together.
Value random_value(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  static const char* kTexts[] = {"", "a", "A", "ab", "aB", "a ", "a  ", "b", "B", " a", "\x01", "z\xc3\xa9"};
  switch (kind(rng)) {
    case 0: return Value();
    case 1: return Value::integer(static_cast<int64_t>(rng()));
    case 2: return Value::integer(pick(21) - 10);
    case 3: return Value::real(static_cast<double>(pick(41) - 20) / 4.0);
    case 4: {
      static const double kEdges[] = {-INFINITY, INFINITY, std::nan(""), -9223372036854775808.0,
                                      9223372036854775808.0, 1e300, -1e300, 4503599627370496.5, 9007199254740993.0,
                                      -0.0, 1e-300};
      return Value::real(kEdges[pick(11)]);
    }
    case 5: {  // int64 extremes and their neighbours as reals
      int64_t base = pick(2) ? std::numeric_limits<int64_t>::max() - pick(3) : std::numeric_limits<int64_t>::min() + pick(3);
      return pick(2) ? Value::integer(base) : Value::real(static_cast<double>(base));
    }
    case 6: return Value::boolean(pick(2) == 1);
    case 7: return Value::text(kTexts[pick(12)]);
    case 8: {
      std::string s;
      int n = pick(5);
      for (int i = 0; i < n; ++i) s.push_back(static_cast<char>("\0aA \xff"[pick(5)]));
      return Value::text(s);
    }
    case 9: {
      std::string s;
      int n = pick(4);
      for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(pick(3) == 0 ? 0 : rng() & 0xFF));
      return Value::blob(s);
    }
    case 10: return Value::json(pick(2) ? "[1,2]" : "{\"a\":1}");
    default: return Value::real(static_cast<double>(static_cast<int64_t>(rng() >> pick(60))) + 0.5);
  }
}

// mem's key order: NULL first in both directions, otherwise compare_values (negated DESC).
int key_order(const Value& a, const Value& b, const sdk::Collation& c, bool desc) {
  if (a.is_null() || b.is_null()) return a.is_null() == b.is_null() ? 0 : (a.is_null() ? -1 : 1);
  int r = sdk::compare_values(a, b, c);
  return desc ? -r : r;
}

TEST(StoreKeyCodec, ByteOrderIsValueOrder) {
  std::mt19937_64 rng(20261201);
  struct Coll {
    Normalizer n;
    sdk::Collation c;
  };
  std::vector<Coll> colls{{Normalizer::kBinary, sdk::Collation()},
                          {Normalizer::kNocase, sdk::Collation(Collation::nocase().ref())},
                          {Normalizer::kRtrim, sdk::Collation(Collation::rtrim().ref())}};
  int checked = 0;
  for (const Coll& coll : colls) {
    for (bool desc : {false, true}) {
      for (int i = 0; i < 20000; ++i) {
        Value a = random_value(rng), b = random_value(rng);
        std::string ea, eb;
        encode_component(ea, a.to_c(), coll.n, desc);
        encode_component(eb, b.to_c(), coll.n, desc);
        int bytes = ea.compare(eb);
        bytes = (bytes > 0) - (bytes < 0);
        ASSERT_EQ(bytes, key_order(a, b, coll.c, desc))
            << a.debug_string() << " vs " << b.debug_string() << " under " << coll.c.name() << (desc ? " DESC" : "");
        // Self-delimiting: a component followed by anything still orders by the component.
        if (bytes != 0) {
          ASSERT_EQ((ea + "\xff").compare(eb + "\x00") > 0, bytes > 0) << a.debug_string() << " / " << b.debug_string();
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 120000);
}

// Under the JSON collation (the host's structural order for JSON key columns) byte order
// is the host's jsonv::compare_text order, for JSON and TEXT values alike.
TEST(StoreKeyCodec, JsonStructuralOrder) {
  static const char* kDocs[] = {"null", "true", "false", "0", "1", "1.5", "-2", "2.0", "1e20", "9223372036854775807",
                                "\"a\"", "\"b\"", "\"\"", "[]", "[1]", "[1,2]", "[2]", "[null]", "[[1]]", "[1,[2]]",
                                "{}", "{\"a\":1}", "{\"a\":2}", "{\"b\":0}", "{\"a\":1,\"b\":0}", "{\"a\":[1]}",
                                "{\"a\":{\"c\":1}}", "{\"aa\":1}"};
  EXPECT_EQ(enc(Value::json("[1,\"x\"]"), Normalizer::kJson), "40" "05" "03" "11" "8000000000000001" "00" "04" "78" "0001" "00");
  EXPECT_EQ(enc(Value::json("{\"a\":null}"), Normalizer::kJson), "40" "06" "01610001" "00" "01");
  sdk::Collation json("JSON", [](void*, const char* a, size_t an, const char* b, size_t bn) {
    return jsonv::compare_text(std::string_view(a, an), std::string_view(b, bn));
  }, nullptr);
  int checked = 0;
  for (bool desc : {false, true})
    for (const char* x : kDocs)
      for (const char* y : kDocs)
        for (int kinds = 0; kinds < 2; ++kinds) {
          Value a = kinds ? Value::text(x) : Value::json(x), b = kinds ? Value::text(y) : Value::json(y);
          std::string ea, eb;
          encode_component(ea, a.to_c(), Normalizer::kJson, desc);
          encode_component(eb, b.to_c(), Normalizer::kJson, desc);
          int bytes = ea.compare(eb);
          bytes = (bytes > 0) - (bytes < 0);
          ASSERT_EQ(bytes, key_order(a, b, json, desc)) << x << " vs " << y << (desc ? " DESC" : "");
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 28 * 28 * 2);
}

// Under the TIMESPAN collation byte order is the host's compare_timespan_texts order
// (elapsed time from 2024-01-01; calendar units by the calendar).
TEST(StoreKeyCodec, TimespanOrder) {
  static const char* kSpans[] = {"PT0S", "PT1S", "PT60S", "PT1M", "PT1H", "PT59M", "PT0.5S", "PT0.000000001S", "P1D",
                                 "PT24H", "PT25H", "P1W", "P7D", "P1M", "P31D", "P30D", "P1Y", "P366D", "P365D",
                                 "-PT1S", "-P1D", "-P1M", "-P1Y2M", "P1Y2M3DT4H5M6.5S", "pt1h", "PT1.5H", "PT90M",
                                 "P2M", "P60D", "not a span", "P", "PT"};
  sdk::Collation timespan("TIMESPAN", [](void*, const char* a, size_t an, const char* b, size_t bn) {
    return temporal::compare_timespan_texts(std::string_view(a, an), std::string_view(b, bn));
  }, nullptr);
  auto parses = [](const char* s) { return temporal::parse_duration(s).has_value(); };
  int checked = 0;
  for (bool desc : {false, true})
    for (const char* x : kSpans)
      for (const char* y : kSpans) {
        if (!parses(x) || !parses(y)) continue;  // unparseable text: after every duration (documented)
        Value a = Value::text(x), b = Value::text(y);
        std::string ea, eb;
        encode_component(ea, a.to_c(), Normalizer::kTimespan, desc);
        encode_component(eb, b.to_c(), Normalizer::kTimespan, desc);
        int bytes = ea.compare(eb);
        bytes = (bytes > 0) - (bytes < 0);
        ASSERT_EQ(bytes, key_order(a, b, timespan, desc)) << x << " vs " << y << (desc ? " DESC" : "");
        ++checked;
      }
  EXPECT_GT(checked, 1500);
  EXPECT_EQ(enc(Value::text("PT1H"), Normalizer::kTimespan), enc(Value::text("PT60M"), Normalizer::kTimespan));
  EXPECT_EQ(enc(Value::text("PT1S"), Normalizer::kTimespan), "2001" "80" "0000000000000000000000" "3b9aca00");
}

TEST(StoreRowCodec, RoundTripsEveryType) {
  sdk::Row row{Value(), Value::integer(-5), Value::integer(std::numeric_limits<int64_t>::min()), Value::real(2.25),
               Value::boolean(true), Value::text("h\xc3\xa9llo"), Value::blob(std::string("\0\x01", 2)),
               Value::json("{\"a\":[1]}"), Value::text("")};
  std::string bytes = encode_row(row);
  sdk::RowPtr back = decode_row_owned(bytes);
  ASSERT_EQ(back->size(), row.size());
  for (size_t i = 0; i < row.size(); ++i) EXPECT_TRUE((*back)[i] == row[i]) << i << ": " << (*back)[i].debug_string();
  std::vector<qrs_value> cells;
  try {
    decode_row(bytes.substr(0, bytes.size() - 2), cells, "t");
    FAIL() << "a truncated row decoded";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_CORRUPT);
    EXPECT_NE(e.message().find("row of t"), std::string::npos);
  }
}

// Every malformed stored row is CORRUPT naming the table, never a crash or an
// out-of-bounds read (issue 15: a corrupted row crashed reads).
void expect_corrupt(const std::string& bytes, const std::string& why) {
  std::vector<qrs_value> cells;
  try {
    decode_row(bytes, cells, "t");
    FAIL() << "decoded: " << hex(bytes);
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_CORRUPT) << hex(bytes);
    EXPECT_NE(e.message().find("corrupt row of t: " + why), std::string::npos) << e.message();
  }
}

TEST(StoreRowCodec, MalformedRowsAreCorrupt) {
  using namespace std::string_literals;
  expect_corrupt("", "unknown row format");
  expect_corrupt("\x03\x00"s, "unknown row format");
  // The 02 form (a sidecar, then a row): an empty sidecar is written as 01, never as 02.
  expect_corrupt("\x02\x00"s, "bad sidecar length");
  expect_corrupt("\x02\x00\x01\x00"s, "bad sidecar length");
  expect_corrupt("\x02\x05" "ab"s, "bad sidecar length");
  expect_corrupt("\x02\x01x"s, "unknown row format");
  expect_corrupt("\x02\x01x\x02\x01y\x01\x00"s, "unknown row format");  // a sidecar inside a sidecar
  expect_corrupt("\x01"s, "bad cell count");
  expect_corrupt("\x01\x80"s, "bad cell count");                           // unterminated varint
  expect_corrupt("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"s, "bad cell count");  // 2^64-ish
  expect_corrupt("\x01\x05\x00"s, "bad cell count");                       // 5 cells in 1 byte
  expect_corrupt("\x01\x02\x01\x02"s, "truncated");
  expect_corrupt("\x01\x01\x07"s, "unknown cell type");
  expect_corrupt("\x01\x01\x01"s, "bad integer");
  expect_corrupt("\x01\x01\x01\x80\x00"s, "bad integer");             // overlong varint
  expect_corrupt("\x01\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"s, "bad integer");  // > 64 bits
  expect_corrupt("\x01\x01\x02\x00\x00"s, "truncated real");
  expect_corrupt("\x01\x01\x05"s, "truncated boolean");
  expect_corrupt("\x01\x01\x05\x02"s, "bad boolean");
  expect_corrupt("\x01\x01\x03\x05hi"s, "bad string length");
  expect_corrupt("\x01\x01\x03\xff\xff\xff\xff\xff\xff\xff\xff\x7f"s, "bad string length");
  expect_corrupt("\x01\x01\x00\x00"s, "trailing bytes");
  expect_corrupt("\x01\x00\x00"s, "trailing bytes");
}

TEST(StoreRowCodec, DecodingIsExactlyTheInverseOfEncoding) {
  // Every prefix and every one-byte change of a real row either decodes to cells that
  // encode back to the same bytes, or is CORRUPT.
  sdk::Row row{Value(), Value::integer(300), Value::real(-0.5), Value::boolean(false), Value::text("abc"),
               Value::blob(std::string("\0\xff", 2)), Value::json("[1]")};
  const std::string bytes = encode_row(row);
  std::vector<qrs_value> cells;
  auto check = [&](const std::string& b) {
    try {
      decode_row(b, cells, "t");
    } catch (const sdk::Error& e) {
      EXPECT_EQ(e.code(), QRS_CORRUPT);
      return;
    }
    EXPECT_EQ(hex(encode_row(cells)), hex(b));
  };
  for (size_t n = 0; n <= bytes.size(); ++n) check(bytes.substr(0, n));
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int v : {0x00, 0x01, 0x02, 0x7f, 0x80, 0xff}) {
      std::string b = bytes;
      b[i] = static_cast<char>(v);
      check(b);
    }
}

TEST(StoreRowCodec, VarintsAreCanonical) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 63, ~uint64_t{0}}) {
    std::string b;
    put_varint(b, v);
    std::string_view in(b);
    uint64_t back = 0;
    ASSERT_TRUE(get_varint(in, &back));
    EXPECT_EQ(back, v);
    EXPECT_TRUE(in.empty());
  }
  for (std::string bad : {std::string("\x80\x00", 2), std::string("\x81\x80\x00", 3), std::string("\x80", 1),
                          std::string(10, '\xff') + "\x01", std::string(9, '\xff') + "\x02"}) {
    std::string_view in(bad);
    uint64_t v = 0;
    EXPECT_FALSE(get_varint(in, &v)) << hex(bad);
    EXPECT_EQ(in.size(), bad.size());  // nothing consumed
  }
}

// Found by tests/fuzz/codec_fuzz: in (-1, 0) the fraction 1 + d is inexact, so nearby
// reals (-1e-200 and -2e-200, -0.1 and its neighbour) encoded alike and collided as keys.
TEST(StoreKeyCodec, NegativeFractionsAboveMinusOneStayDistinctAndOrdered) {
  std::vector<double> xs = {-1.0, -0.9999999999999999, -0.5, -0.1, std::nextafter(-0.1, 0.0), -1e-17, -2e-200,
                            -1e-200, -4.9e-324, 0.0, 1e-300, 0.1, 0.5};
  for (bool desc : {false, true})
    for (size_t i = 0; i + 1 < xs.size(); ++i) {
      std::string a = enc(Value::real(xs[i]), Normalizer::kBinary, desc),
                  b = enc(Value::real(xs[i + 1]), Normalizer::kBinary, desc);
      EXPECT_TRUE(desc ? a > b : a < b) << xs[i] << " vs " << xs[i + 1] << (desc ? " desc" : "");
    }
  // Exact encodings are unchanged (stored keys stay readable).
  EXPECT_EQ(enc(Value::real(-0.5)), "117fffffffffffffff013fe0000000000000");
  EXPECT_EQ(enc(Value::real(-1.0)), enc(Value::integer(-1)));
}

TEST(StoreKeyCodec, DeepJsonKeyIsRefusedNotAStackOverflow) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  try {
    enc(Value::json(deep), Normalizer::kJson);
    FAIL() << "encoded a JSON key 100000 levels deep";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_RANGE);
    EXPECT_NE(e.message().find("nested deeper than 1000 levels"), std::string::npos) << e.message();
  }
  const std::string ok = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_FALSE(enc(Value::json(ok), Normalizer::kJson).empty());
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("quereus-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string str() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(StoreKv, BatchesGetsAndBoundedWalks) {
  TempDir dir;
  KvOptions o;
  o.path = dir.str();
  o.cache_size = 1 << 20;
  auto kv = open_leveldb(o);
  KvBatch b;
  for (char c = 'a'; c <= 'f'; ++c) b.put(std::string("k") + c, std::string(1, c));
  b.put("j", "before");
  b.put("l", "after");
  b.del("kc");
  kv->write(b, true);
  EXPECT_EQ(kv->get("ka").value_or(""), "a");
  EXPECT_FALSE(kv->get("kc").has_value());
  auto walk = [&](KvRange r, bool reverse) {
    std::string keys;
    auto it = kv->iterate(r, reverse);
    for (; it->valid(); it->next()) keys += std::string(it->key()) + ",";
    it->check();
    return keys;
  };
  EXPECT_EQ(walk({"k", prefix_end("k")}, false), "ka,kb,kd,ke,kf,");
  EXPECT_EQ(walk({"k", prefix_end("k")}, true), "kf,ke,kd,kb,ka,");
  EXPECT_EQ(walk({"kb", "ke"}, true), "kd,kb,");
  EXPECT_EQ(walk({"kb", "ke"}, false), "kb,kd,");
  EXPECT_EQ(walk({"k", ""}, true), "l,kf,ke,kd,kb,ka,");
  EXPECT_EQ(prefix_end("a\xff"), "b");
  EXPECT_EQ(prefix_end("\xff\xff"), "");
  (void)kv->approximate_bytes({"a", "z"});
}

TEST(StoreKv, OpenErrorsNameThePath) {
  TempDir dir;
  KvOptions o;
  o.path = dir.str();
  o.create_if_missing = false;
  try {
    open_leveldb(o);
    FAIL() << "opened a missing store";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_CANTOPEN);
    EXPECT_NE(e.message().find(dir.str()), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("create_if_missing"), std::string::npos) << e.message();
  }
  o.create_if_missing = true;
  auto first = open_leveldb(o);
  try {
    open_leveldb(o);
    FAIL() << "opened a locked store twice";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), QRS_BUSY);
    EXPECT_NE(e.message().find(dir.str()), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("locked"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace quereus::store
