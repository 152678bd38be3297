// Result values and rows as JSON (FORMAT.md §6.2): the CLI's --format json, COPY … TO a
// JSON file, and the logic-test runner's comparisons.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "types/value.h"

namespace quereus {

struct JsonRenderOptions {
  // true: non-finite reals become the strings "Infinity", "-Infinity", "NaN" so the output
  // stays valid JSON. false: they stay numbers, which is how the reference runner compares.
  bool nonfinite_as_text = true;
};

// NULL → null; INTEGER → number (exact int64; past int64 exact up to 2^64 - 1, else the
// nearest double — json_value_text writes every digit); REAL → number; TEXT → string;
// BOOLEAN → true/false; JSON → the parsed structure (key order kept); BLOB → an object
// keyed by byte index, {"0": 1, "1": 2}, as the reference engine renders Uint8Array.
nlohmann::ordered_json value_to_json(const Value& v, const JsonRenderOptions& options = {});

// {names[i]: row[i]} in column order. A repeated name keeps its first position and takes
// the last value (the engine already renames duplicates, FORMAT.md §6.3).
nlohmann::ordered_json row_to_json(const std::vector<std::string>& names, const Row& row,
                                   const JsonRenderOptions& options = {});

// Compact one-line JSON text; invalid UTF-8 in strings is replaced, never thrown.
std::string json_text(const nlohmann::ordered_json& j);

// json_text of value_to_json / row_to_json, except that an integer outside int64 is
// written with all its digits (a JSON number of any size), which nlohmann cannot hold.
std::string json_value_text(const Value& v, const JsonRenderOptions& options = {});
std::string row_json_text(const std::vector<std::string>& names, const Row& row,
                          const JsonRenderOptions& options = {});

}  // namespace quereus
