// Plan-time comparison collation resolution (planner/type_coercion.h): the symmetric,
// provenance-ranked merge of two operands' collation bids.
#include <gtest/gtest.h>

#include "common/status.h"
#include "planner/type_coercion.h"

namespace quereus {
namespace {

using Src = CollationSource;

TEST(CollationBidTest, DefaultedBinaryBidsNothing) {
  EXPECT_EQ(collation_bid(&Collation::binary(), Src::kDefault).collation, nullptr);
  EXPECT_EQ(collation_bid(nullptr, Src::kExplicit).collation, nullptr);
  // A declared BINARY is a real preference.
  EXPECT_EQ(collation_bid(&Collation::binary(), Src::kDeclared).collation, &Collation::binary());
  EXPECT_EQ(collation_bid(&Collation::nocase(), Src::kDefault).collation, &Collation::nocase());
}

TEST(CollationBidTest, HigherRankWinsFromEitherSide) {
  CollationBid declared = collation_bid(&Collation::nocase(), Src::kDeclared);
  CollationBid defaulted = collation_bid(&Collation::rtrim(), Src::kDefault);
  CollationBid none;
  EXPECT_EQ(merge_collation_bids(declared, defaulted, {}).collation, &Collation::nocase());
  EXPECT_EQ(merge_collation_bids(defaulted, declared, {}).collation, &Collation::nocase());
  EXPECT_EQ(merge_collation_bids(none, declared, {}).collation, &Collation::nocase());
  CollationBid expl = collation_bid(&Collation::rtrim(), Src::kExplicit);
  EXPECT_EQ(merge_collation_bids(declared, expl, {}).collation, &Collation::rtrim());
  EXPECT_EQ(merge_collation_bids(expl, declared, {}).source, Src::kExplicit);
}

TEST(CollationBidTest, SameRankConflicts) {
  auto nocase = [](Src s) { return collation_bid(&Collation::nocase(), s); };
  auto rtrim = [](Src s) { return collation_bid(&Collation::rtrim(), s); };
  // Two defaults are preferences: no bid, so BINARY.
  EXPECT_EQ(merge_collation_bids(nocase(Src::kDefault), rtrim(Src::kDefault), {}).collation, nullptr);
  try {
    merge_collation_bids(nocase(Src::kDeclared), rtrim(Src::kDeclared), SourceSite{3, 7});
    FAIL() << "declared conflict accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous collation for comparison: column collations NOCASE vs RTRIM"),
              std::string::npos);
  }
  try {
    merge_collation_bids(rtrim(Src::kExplicit), nocase(Src::kExplicit), {});
    FAIL() << "explicit conflict accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conflicting COLLATE clauses in comparison"), std::string::npos);
  }
  // Non-comparing combiners never fail: a same-rank conflict passes on no collation.
  EXPECT_EQ(combine_collation_bids(nocase(Src::kDeclared), rtrim(Src::kDeclared)).collation, nullptr);
  EXPECT_EQ(combine_collation_bids(nocase(Src::kDeclared), rtrim(Src::kDefault)).collation, &Collation::nocase());
}

}  // namespace
}  // namespace quereus
