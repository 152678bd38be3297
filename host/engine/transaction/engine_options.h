// EngineOptions: a database's session settings (pragmas and their YAML defaults), read by
// the layers that decide what a statement means: DDL (default module, nullability,
// collation), the write path (foreign keys) and the coordinator (DDL policy, timeouts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/limits.h"
#include "optimizer/optimizer.h"

namespace quereus {

struct EngineOptions {
  std::string default_vtab_module = "memory";
  bool default_nullable = false;  // pragma default_column_nullability = 'nullable'
  bool foreign_keys = true;
  // pragma ddl_transaction_policy: 'permissive' (default) runs module DDL inside an
  // explicit transaction, applied at once; 'strict' refuses it there.
  bool ddl_strict = false;
  std::string default_collation = "BINARY";  // as last set (pragma reads echo it)
  // pragma nondeterministic_schema (alias allow_nondeterministic_schema_expressions):
  // allows non-deterministic DEFAULT / CHECK / GENERATED expressions.
  bool nondeterministic_schema = false;
  // pragma optimizer_disabled_passes = 'name, …' (Optimizer::pass_names()).
  OptimizerOptions optimizer;
  // pragma schema_path = 'a,b': the session search path for unqualified relation names
  // (lower-case; never empty).
  std::vector<std::string> schema_path{"main"};
  // The database's limits (common/limits.h): YAML `limits:`, pragma <limit name> = N.
  Limits limits;
  // pragma statement_timeout_ms (YAML statement_timeout_ms): a statement running longer
  // fails with INTERRUPT; 0 = no timeout.
  int64_t statement_timeout_ms = 0;
  // pragma materialized_view_rebuild_row_threshold: a maintained table only the full
  // rebuild can keep current is refused at CREATE (and attach) when a source its body
  // reads holds more rows than this, since every write would re-run the whole body
  // (mv-maintenance.md, "Maintenance strategy"); 0 turns the check off.
  int64_t materialized_view_rebuild_row_threshold = 10000;
  // The reference's diagnostic switches (usage.md, "Available Options"): accepted and read
  // back, but this engine has no counterpart for them, so they change nothing.
  bool runtime_stats = false;
  bool validate_plan = false;
  bool trace_plan_stack = false;
  bool runtime_fuse_scalars = true;
};

}  // namespace quereus
