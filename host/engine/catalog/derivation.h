// Derivation: the maintenance contract a maintained table carries (a materialized view is
// a table with one). The table holds the rows; the derivation says which query they equal
// and how the engine keeps them equal (docs/design-materialized-views.md).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quereus {

namespace ast {
struct Select;
}

// How row-time maintenance keeps the table equal to its body (maintained/strategy.h
// classifies the body).
enum class MaintenanceStrategy {
  // One source table, a row-preserving projection [+ filter] that carries the source's
  // key: each source row change maps to at most one delete and one upsert, computed from
  // the changed row alone, applied at once.
  kInverseProjection,
  // One source table grouped by source columns (`select g…, agg(…) from t [where …]
  // group by g… [having …]`), keyed by its grouping keys: each source row change dirties
  // its old and new groups, and at the statement's end each dirty group's row is
  // recomputed by the body filtered to that group (upserted, or deleted when the group
  // is gone).
  kGroupResidual,
  // Two tables joined so that each row of the driving table T gives at most one view row,
  // keyed by T's primary key (`select … from t join p on t.fk = p.k`): a change to T
  // dirties its old and new keys; a change to the other table dirties the T rows its old
  // and new rows join (looked up by the join's equality columns); at the statement's end
  // each dirty key's row is recomputed by the body filtered to it.
  kJoinResidual,
  // One table T fanned out by a lateral table function over its row (`select … from t
  // cross join lateral f(<t columns>) x`), the view keyed by T's primary key followed by
  // the function's key: a change to T dirties its old and new keys; at the statement's end
  // each dirty key's slice (the view rows sharing that key prefix) is replaced by the
  // body filtered to it — rows it no longer gives deleted, the others upserted.
  kPrefixDelete,
  // Any other body: re-evaluated once per writing statement, the result diffed by key
  // against the stored rows.
  kFullRebuild,
};

inline const char* strategy_name(MaintenanceStrategy s) {
  switch (s) {
    case MaintenanceStrategy::kInverseProjection: return "inverse-projection";
    case MaintenanceStrategy::kGroupResidual: return "residual-recompute";
    case MaintenanceStrategy::kJoinResidual: return "join-residual";
    case MaintenanceStrategy::kPrefixDelete: return "prefix-delete";
    case MaintenanceStrategy::kFullRebuild: break;
  }
  return "full-rebuild";
}

// The tag that marks a maintained table stale: a source ALTER changed the meaning of a
// column its body reads (value: why). It serves its last rows and is not maintained until
// REFRESH clears the tag; the tag is persisted with the table, so a reopen keeps it stale.
inline constexpr std::string_view kStaleTag = "quereus.mv.stale";

struct Derivation {
  // The body, owned by the catalog (a deep copy of the statement's).
  std::shared_ptr<const ast::Select> body;
  // The explicit rename list (`maintained (a, b) as`, `materialized view v (a, b)`); empty
  // when the body's own output names are the columns.
  std::vector<std::string> columns;
  // Authored as CREATE MATERIALIZED VIEW (true) or CREATE TABLE … MAINTAINED AS.
  bool sugar = true;
  // The tables the body reads, as (schema, lower-case name).
  std::vector<std::pair<std::string, std::string>> sources;
  MaintenanceStrategy strategy = MaintenanceStrategy::kFullRebuild;
  // The canonical DDL that recreates the table with this derivation (schema().sql, the
  // persisted catalog entry).
  std::string sql;
};

}  // namespace quereus
