// Limits: the bounds a database puts on the work one statement may ask for, so that any
// input fails with a clear error instead of exhausting the stack, the memory or the CPU.
//
// One plain struct; the YAML keys (`databases.<name>.limits`) and the pragma names are
// the field names. docs/configuration.md ("Limits") is the reference. Defaults follow
// SQLite's where SQLite has the same limit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quereus {

struct Limits {
  // Default 1,000,000,000 bytes (SQLite's SQLITE_MAX_SQL_LENGTH). The length of the SQL
  // text handed to prepare/exec; longer is TOOBIG.
  int64_t max_sql_length = 1'000'000'000;
  // Default 1,000,000,000 bytes (SQLite's SQLITE_MAX_LENGTH). The largest TEXT or BLOB a
  // function or operator may produce; larger is TOOBIG.
  int64_t max_length = 1'000'000'000;
  // Default 500 (SQLite's SQLITE_MAX_COMPOUND_SELECT). The SELECTs one compound
  // (UNION / INTERSECT / EXCEPT chain) may join; more is a SYNTAX error at parse time.
  int64_t max_compound_select = 500;
  // Default 64 (SQLite's fixed limit). The tables (and subqueries, views, table
  // functions) one FROM clause may join; more is a SYNTAX error at parse time.
  int64_t max_join_tables = 64;
  // Default 1000 (SQLite's SQLITE_MAX_EXPR_DEPTH). The nesting depth of an expression
  // (parentheses, subqueries and prefix operators count 4, one more operand of a chain
  // such as a + b + c counts 1); deeper is a SYNTAX error at parse time.
  int64_t max_expr_depth = 1000;
  // Default 100. How deeply views and common table expressions may refer to one another
  // (a view over a view over …) when a statement is planned; deeper is TOOBIG.
  int64_t max_view_depth = 100;
  // Default 1,073,741,824 (1 GiB; SQLite has no such limit, only a process-wide soft heap
  // limit). The bytes the rows one statement buffers may hold — sorts, join sides, groups,
  // DISTINCT and set-operation sets, recursive CTE queues, window partitions, materialized
  // subqueries — counted as rows are kept; more is NOMEM.
  int64_t max_statement_memory = 1'073'741'824;
};

// The limit names, in declaration order (for messages and docs).
const std::vector<std::string>& limit_names();

// The field of `limits` named `name` (lower-case), or null when no limit has that name.
int64_t* limit_field(Limits& limits, std::string_view name);
inline const int64_t* limit_field(const Limits& limits, std::string_view name) {
  return limit_field(const_cast<Limits&>(limits), name);
}

}  // namespace quereus
