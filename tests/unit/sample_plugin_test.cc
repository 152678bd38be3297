// tests/unit/sample_plugin_test.cc — the sample plugin (NATURAL collation, fnv1a) through
// the raw C ABI, loaded with dlopen like the host does.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quereus/abi.h"

#ifndef QUEREUS_PLUGIN_DIR
#error "QUEREUS_PLUGIN_DIR must name the directory holding sample.so"
#endif

namespace {

struct Captured {
  std::vector<std::pair<std::string, qrs_collation_def>> collations;
  std::vector<std::pair<std::string, qrs_scalar_function_def>> scalars;
  std::vector<std::pair<std::string, qrs_aggregate_function_def>> aggregates;
};

qrs_status capture_module(void*, qrs_string, qrs_module, qrs_error*) { return QRS_UNSUPPORTED; }
qrs_status capture_scalar(void* ctx, const qrs_scalar_function_def* d, qrs_error*) {
  static_cast<Captured*>(ctx)->scalars.emplace_back(std::string(d->name.data, d->name.len), *d);
  return QRS_OK;
}
qrs_status capture_aggregate(void* ctx, const qrs_aggregate_function_def* d, qrs_error*) {
  static_cast<Captured*>(ctx)->aggregates.emplace_back(std::string(d->name.data, d->name.len), *d);
  return QRS_OK;
}
qrs_status capture_collation(void* ctx, const qrs_collation_def* d, qrs_error*) {
  static_cast<Captured*>(ctx)->collations.emplace_back(std::string(d->name.data, d->name.len), *d);
  return QRS_OK;
}

class SamplePluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    void* h = dlopen(QUEREUS_PLUGIN_DIR "/sample.so", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    auto entry = reinterpret_cast<qrs_plugin_entry_v1_fn>(dlsym(h, QRS_PLUGIN_ENTRY_V1));
    auto manifest = reinterpret_cast<qrs_plugin_manifest_v1_fn>(dlsym(h, QRS_PLUGIN_MANIFEST_V1));
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(manifest, nullptr);
    manifest_ = manifest();
    captured_ = new Captured();
    qrs_host_api host{sizeof host, QRS_ABI_MAJOR, QRS_ABI_MINOR, {"test", 4}, nullptr, nullptr};
    qrs_registrar reg{sizeof reg,      captured_,      nullptr,           0,
                      &capture_module, &capture_scalar, &capture_aggregate, &capture_collation};
    ASSERT_EQ(entry(&host, &reg, nullptr), QRS_OK);
    ASSERT_EQ(captured_->collations.size(), 1u);
    ASSERT_EQ(captured_->scalars.size(), 1u);
    ASSERT_EQ(captured_->aggregates.size(), 2u);
  }
  static void TearDownTestSuite() {
    for (auto& [n, c] : captured_->collations) c.release_user(c.user);
    for (auto& [n, f] : captured_->scalars) f.release_user(f.user);
    for (auto& [n, f] : captured_->aggregates) f.release_user(f.user);
    delete captured_;
  }

  static int natural(const std::string& a, const std::string& b) {
    const qrs_collation_def& c = captured_->collations[0].second;
    int r = c.compare(c.user, a.data(), a.size(), b.data(), b.size());
    return (r > 0) - (r < 0);
  }

  struct Sink {
    qrs_result_sink sink{sizeof(qrs_result_sink), this, &Sink::set};
    qrs_value value{};
    static void set(qrs_result_sink* s, const qrs_value* v) { static_cast<Sink*>(s->ctx)->value = *v; }
  };

  static qrs_value fnv1a(const qrs_value& arg) {
    const qrs_scalar_function_def& f = captured_->scalars[0].second;
    Sink sink;
    EXPECT_EQ(f.call(f.user, &arg, 1, &sink.sink, nullptr), QRS_OK);
    return sink.value;
  }
  static qrs_value text(const char* s) {
    qrs_value v{};
    v.type = QRS_TYPE_TEXT;
    v.u.str = {s, std::strlen(s)};
    return v;
  }

  static inline Captured* captured_ = nullptr;
  static inline std::string manifest_;
};

TEST_F(SamplePluginTest, RegistersNaturalAndFnv1aAsDeclared) {
  EXPECT_EQ(captured_->collations[0].first, "NATURAL");
  EXPECT_EQ(captured_->collations[0].second.flags, QRS_COLLATION_REPLICABLE | QRS_COLLATION_ORDER_PRESERVING);
  const qrs_scalar_function_def& f = captured_->scalars[0].second;
  EXPECT_EQ(captured_->scalars[0].first, "fnv1a");
  EXPECT_EQ(f.num_args, 1);
  EXPECT_EQ(f.flags, QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE);
  EXPECT_EQ(f.return_type, static_cast<uint32_t>(QRS_LT_INTEGER));
  EXPECT_NE(manifest_.find("\"NATURAL\""), std::string::npos);
  EXPECT_NE(manifest_.find("\"fnv1a\""), std::string::npos);
}

