// Checks an aggregate's declared algebra (SDK 1.9, docs/sdk.md "Aggregate algebra")
// against the laws abi.h states at qrs_aggregate_function_def, on random groups drawn from
// values the author supplies. Header-only, for a plugin's own tests:
//
//   std::vector<sdk::Value> domain = {sdk::Value::integer(0), sdk::Value::integer(7), …};
//   std::string broken = sdk::check_aggregate_laws(
//       [] { return std::make_unique<XorAgg>(); }, {.merge = true, .negate = true, .decode = true},
//       domain);
//   EXPECT_EQ(broken, "");   // else: the law, the seed and the groups that break it
//
// Equivalence is the reference's: two states are equal when finish() gives the same
// value. The laws checked are those the declaration claims: merge (identity,
// commutativity, associativity, step/merge coherence), negate (merge(a, negate(a)) is
// empty), decode (observational under inserts; a stored NULL is the empty state) and an
// exact decode (observational under retractions too). Pick `domain` as the values the
// declaration is exact for (legal arguments, NULL included when the aggregate takes it).
#ifndef QUEREUS_AGGREGATE_LAWS_HPP_
#define QUEREUS_AGGREGATE_LAWS_HPP_

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "quereus/error.hpp"
#include "quereus/function.hpp"
#include "quereus/value.hpp"

namespace quereus::sdk {

// Empty when every claimed law holds on `runs` random cases; otherwise the first broken
// law, the seed and the groups that break it. Exceptions from the aggregate are reported
// the same way (as the law being checked).
inline std::string check_aggregate_laws(const AggregateFactory& factory, const AggregateAlgebra& algebra,
                                        std::span<const Value> domain, int runs = 200, uint64_t seed = 1) {
  if (!factory || domain.empty()) return "check_aggregate_laws: needs a factory and a non-empty domain";
  std::mt19937_64 rng(seed);
  auto group = [&] {
    std::vector<Value> g(rng() % 6);
    for (Value& v : g) v = domain[rng() % domain.size()];
    return g;
  };
  auto fold = [&](const std::vector<Value>& rows) {
    std::unique_ptr<Aggregate> a = factory();
    for (const Value& v : rows) a->step(std::span<const Value>(&v, 1));
    return a;
  };
  auto show = [](const std::vector<Value>& g) {
    std::string s = "[";
    for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + g[i].debug_string();
    return s + "]";
  };
  auto concat = [](std::vector<Value> a, const std::vector<Value>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string where = " (seed " + std::to_string(seed) + ")";
  std::string law;
  try {
    const Value empty = factory()->finish();
    for (int run = 0; run < runs; ++run) {
      const std::vector<Value> a = group(), b = group(), c = group();
      const std::string groups = " with A = " + show(a) + ", B = " + show(b) + ", C = " + show(c) + where;
      auto fail = [&](const std::string& what, const Value& got, const Value& want) {
        return what + ": got " + got.debug_string() + ", expected " + want.debug_string() + groups;
      };
      if (!algebra.merge) break;
      law = "merge identity";
      {
        auto x = fold(a);
        x->merge(*factory());
        if (Value got = x->finish(), want = fold(a)->finish(); !(got == want))
          return fail("merge identity: merge(A, empty) != A", got, want);
      }
      law = "merge commutativity";
      {
        auto ab = fold(a), ba = fold(b);
        ab->merge(*fold(b));
        ba->merge(*fold(a));
        if (Value got = ab->finish(), want = ba->finish(); !(got == want))
          return fail("merge commutativity: merge(A, B) != merge(B, A)", got, want);
      }
      law = "merge associativity";
      {
        auto left = fold(a);
        left->merge(*fold(b));
        left->merge(*fold(c));
        auto bc = fold(b);
        bc->merge(*fold(c));
        auto right = fold(a);
        right->merge(*bc);
        if (Value got = left->finish(), want = right->finish(); !(got == want))
          return fail("merge associativity: merge(merge(A, B), C) != merge(A, merge(B, C))", got, want);
      }
      law = "step/merge coherence";
      {
        auto merged = fold(a);
        merged->merge(*fold(b));
        if (Value got = merged->finish(), want = fold(concat(a, b))->finish(); !(got == want))
          return fail("step/merge coherence: merge(A, B) != the rows of A then B stepped", got, want);
      }
      if (algebra.negate) {
        law = "negate";
        auto x = fold(a), inverse = fold(a);
        inverse->negate();
        x->merge(*inverse);
        if (Value got = x->finish(); !(got == empty))
          return fail("negate: merge(A, negate(A)) is not the empty state", got, empty);
      }
      if (algebra.decode) {
        law = "decode";
        auto nothing = factory();
        nothing->decode(Value::null());
        nothing->merge(*fold(b));
        if (Value got = nothing->finish(), want = fold(b)->finish(); !(got == want))
          return fail("decode: decode(NULL) then merge(B) != B (a stored NULL must decode to the empty state)", got,
                      want);
        auto decoded = factory();
        decoded->decode(fold(a)->finish());
        decoded->merge(*fold(b));
        if (Value got = decoded->finish(), want = fold(concat(a, b))->finish(); !(got == want))
          return fail("decode: merge(decode(final(A)), B) != A then B", got, want);
        if (algebra.decode_exact && algebra.negate) {
          law = "exact decode";
          // Retract B from the stored value of A ++ B: A is what must remain.
          auto stored = factory();
          stored->decode(fold(concat(a, b))->finish());
          auto retraction = fold(b);
          retraction->negate();
          stored->merge(*retraction);
          if (Value got = stored->finish(), want = fold(a)->finish(); !(got == want))
            return fail("exact decode: merge(decode(final(A then B)), negate(B)) != A", got, want);
        }
      }
    }
  } catch (const std::exception& e) {
    return (law.empty() ? std::string("finish of an empty state") : law) + ": threw " + e.what() + where;
  }
  return {};
}

}  // namespace quereus::sdk

#endif  // QUEREUS_AGGREGATE_LAWS_HPP_
