// The introspection functions (schema(), table_info(), query_plan(), view_info(), …): they
// read the whole engine — catalog, planner, optimizer, view-write analysis, assertions — so
// they live at the top, registered by Database::Open after the built-in functions.
#pragma once

namespace quereus {

class Registry;

void register_introspection_functions(Registry& registry);
// read_csv, read_jsonl (main/file_functions.cc).
void register_file_functions(Registry& registry);

}  // namespace quereus
