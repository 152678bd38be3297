// Runtime: the derived-row part of the write path (DmlWriter::apply_derived): what a
// maintained table's declared constraints, indexes and inbound foreign keys demand of the
// rows materialized-view maintenance writes through its backing host
// (docs/design-materialized-views.md, "Constraints").
#include "eval/exec_context.h"
#include "planner/scalar_expr.h"
#include "transaction/write_context.h"
#include "write/dml_writer.h"
#include "write/foreign_keys.h"
#include "write/indexes.h"

namespace quereus {

namespace {

std::string derived_prefix(const TableEntry& table) {
  return "row derived into maintained table '" + table.qualified_name() + "'";
}

// CHECK over one derived image: the images row holds NEW (the image) and no OLD (a
// derived row has none; a CHECK naming OLD/NEW is refused when the table is declared).
bool check_holds(const BoundCheck& c, const Row& row, const Row& images, ExecContext& ctx) {
  Row context;
  EvalEnv image_env{&images, nullptr, &ctx};
  EvalEnv row_env{&row, &image_env, &ctx};
  EvalEnv env{&context, &row_env, &ctx};
  bool is_null = false;
  return c.expr->eval(env).truthy(&is_null) || is_null;
}

// The messages are materialized-views.md's ("Derived-row constraint validation"): the
// ordinary failure first, then the maintained table the derived row went into.
[[noreturn]] void check_failed(const TableEntry& table, const BoundCheck& c) {
  throw Error(StatusCode::kConstraint, "CHECK constraint failed: " + c.name + " (" + c.text + ") — " +
                                           derived_prefix(table) + " violates its declared constraint");
}

// A derived row is neither a user INSERT nor UPDATE: a CHECK applying to either applies
// to every written image; a delete-only CHECK never does.
bool applies_to_derived(const BoundCheck& c) { return c.on_insert || c.on_update; }

void check_row_constraints(WriteContext& db, const TableWritePlan& plan, const Row& row, ExecContext& ctx,
                           bool defer_subqueries) {
  const TableEntry& table = *plan.table;
  Row images;
  for (const BoundCheck& c : plan.bindings.checks) {
    if (!applies_to_derived(c)) continue;
    if (images.empty()) {
      images.resize(2 * row.size());
      for (size_t i = 0; i < row.size(); ++i) images[i] = row[i];
    }
    if (c.deferred && defer_subqueries) {
      // Judged at COMMIT over the image captured now (the check's binding is kept alive).
      db.deferred().at_commit([check = c, table = plan.table, images, row](ExecContext& at) {
        if (!check_holds(check, row, images, at)) check_failed(*table, check);
      });
      continue;
    }
    if (!check_holds(c, row, images, ctx)) check_failed(table, c);
  }
  if (!db.foreign_keys_enforced() || table.schema.foreign_keys.empty()) return;
  for (const auto& link : outbound_links(db, plan.table)) {
    std::optional<Row> values = child_values(*link, row);
    if (!values) continue;  // MATCH SIMPLE: a NULL member references nothing
    if (link->parent && parent_exists(*link, *values)) continue;
    throw Error(StatusCode::kConstraint, "FOREIGN KEY constraint failed: " + link->fk.name + " — " +
                                             derived_prefix(table) + " references a missing '" + link->parent_name() +
                                             "'");
  }
}

}  // namespace

void DmlWriter::check_derived_row(WriteContext& db, const TableWritePlan& plan, const Row& row, ExecContext& ctx) {
  check_row_constraints(db, plan, row, ctx, /*defer_subqueries=*/false);
}

void DmlWriter::apply_derived(const std::vector<DerivedChange>& changes) {
  for (const DerivedChange& c : changes)
    if (c.new_row) check_row_constraints(db_, *plan_, *c.new_row, ctx_, /*defer_subqueries=*/true);
  if (indexes_) {
    for (const DerivedChange& c : changes)
      if (c.old_row) indexes_->remove(*c.old_row);
    for (const DerivedChange& c : changes) {
      if (!c.new_row) continue;
      if (auto conflict = indexes_->find_conflict(*c.new_row, key_of(*c.new_row))) {
        std::string key;
        for (const IndexColumn& ic : table_->schema.indexes[conflict->index].columns) {
          const Value& v = (*c.new_row)[ic.column];
          key += (key.empty() ? "" : ", ") + (v.is_null() ? std::string("NULL") : v.to_text());
        }
        throw Error(StatusCode::kConstraint, indexes_->unique_message(conflict->index) + " — " +
                                                 derived_prefix(*table_) +
                                                 " collides on its declared UNIQUE constraint (key: " + key + ")");
      }
      indexes_->add(*c.new_row);
    }
  }
  for (const DerivedChange& c : changes)
    if (c.old_row) apply_parent_actions(*c.old_row, c.new_row, false);
}

}  // namespace quereus
