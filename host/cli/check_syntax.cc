#include "cli/check_syntax.h"

#include <fstream>
#include <sstream>

#include "common/status.h"
#include "parser/parser.h"

namespace quereus {

std::vector<StatementSpan> split_sql_statements(std::string_view sql) {
  std::vector<StatementSpan> out;
  size_t i = 0, n = sql.size(), start = 0;
  int line = 1, col = 1, start_line = 1, start_col = 1, braces = 0;
  bool blank = true;
  auto advance = [&](size_t k) {
    for (size_t j = 0; j < k && i < n; ++j, ++i) {
      if (sql[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
  };
  auto flush = [&](size_t end) {
    if (!blank) out.push_back({start, end, start_line, start_col});
    blank = true;
  };
  while (i < n) {
    char c = sql[i];
    if (blank && !std::isspace(static_cast<unsigned char>(c)) && c != ';') {
      if (!(c == '-' && i + 1 < n && sql[i + 1] == '-') && !(c == '/' && i + 1 < n && sql[i + 1] == '*')) {
        blank = false;
        start = i;
        start_line = line;
        start_col = col;
      }
    }
    if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      while (i < n && sql[i] != '\n') advance(1);
      continue;
    }
    if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      advance(2);
      while (i < n && !(sql[i] == '*' && i + 1 < n && sql[i + 1] == '/')) advance(1);
      advance(2);
      continue;
    }
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char close = c == '[' ? ']' : c;
      advance(1);
      while (i < n) {
        if (sql[i] == close) {
          if (close != ']' && i + 1 < n && sql[i + 1] == close) { advance(2); continue; }
          break;
        }
        advance(1);
      }
      advance(1);
      continue;
    }
    if (c == '{') ++braces;
    if (c == '}' && braces > 0 && --braces == 0) {
      // A declaration block ends its statement; the ';' after it is optional.
      advance(1);
      flush(i);
      continue;
    }
    if (c == ';' && braces == 0) {
      flush(i);
    }
    advance(1);
  }
  flush(n);
  return out;
}

int check_syntax(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  int passed = 0, failed = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      err << file << ": cannot read file\n";
      return -1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (const auto& span : split_sql_statements(text)) {
      std::string_view stmt(text.data() + span.begin, span.end - span.begin);
      try {
        Parser::parse(stmt);
        ++passed;
      } catch (const Error& e) {
        ++failed;
        int line = span.line, column = span.column;
        if (e.site()) {
          line = span.line + e.site()->line - 1;
          column = e.site()->line == 1 ? span.column + e.site()->column - 1 : e.site()->column;
        }
        out << file << ":" << line << ":" << column << ": " << e.raw_message() << "\n";
      }
    }
  }
  out << passed << " passed, " << failed << " failed\n";
  return failed;
}

}  // namespace quereus