TEST_F(SamplePluginTest, NaturalOrdersDigitRunsNumerically) {
  EXPECT_LT(natural("a2", "a10"), 0);
  EXPECT_GT(natural("a10", "a2"), 0);
  EXPECT_LT(natural("file9.txt", "file10.txt"), 0);
  EXPECT_EQ(natural("a01", "a1"), 0);
  EXPECT_LT(natural("x2y3", "x2y10"), 0);
  EXPECT_LT(natural("99999999999999999999999", "100000000000000000000000"), 0);  // beyond int64
  EXPECT_LT(natural("a", "a1"), 0);
  EXPECT_EQ(natural("", ""), 0);
}

TEST_F(SamplePluginTest, NaturalIsCaseInsensitive) {
  EXPECT_EQ(natural("ABC", "abc"), 0);
  EXPECT_EQ(natural("Item7", "iTEM7"), 0);
  EXPECT_LT(natural("apple", "Banana"), 0);
  EXPECT_GT(natural("Zoo", "apple"), 0);
}

TEST_F(SamplePluginTest, NaturalIsATotalOrderOnASample) {
  std::vector<std::string> s = {"a", "A1", "a2", "a10", "a010", "b", "-", "~", "1", "01", "10", "", "a1b", "a1B2", "z"};
  for (auto& x : s)
    for (auto& y : s) {
      EXPECT_EQ(natural(x, y), -natural(y, x)) << x << " " << y;
      for (auto& z : s)
        if (natural(x, y) <= 0 && natural(y, z) <= 0) {
          EXPECT_LE(natural(x, z), 0) << x << " " << y << " " << z;
        }
    }
}

TEST_F(SamplePluginTest, Fnv1aKnownVectors) {
  qrs_value r = fnv1a(text(""));
  ASSERT_EQ(r.type, static_cast<uint32_t>(QRS_TYPE_INTEGER));
  EXPECT_EQ(static_cast<uint64_t>(r.u.integer), 0xcbf29ce484222325ULL);
  EXPECT_EQ(static_cast<uint64_t>(fnv1a(text("a")).u.integer), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(static_cast<uint64_t>(fnv1a(text("foobar")).u.integer), 0x85944171f73967e8ULL);
}

TEST_F(SamplePluginTest, Fnv1aNullIntegerAndBlob) {
  EXPECT_EQ(fnv1a(qrs_value{}).type, static_cast<uint32_t>(QRS_TYPE_NULL));
  qrs_value i{};
  i.type = QRS_TYPE_INTEGER;
  i.u.integer = -123;
  EXPECT_EQ(fnv1a(i).u.integer, fnv1a(text("-123")).u.integer);
  qrs_value b{};
  b.type = QRS_TYPE_BLOB;
  b.u.str = {"a", 1};
  EXPECT_EQ(fnv1a(b).u.integer, fnv1a(text("a")).u.integer);
}

// SDK 1.9: the aggregates declare their algebra through the appended slots, and the
// slots behave: xor_agg folds a retraction through negate, longest has no negate.
TEST_F(SamplePluginTest, AggregatesDeclareTheirAlgebra) {
  const qrs_aggregate_function_def* x = nullptr;
  const qrs_aggregate_function_def* l = nullptr;
  for (auto& [n, f] : captured_->aggregates) (n == "xor_agg" ? x : l) = &f;
  ASSERT_NE(x, nullptr);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(x->struct_size, sizeof(qrs_aggregate_function_def));
  EXPECT_TRUE(x->merge && x->negate && x->decode);
  EXPECT_EQ(x->algebra_flags & QRS_AGG_DECODE_EXACT, 0u);
  EXPECT_TRUE(l->merge && l->decode);
  EXPECT_EQ(l->negate, nullptr);

  auto integer = [](int64_t v) {
    qrs_value q{};
    q.type = QRS_TYPE_INTEGER;
    q.u.integer = v;
    return q;
  };
  auto state_of = [&](std::initializer_list<int64_t> rows) {
    void* st = nullptr;
    EXPECT_EQ(x->init(x->user, &st, nullptr), QRS_OK);
    for (int64_t r : rows) {
      qrs_value q = integer(r);
      EXPECT_EQ(x->step(x->user, st, &q, 1, nullptr), QRS_OK);
    }
    return st;
  };
  auto final_of = [&](void* st) {
    Sink sink;
    EXPECT_EQ(x->final(x->user, st, &sink.sink, nullptr), QRS_OK);
    return sink.value;
  };
  // decode(5 ^ 3) then merge a retraction of 3: 5 is left.
  void* stored = state_of({});
  qrs_value six = integer(5 ^ 3);
  ASSERT_EQ(x->decode(x->user, stored, &six, nullptr), QRS_OK);
  void* gone = state_of({3});
  ASSERT_EQ(x->negate(x->user, gone, nullptr), QRS_OK);
  ASSERT_EQ(x->merge(x->user, stored, gone, nullptr), QRS_OK);
  qrs_value v = final_of(stored);
  EXPECT_EQ(v.type, QRS_TYPE_INTEGER);
  EXPECT_EQ(v.u.integer, 5);
  x->free_state(x->user, gone);
  x->free_state(x->user, stored);
}

}  // namespace
