// Planner: the conversions that make the operands of a comparison comparable (docs:
// types, "Type Coercion in Comparisons"). A numeric operand against a TEXT one converts
// the text to NUMERIC (`int_col = '1'` reads as `int_col = 1`); a JSON operand against
// anything else converts the other side to JSON, leniently, like CAST. The casts are
// inserted at plan time so the runtime compares like with like.
#pragma once

#include <vector>

#include "planner/scalar_expr.h"

namespace quereus {

// The conversion `operand` needs to compare with a value of type `other`, ANY for none.
qrs_logical_type comparison_cast(qrs_logical_type operand, qrs_logical_type other);

// `e` wrapped in a lenient CAST to `target`; `e` itself when `target` is ANY.
ScalarPtr with_cast(ScalarPtr e, qrs_logical_type target);

// A pairwise comparison (=, <, IS, …): converts whichever side needs it.
void coerce_comparison(ScalarPtr& left, ScalarPtr& right);

// One probe compared with several values (IN list, simple CASE, BETWEEN bounds): each
// value converts on its own; the probe converts only when every non-NULL value asks for
// the same conversion (a JSON value always wins: its cast is lenient).
void coerce_comparison_set(ScalarPtr& probe, const std::vector<ScalarPtr*>& values);

// A comparison group whose members are all compared with each other (nullif, greatest,
// least): the conversion of each member's comparison key.
std::vector<qrs_logical_type> comparison_group_casts(const std::vector<ScalarPtr>& members);

// One operand's bid for the collation a comparison runs under (docs: types, "Comparison
// collation resolution"): a COLLATE clause outranks a column's declared COLLATE, which
// outranks a defaulted collation; a defaulted BINARY and a value without collation
// (literals, most expressions) bid nothing.
struct CollationBid {
  const Collation* collation = nullptr;  // null: no bid
  CollationSource source = CollationSource::kDefault;
};
CollationBid collation_bid(const Collation* collation, CollationSource source);
// A BOOLEAN (a comparison, IN, BETWEEN, EXISTS) makes no bid: the collation an IN or
// BETWEEN holds is the one it compares under, not one its result carries.
inline CollationBid collation_bid(const ScalarExpr& e) {
  if (e.type == QRS_LT_BOOLEAN) return {};
  return collation_bid(e.collation, e.collation_source());
}

// Merges two bids symmetrically: the higher rank wins. Two different collations at the
// same rank are an error for COLLATE clauses ("conflicting COLLATE clauses …") and for
// declared columns ("ambiguous collation for comparison …"), thrown at `site`; two
// different defaults merge to no bid.
CollationBid merge_collation_bids(const CollationBid& a, const CollationBid& b, const SourceSite& site);

// The collation a merged bid compares under (BINARY when there is no bid).
inline const Collation* bid_collation(const CollationBid& bid) {
  return bid.collation ? bid.collation : &Collation::binary();
}

// The collation `l <op> r` compares under.
const Collation* comparison_collation(const ScalarExpr& l, const ScalarExpr& r, const SourceSite& site);

// The collation a non-comparing combiner (`||`, CASE branches) passes on: the higher rank
// wins; two different collations at the same rank pass on none (no error: nothing is
// compared here).
CollationBid combine_collation_bids(const CollationBid& a, const CollationBid& b);

}  // namespace quereus
