// `quereus --check-syntax FILE...`: parses SQL files without running them.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace quereus {

struct StatementSpan {
  size_t begin = 0, end = 0;  // byte offsets of one statement (without its ';')
  int line = 1, column = 1;   // where it starts
};

// Splits SQL into statements at ';' outside quotes, comments and { } blocks.
std::vector<StatementSpan> split_sql_statements(std::string_view sql);

// Parses every statement of each file; prints `file:line:column: message` for each that
// does not parse and closes with `N passed, N failed`. Returns the number of failures
// (or -1 when a file cannot be read).
int check_syntax(const std::vector<std::string>& files, std::ostream& out, std::ostream& err);

}  // namespace quereus
