// Writing through views: an INSERT / UPDATE / DELETE whose target is a view is lowered,
// at plan time, into statements on the view's source (a base table, or another view,
// lowered again in turn). The lowered statements are planned by the ordinary DML
// builders, so every row still goes through the one write path (DmlWriter).
// docs/view-updates.md describes the rules.
#pragma once

#include <string>
#include <vector>

#include "parser/ast.h"

namespace quereus {

class DatabaseImpl;

// The base statements one view write becomes, run in order within the statement.
struct LoweredWrite {
  std::vector<ast::StatementPtr> statements;
  // Index of the statement whose RETURNING rows are the view write's rows (-1: none).
  int returning_from = -1;
};

// When `stmt` (an INSERT, UPDATE or DELETE) targets a view: the lowered statements.
// Returns an empty LoweredWrite when the target is a table. `nested` is the enclosing
// statement's WITH SCHEMA path for a DML used as a relation (null at top level).
// Throws a plan-time Error when the view cannot be written through.
LoweredWrite lower_view_write(DatabaseImpl& db, const ast::Statement& stmt, const std::vector<std::string>* nested);

}  // namespace quereus
