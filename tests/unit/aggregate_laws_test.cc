// sdk/include/quereus/aggregate_laws.hpp: a lawful algebra passes; each broken law is
// found and named.
#include "quereus/aggregate_laws.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

namespace sdk = quereus::sdk;

// XOR of non-NULL integers, NULL for none (the sample plugin's xor_agg).
class Xor : public sdk::Aggregate {
 public:
  void step(std::span<const sdk::Value> args) override {
    if (args[0].is_null()) return;
    acc_ ^= args[0].as_integer();
    ++count_;
  }
  sdk::Value finish() override { return decoded_ || count_ != 0 ? sdk::Value::integer(acc_) : sdk::Value::null(); }
  void merge(const sdk::Aggregate& other) override {
    const auto& o = static_cast<const Xor&>(other);
    acc_ ^= o.acc_;
    count_ += o.count_;
    decoded_ = decoded_ || o.decoded_;
  }
  void negate() override { count_ = -count_; }
  void decode(const sdk::Value& stored) override {
    if (stored.is_null()) return;
    acc_ = stored.as_integer();
    decoded_ = true;
  }

 protected:
  int64_t acc_ = 0;
  int64_t count_ = 0;
  bool decoded_ = false;
};

// A sum whose negate forgets to negate.
class SumNoNegate : public sdk::Aggregate {
 public:
  void step(std::span<const sdk::Value> args) override {
    if (args[0].is_null()) return;
    sum_ += args[0].as_integer();
    ++n_;
  }
  sdk::Value finish() override { return n_ != 0 ? sdk::Value::integer(sum_) : sdk::Value::null(); }
  void merge(const sdk::Aggregate& other) override {
    const auto& o = static_cast<const SumNoNegate&>(other);
    sum_ += o.sum_;
    n_ += o.n_;
  }
  void negate() override {}

 private:
  int64_t sum_ = 0;
  int64_t n_ = 0;
};

// "The first value": merge keeps its own, which is not commutative.
class First : public sdk::Aggregate {
 public:
  void step(std::span<const sdk::Value> args) override {
    if (!has_) value_ = args[0], has_ = true;
  }
  sdk::Value finish() override { return value_; }
  void merge(const sdk::Aggregate& other) override {
    const auto& o = static_cast<const First&>(other);
    if (!has_ && o.has_) value_ = o.value_, has_ = true;
  }

 private:
  sdk::Value value_;
  bool has_ = false;
};

// XOR whose decode of a stored NULL yields a non-empty state.
class XorBadNullDecode : public Xor {
 public:
  void decode(const sdk::Value& stored) override {
    decoded_ = true;
    if (!stored.is_null()) acc_ = stored.as_integer();
  }
};

std::vector<sdk::Value> small_integers() {
  std::vector<sdk::Value> d{sdk::Value::null()};
  for (int64_t v : {0, 1, 2, 3, 5, 8, 13, 255, -1}) d.push_back(sdk::Value::integer(v));
  return d;
}

TEST(AggregateLawsTest, ALawfulAlgebraPasses) {
  auto d = small_integers();
  EXPECT_EQ(sdk::check_aggregate_laws([] { return std::make_unique<Xor>(); },
                                      {.merge = true, .negate = true, .decode = true}, d),
            "");
}

TEST(AggregateLawsTest, ANegateThatDoesNotInvertIsFound) {
  auto d = small_integers();
  std::string r = sdk::check_aggregate_laws([] { return std::make_unique<SumNoNegate>(); },
                                            {.merge = true, .negate = true}, d);
  EXPECT_NE(r.find("negate: merge(A, negate(A)) is not the empty state"), std::string::npos) << r;
  EXPECT_NE(r.find("seed 1"), std::string::npos) << r;
}

TEST(AggregateLawsTest, ANonCommutativeMergeIsFound) {
  auto d = small_integers();
  std::string r = sdk::check_aggregate_laws([] { return std::make_unique<First>(); }, {.merge = true}, d);
  EXPECT_NE(r.find("merge commutativity"), std::string::npos) << r;
}

TEST(AggregateLawsTest, ADecodeOfNullThatIsNotEmptyIsFound) {
  auto d = small_integers();
  std::string r = sdk::check_aggregate_laws([] { return std::make_unique<XorBadNullDecode>(); },
                                            {.merge = true, .negate = true, .decode = true}, d);
  EXPECT_NE(r.find("decode(NULL)"), std::string::npos) << r;
}

TEST(AggregateLawsTest, AnExactDecodeClaimedWithoutOneIsFound) {
  // XOR's decode pins the state non-empty: retracting every row leaves 0, not NULL.
  auto d = small_integers();
  std::string r = sdk::check_aggregate_laws([] { return std::make_unique<Xor>(); },
                                            {.merge = true, .negate = true, .decode = true, .decode_exact = true}, d);
  EXPECT_NE(r.find("exact decode"), std::string::npos) << r;
}

TEST(AggregateLawsTest, AMergeThatThrowsIsReportedUnderItsLaw) {
  struct Unmerged : sdk::Aggregate {
    void step(std::span<const sdk::Value>) override {}
    sdk::Value finish() override { return sdk::Value::null(); }
  };
  auto d = small_integers();
  std::string r = sdk::check_aggregate_laws([] { return std::make_unique<Unmerged>(); }, {.merge = true}, d);
  EXPECT_NE(r.find("merge identity: threw"), std::string::npos) << r;
}

}  // namespace
