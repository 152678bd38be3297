// The introspection functions (schema(), table_info(), query_plan(), view_info(), …): they
// read the whole engine — catalog, planner, optimizer, view-write analysis, assertions — so
// they live at the top, registered by Database::Open after the built-in functions.
#pragma once

#include <vector>

#include "types/value.h"

namespace quereus {

class Registry;
class RelNode;

void register_introspection_functions(Registry& registry);
// read_csv, read_jsonl (main/file_functions.cc).
void register_file_functions(Registry& registry);
// stack_trace(), execution_trace(), row_trace() (main/debug_traces.cc).
void register_debug_trace_functions(Registry& registry);

// The rows query_plan() lists for an optimized plan (plan nodes and their expressions, in
// query_plan order). `nodes`, when given, receives each row's plan node (null for an
// expression row). scheduler_program() lists the same rows backwards: row i has addr
// rows.size() - 1 - i, the `instruction_index` the debug traces report.
std::vector<Row> plan_listing(const RelNode& root, std::vector<const RelNode*>* nodes = nullptr);

}  // namespace quereus
