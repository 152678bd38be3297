// PlanningContext: what the planner (planner/) and the plan-time rewrites (rewrite/) may
// reach of the database they plan for — the catalog and the registry, the session search
// path and the limits, relation lookup, and two seams into later stages: optimizing a
// subquery's bound plan (optimizer/) and planning a DML statement used as a relation
// (write/dml_relation.h). DatabaseImpl (main/) implements it; planner/ includes this
// header, never main/, optimizer/ or write/ (docs/architecture.md "Layout").
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "planner/rel_node.h"

namespace quereus {

namespace ast {
struct Statement;
}
class Registry;
struct Limits;
struct DmlRun;
struct PlanSeed;

// A data-modifying statement planned as a relation: its one run (shared by every
// reference) and the names of its RETURNING columns.
struct PlannedDml {
  std::shared_ptr<DmlRun> run;
  std::vector<std::string> names;
};

class PlanningContext {
 public:
  virtual ~PlanningContext() = default;

  virtual Catalog& catalog() = 0;
  // Functions, aggregates, table functions and collations.
  virtual Registry& registry() = 0;
  // pragma schema_path: the session search path for unqualified relation names
  // (lower-case; never empty).
  virtual const std::vector<std::string>& schema_path() const = 0;
  // The database's limits (max_view_depth bounds view and CTE nesting).
  virtual const Limits& limits() const = 0;
  // pragma foreign_keys: a write through a lens plans its logical foreign keys (the
  // checks and the propagating actions) only while it is on; changing it re-plans.
  virtual bool foreign_keys_on() const = 0;

  // A table or view by name: in `schema` when given, otherwise along `path` (the session
  // schema_path when null). find_relation returns an empty relation when the name
  // resolves to nothing; resolve_relation throws "not found" instead.
  virtual ResolvedRelation find_relation(const std::string& schema, const std::string& name,
                                         const std::vector<std::string>* path = nullptr) = 0;
  virtual ResolvedRelation resolve_relation(const std::string& schema, const std::string& name,
                                            const std::vector<std::string>* path = nullptr) = 0;

  // ---- seams into later stages
  // Runs the optimizer's passes over a bound plan (a subquery's, planned while its
  // enclosing query binds) with the session's optimizer options; returns the new root.
  virtual RelPtr optimize_plan(RelPtr root) = 0;
  // Plans `stmt` (INSERT / UPDATE / DELETE … RETURNING) as a relation. `path` is the
  // enclosing statement's WITH SCHEMA path (empty: none); `seed` the WITH members and
  // parameter types it inherits (may be null).
  virtual PlannedDml plan_dml_relation(const ast::Statement& stmt, const std::vector<std::string>& path,
                                       const PlanSeed* seed) = 0;
  // The output columns of a call to `fn` (which has a shape callback) with these argument
  // values: reads what the call's columns depend on (read_csv's header) now.
  virtual std::vector<TableFunctionColumn> table_function_shape(const TableFunction& fn,
                                                                std::span<const Value> args) = 0;
};

}  // namespace quereus
