// Planner: plan-time comparison coercion (see type_coercion.h).
#include "planner/type_coercion.h"

#include "common/status.h"
#include "types/logical_type.h"

namespace quereus {

namespace {

bool is_null_literal(const ScalarExpr& e) {
  return e.kind == ScalarKind::kLiteral && static_cast<const LiteralScalar&>(e).value.is_null();
}

}  // namespace

qrs_logical_type comparison_cast(qrs_logical_type operand, qrs_logical_type other) {
  if (operand == other) return QRS_LT_ANY;
  if (other == QRS_LT_JSON) return QRS_LT_JSON;
  if (operand == QRS_LT_TEXT && is_numeric_type(other)) return QRS_LT_NUMERIC;
  return QRS_LT_ANY;
}

ScalarPtr with_cast(ScalarPtr e, qrs_logical_type target) {
  if (target == QRS_LT_ANY || is_null_literal(*e)) return e;
  auto c = std::make_shared<CastScalar>();
  c->operand = std::move(e);
  c->target = target;
  c->type = target;
  c->comparison = true;
  return c;
}

void coerce_comparison(ScalarPtr& left, ScalarPtr& right) {
  qrs_logical_type lt = left->type, rt = right->type;
  left = with_cast(std::move(left), comparison_cast(lt, rt));
  right = with_cast(std::move(right), comparison_cast(rt, lt));
}

void coerce_comparison_set(ScalarPtr& probe, const std::vector<ScalarPtr*>& values) {
  qrs_logical_type pt = probe->type;
  qrs_logical_type probe_cast = QRS_LT_ANY;
  bool agreed = true, any = false;
  for (ScalarPtr* v : values) {
    if (is_null_literal(**v)) continue;
    qrs_logical_type c = comparison_cast(pt, (*v)->type);
    if (c == QRS_LT_JSON) {
      probe_cast = QRS_LT_JSON;
      break;
    }
    if (!any) probe_cast = c;
    else if (c != probe_cast) agreed = false;
    any = true;
  }
  if (!agreed && probe_cast != QRS_LT_JSON) probe_cast = QRS_LT_ANY;
  for (ScalarPtr* v : values) {
    qrs_logical_type cast = comparison_cast((*v)->type, pt);  // before *v is moved from
    *v = with_cast(std::move(*v), cast);
  }
  probe = with_cast(std::move(probe), probe_cast);
}

CollationBid collation_bid(const Collation* collation, CollationSource source) {
  if (!collation) return {};
  if (source == CollationSource::kDefault && collation->name() == "BINARY") return {};
  return {collation, source};
}

CollationBid merge_collation_bids(const CollationBid& a, const CollationBid& b, const SourceSite& site) {
  if (!a.collation) return b;
  if (!b.collation) return a;
  if (a.source != b.source) return a.source > b.source ? a : b;
  if (a.collation == b.collation || a.collation->name() == b.collation->name()) return a;
  // Defaults are preferences, not declarations: two of them merge to no bid (BINARY).
  if (a.source == CollationSource::kDefault) return {};
  const std::string names = a.collation->name() + " vs " + b.collation->name();
  const std::string msg =
      a.source == CollationSource::kExplicit
          ? "conflicting COLLATE clauses in comparison: " + names
          : "ambiguous collation for comparison: column collations " + names + " differ; apply an explicit COLLATE";
  if (site.line > 0) throw Error(StatusCode::kError, msg, site);
  throw Error(StatusCode::kError, msg);
}

const Collation* comparison_collation(const ScalarExpr& l, const ScalarExpr& r, const SourceSite& site) {
  return bid_collation(merge_collation_bids(collation_bid(l), collation_bid(r), site));
}

CollationBid combine_collation_bids(const CollationBid& a, const CollationBid& b) {
  if (!a.collation) return b;
  if (!b.collation) return a;
  if (a.source != b.source) return a.source > b.source ? a : b;
  return a.collation->name() == b.collation->name() ? a : CollationBid{};
}

std::vector<qrs_logical_type> comparison_group_casts(const std::vector<ScalarPtr>& members) {
  std::vector<qrs_logical_type> casts(members.size(), QRS_LT_ANY);
  for (size_t i = 0; i < members.size(); ++i) {
    for (size_t j = 0; j < members.size(); ++j) {
      if (i == j || is_null_literal(*members[j])) continue;
      qrs_logical_type c = comparison_cast(members[i]->type, members[j]->type);
      if (c == QRS_LT_ANY) continue;
      casts[i] = c;
      if (c == QRS_LT_JSON) break;
    }
  }
  return casts;
}

}  // namespace quereus
