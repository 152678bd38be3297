// Runtime: FOREIGN KEY resolution and the lookups enforcement needs (docs/foreign-keys.md).
// A key is resolved against the live catalog when a write plan first needs it (the parent
// may be declared after the child); the lookups read through the modules' access plans:
// a point lookup on the parent's key, a filtered scan of the child's referencing columns.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace quereus {

class WriteContext;

// One FOREIGN KEY with both ends resolved. Values handed to the lookups are in the key's
// member order (the child's column order in the declaration).
struct FkLink {
  ForeignKeySchema fk;
  std::shared_ptr<TableEntry> child;
  std::shared_ptr<TableEntry> parent;  // null: the referenced table does not exist
  std::vector<int> parent_cols;        // parent column per member
  // The collation each member compares under (the comparison-collation lattice over the
  // child and parent columns' declarations).
  std::vector<const Collation*> collations;
  // Per member: the module's own filter compares under the same collation, so the
  // equality may be handed to its access plan (otherwise it is checked here only).
  std::vector<bool> parent_seekable, child_seekable;
  bool self_referencing() const { return child == parent; }
  std::string parent_name() const;  // schema.table as declared
  // The access plans of the two lookups, chosen once per link.
  mutable std::optional<PlanResult> parent_plan, child_plan;
  // A lookup that is not a primary-key seek goes through a secondary index whose leading
  // columns are the members (same collations) when the table has one.
  struct IndexProbe {
    const TableEntry* companion = nullptr;  // the index storage the plan was chosen for
    std::optional<PlanResult> plan;
  };
  mutable IndexProbe parent_index, child_index;
  // When the members are exactly the parent's primary key and every one is seekable: per
  // key member (in key order), the member it takes its value from. Empty otherwise.
  std::vector<size_t> pk_order;
  mutable Row lookup_key, lookup_row;  // parent_exists' buffers, reused across probes
};

// Resolves `fk` declared on `child`. Throws when the key cannot be enforced: a defaulted
// parent column list whose primary key has another arity, a parent column that does not
// exist, or conflicting declared collations.
FkLink resolve_fk(Catalog& catalog, const std::shared_ptr<TableEntry>& child, const ForeignKeySchema& fk);

// The FOREIGN KEYs `table` declares, resolved (cached on the table entry per schema
// version: catalog lookups, collations and access plans are made once).
std::vector<std::shared_ptr<FkLink>> outbound_links(WriteContext& db, const std::shared_ptr<TableEntry>& table);

// Declaration-time validation of a FOREIGN KEY whose parent is known (`parent` may be the
// table being declared): a member pair whose child and parent columns declare different
// collations at the same rank is refused ("conflicting collations").
void validate_fk_collations(const TableSchema& child, const ForeignKeySchema& fk, const TableSchema& parent);

// The FOREIGN KEYs of every table that reference `parent` (resolved; keys whose parent
// does not resolve to `parent` are skipped).
std::vector<std::shared_ptr<FkLink>> inbound_fks(Catalog& catalog, const std::shared_ptr<TableEntry>& parent);

// The child values of a row in member order; nullopt when a member is NULL (MATCH SIMPLE:
// the row references nothing).
std::optional<Row> child_values(const FkLink& link, const Row& child_row);
// The referenced parent values of a row in member order; nullopt when one is NULL (a
// NULL-containing parent key is unreferenceable).
std::optional<Row> parent_values(const FkLink& link, const Row& parent_row);

// True when a parent row holds `values`. Throws the "does not exist" CHECK failure when
// the parent table is missing.
bool parent_exists(const FkLink& link, const Row& values);
// The child rows referencing `values` (at most `limit` when limit > 0).
std::vector<Row> referencing_rows(const FkLink& link, const Row& values, size_t limit = 0);

// DROP TABLE of a parent whose rows another table still references is refused (while
// foreign keys are enforced).
void guard_parent_drop(WriteContext& db, const std::shared_ptr<TableEntry>& parent);

// The CHECK-style message of a child-side violation.
std::string fk_check_message(const FkLink& link);

}  // namespace quereus
