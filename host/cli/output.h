// Result printing for the `quereus` executable: aligned tables for people, JSON lines
// for programs (values as FORMAT.md §6.2, via result_json.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "types/value.h"

namespace quereus {

enum class OutputFormat { kTable, kJson };

// A value as a table cell: NULL, numbers as the engine prints them, text as is (newlines
// shown as \n), blobs as x'0a1b', booleans as true/false, JSON as its text.
std::string display_text(const Value& v);

// An aligned table with a header line and a "(N rows)" footer.
void print_table(std::ostream& out, const std::vector<std::string>& names, const std::vector<Row>& rows);

// One row as one line of JSON, {"col": value, …} in column order. Non-finite reals are the
// strings "Infinity", "-Infinity", "NaN"; blobs are {"0": byte, …} as in the reference.
void print_json_row(std::ostream& out, const std::vector<std::string>& names, const Row& row);

}  // namespace quereus
