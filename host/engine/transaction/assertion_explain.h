// explain_assertion(name): how an assertion's violation query reads each base table
// (docs/foreign-keys.md, "Assertions"). Every base-table reference of the planned body
// is classified:
//   'row'    the reference is pinned by equality on its whole primary key, so a change
//            can be re-checked for the key it touched (params: pk0, pk1, ...);
//   'group'  the reference feeds an aggregate grouped by plain columns of it, so a
//            change can be re-checked per group key (params: the group columns);
//   'global' anything else: the whole query must run again.
#pragma once

#include <string>
#include <vector>

#include "types/value.h"
#include "planner/rel_node.h"

namespace quereus {

class TransactionContext;
struct AssertionEntry;

struct AssertionTableClass {
  std::string relation_key;  // "<schema>.<table>#<n>", n counting references in the plan
  std::string base;          // "<schema>.<table>"
  std::string classification;
  std::vector<std::string> params;  // empty for 'global'
};

// Classifies every base-table reference of `plan` (an optimized violation query).
std::vector<AssertionTableClass> classify_assertion_plan(const RelNode& plan);

// The rows of explain_assertion(name): `name` is 'schema.name' or bare (first match in
// main, then temp, then any other schema). Columns: assertion, relation_key, base,
// classification, prepared_pk_params (JSON array or NULL), violation_sql.
std::vector<Row> explain_assertion_rows(TransactionContext& db, const std::string& name);

}  // namespace quereus
