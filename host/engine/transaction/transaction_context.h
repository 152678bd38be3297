// TransactionContext: what transaction/ — assertions (CREATE / DROP ASSERTION, their
// commit-time check) and the deferred-constraint queue — may reach of the database: the
// write path's context (change log, catalog, schema version, generations), the planner's
// (planning and optimizing a violation query), and the few coordinator calls assertions
// make. DatabaseImpl (main/) implements it; transaction/ includes this header, never main/
// (docs/architecture.md "Layout").
#pragma once

#include <string>

#include "planner/planning_context.h"
#include "transaction/write_context.h"

namespace quereus {

struct AssertionEntry;
class Assertions;
struct ExecContext;

class TransactionContext : public WriteContext, public PlanningContext {
 public:
  // Both bases ask for the catalog; one answer serves both.
  Catalog& catalog() override = 0;

  // The database's assertions.
  virtual Assertions& assertions() = 0;
  // Moves the schema version (WriteContext::schema_version): statements re-plan.
  virtual void bump_schema_version() = 0;
  // Writes the catalog entry of `assertion` (or removes schema.name) in the default
  // module's persistent catalog.
  virtual void persist_assertion(const AssertionEntry& assertion) = 0;
  virtual void unpersist_assertion(const std::string& schema, const std::string& name) = 0;
  // Makes `ctx` a fresh execution against this database (its database and a new
  // generation): subqueries it runs read the state as it is now.
  virtual void open_execution(ExecContext& ctx) = 0;
};

}  // namespace quereus
