// Writing through views: an INSERT / UPDATE / DELETE whose target is a view is lowered,
// at plan time, into statements on the view's source (a base table, or another view,
// lowered again in turn). The lowered statements are planned by the ordinary DML
// builders, so every row still goes through the one write path (DmlWriter).
// docs/view-updates.md describes the rules.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "parser/ast.h"

namespace quereus {

class PlanningContext;
struct ViewEntry;
struct TableEntry;

// The base statements one view write becomes, run in order within the statement.
struct LoweredWrite {
  // A join view's write first computes one row set, before any base statement runs, and
  // binds it under `capture_name` for every statement below (Planner::bind_rows):
  //  - INSERT: the envelope — each row the user's source produced (the supplied view
  //    columns c0, c1, …), followed by the shared keys m0, m1, … minted from the anchor
  //    columns' DEFAULTs, once per row, with mutation_ordinal() = the row's ordinal;
  //  - UPDATE / DELETE: the base keys of every view row the statement addresses.
  ast::StatementPtr capture;  // a SELECT statement (null: none)
  std::string capture_name;
  struct MintedKey {
    std::shared_ptr<TableEntry> table;
    int column = -1;
    // Per column of `table`: the envelope column (c<i>) the user supplies it from, or -1;
    // the DEFAULT reads those as new.<column> (vu-mutation-context.md).
    std::vector<int> supplied;
  };
  std::vector<MintedKey> minted;
  std::vector<ast::StatementPtr> statements;
  // Index of the statement whose RETURNING rows are the view write's rows (-1: none).
  int returning_from = -1;
  // A join view's UPDATE / DELETE … RETURNING: a SELECT over the view body restricted to
  // the captured keys, run after the statements (UPDATE: the new image) or before them
  // (DELETE: the deleted image).
  ast::StatementPtr returning_query;
  bool returning_before = false;
  // Checks run after the capture and before any statement: a SELECT that must return no
  // row, else the write fails with CONSTRAINT and `message` (a logical RESTRICT over a
  // basis foreign key whose action would otherwise change the children first).
  struct PreCheck {
    ast::StatementPtr select;
    std::string message;
  };
  std::vector<PreCheck> pre_checks;
  // Row sets computed before everything else (before `capture`), each bound under its
  // name for what follows, in order (a later one may read an earlier one): the parent
  // keys a logical foreign key's actions are carried out from.
  struct Capture {
    ast::StatementPtr select;
    std::string name;
  };
  std::vector<Capture> pre_captures;
};

// How writes through a view reach its base tables, for the introspection surfaces
// (view_info(), column_info()): the same analysis the lowering uses, so the surfaces
// agree with what a write does. `ok` is false when the view cannot be written through
// (every column then reads as read-only).
struct ViewWriteSurface {
  struct Site {
    std::shared_ptr<TableEntry> table;  // null: read-only (computed)
    int column = -1;
    int side = 0;  // which of the body's base relations (a self-join's two aliases differ)
  };
  bool ok = false;
  // An INSERT is refused whatever the coverage (a set operation whose operand is itself
  // a set operation: no single leg takes the row).
  bool insert_refused = false;
  // The body's base relations, in FROM order, and whether each must be covered: an outer
  // join's padded side need not be (an INSERT writes it only when given its columns; a
  // DELETE leaves it).
  struct Side {
    std::shared_ptr<TableEntry> table;
    bool optional = false;
  };
  std::vector<Side> sides;
  std::vector<std::string> names;  // the view's columns
  std::vector<Site> sites;         // per view column
  std::vector<Site> reach;         // every base column a view column writes, per side
                                   // (a set operation's legs each reach their own)
  std::vector<Site> inserted;      // the part of `reach` an INSERT writes: a registry
                                   // inverse (`b + 1`) is updatable but not insertable
  std::vector<Site> filled;        // base columns an INSERT fills without the user
                                   // (constant bindings, WITH DEFAULTS, shared join keys)
};
ViewWriteSurface describe_view_writes(PlanningContext& db, const ViewEntry& view);

// When `stmt` (an INSERT, UPDATE or DELETE) targets a view: the lowered statements.
// Returns an empty LoweredWrite when the target is a table. `nested` is the enclosing
// statement's WITH SCHEMA path for a DML used as a relation (null at top level).
// Throws a plan-time Error when the view cannot be written through.
// The view a maintained table's derivation describes (its body, named by the table's
// columns): what writes naming the table lower through, and what column_info() reads.
std::shared_ptr<const ViewEntry> maintained_view_entry(const TableEntry& table);

LoweredWrite lower_view_write(PlanningContext& db, const ast::Statement& stmt, const std::vector<std::string>* nested);

}  // namespace quereus
