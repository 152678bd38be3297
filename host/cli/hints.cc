// Hints: the first words of a failed statement and its message, matched against the
// habits people bring from other engines.
#include "cli/hints.h"

#include <strings.h>

#include <vector>

#include "parser/lexer.h"

namespace quereus {

namespace {

bool is_word(const Token& t, const char* w) {
  return (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kKeyword) && strcasecmp(t.text.c_str(), w) == 0;
}

bool contains_nocase(std::string_view hay, std::string_view needle) {
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (strncasecmp(hay.data() + i, needle.data(), needle.size()) == 0) return true;
  return false;
}

}  // namespace

std::string hint_for(std::string_view sql, const Status& error) {
  const std::string& msg = error.raw_message();
  if (contains_nocase(msg, "NOT NULL constraint failed")) {
    // "NOT NULL constraint failed: t.b" names the column.
    std::string column = "name";
    // "NOT NULL constraint failed: mutation context variable t.x" names a `with context` variable.
    constexpr std::string_view kContextVariable = "mutation context variable ";
    const size_t context_at = msg.find(kContextVariable);
    if (const size_t colon = msg.rfind(": "); colon != std::string::npos) {
      column = msg.substr(context_at != std::string::npos ? context_at + kContextVariable.size() : colon + 2);
      // "t.c (the table has rows …)": the name ends at the first space.
      if (const size_t space = column.find(' '); space != std::string::npos) column.resize(space);
      if (const size_t dot = column.rfind('.'); dot != std::string::npos) column = column.substr(dot + 1);
    }
    if (context_at != std::string::npos)
      return "context variables are NOT NULL by default in Quereus (unless declared `null`): to allow NULL, declare "
             "it `" + column + " <type> null` in the table's `with context (…)` clause, or supply a value";
    return "columns are NOT NULL by default in Quereus (unless declared `null`): to allow NULL, declare it `" +
           column + " <type> null`, or set `pragma default_column_nullability = 'nullable'` before creating the table";
  }
  if (contains_nocase(msg, "sqlite_master") || contains_nocase(msg, "sqlite_schema") ||
      contains_nocase(sql, "sqlite_master") || contains_nocase(sql, "sqlite_schema"))
    return "use `select * from schema()` instead of sqlite_master (columns schema, type, name, tbl_name, sql, "
           "tags), or .schema / .tables";
  std::vector<Token> tokens;
  try {
    tokens = Lexer::tokenize(sql);
  } catch (const Error&) {
    return "";
  }
  // The statement that failed is not known here; any statement of the text may match.
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (i > 0 && tokens[i - 1].kind != TokenKind::kSemicolon) continue;
    const Token& a = tokens[i];
    const Token& b = tokens[i + 1];
    if (a.is(Keyword::kPragma)) {
      const std::string arg = i + 3 < tokens.size() && tokens[i + 2].kind == TokenKind::kLParen ? tokens[i + 3].text : "t";
      if (is_word(b, "table_info") || is_word(b, "table_xinfo"))
        return "use `select * from table_info('" + arg + "')` instead (or .schema " + arg + ")";
      if (is_word(b, "index_list") || is_word(b, "index_info") || is_word(b, "index_xinfo"))
        return "use `select * from index_info()` instead";
      if (is_word(b, "foreign_key_list")) return "use `select * from foreign_key_info('" + arg + "')` instead";
      if (is_word(b, "table_list")) return "use `select * from schema() where type = 'table'` instead (or .tables)";
    }
    if ((is_word(a, "describe") || is_word(a, "desc")) && b.kind != TokenKind::kEof) {
      std::string name = b.text;
      if (is_word(b, "table") && i + 2 < tokens.size()) name = tokens[i + 2].text;
      return "use `select * from table_info('" + name + "')` or .schema " + name + " instead";
    }
    if (is_word(a, "show")) {
      if (is_word(b, "tables")) return "use .tables or `select name from schema() where type = 'table'` instead";
      if (is_word(b, "columns") || is_word(b, "fields")) {
        std::string table = "t";  // show columns from|in NAME
        for (size_t j = i + 2; j + 1 < tokens.size(); ++j)
          if (is_word(tokens[j], "from") || is_word(tokens[j], "in")) {
            table = tokens[j + 1].text;
            break;
          }
        return "use `select * from table_info('" + table + "')` instead";
      }
      if (is_word(b, "databases") || is_word(b, "schemas")) return "use .databases instead";
      if (is_word(b, "create")) return "use .schema NAME instead";
      return "use .tables, .schema or `select * from schema()` instead";
    }
    if (a.is(TokenKind::kDot) && b.kind == TokenKind::kIdentifier) break;
  }
  return "";
}

}  // namespace quereus
