// Internal to rewrite/: the shape of a view as view-write lowering sees it (its columns'
// routing from the lineage service, its join sides and key classes), the syntax helpers
// the lowering rewrites with, and the lowering steps the files of rewrite/ share.
// view_shape.cc analyzes, view_writes.cc lowers single-source and join writes and
// resolves targets, view_write_setops.cc lowers set-operation writes and reports the
// surface (view_info(), column_info()). Not part of any other folder's interface.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "parser/ast.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "planner/lineage.h"
#include "planner/planning_context.h"
#include "rewrite/view_writes.h"

namespace quereus::view_write {

using ast::ExprPtr;
using ast::clone;
using ast::conjoin;
using ast::binary;
using ast::negate;

// ------------------------------------------------------------------ syntax helpers
// (view_shape.cc)

// A rewrite hook: returns true when it replaced `e` (the walk then does not descend into
// the replacement). `depth` is 0 at the statement's own level, +1 per subquery.
using Rewrite = std::function<bool(ExprPtr& e, int depth)>;
// The subquery cores enclosing the expression a Rewrite is looking at, innermost last. A
// walk started from inside another walk's hook continues the outer walk's stack.
using CoreStack = std::vector<const ast::SelectCore*>;

void walk(ExprPtr& e, const Rewrite& fn);
void walk(ExprPtr& e, const Rewrite& fn, int depth, CoreStack& cores);
void requalify(ExprPtr& e, const std::string& from, const std::string& to);
void retarget(ExprPtr& e, const std::string& from, const std::string& to, CoreStack& cores);
void conjuncts(const ast::Expr* e, std::vector<const ast::Expr*>& out);
std::optional<bool> literals_equal(const ast::Literal& a, const ast::Literal& b);
ExprPtr number(const Value& k);
ExprPtr apply_inverse(const std::vector<InverseStep>& steps, ExprPtr v);
bool is_image(const std::string& q);

// ------------------------------------------------------------------ the view's shape

struct ViewColumn {
  std::string name;                 // as the view exposes it
  std::string output;               // as the body's select names it (what `new.<x>` reads)
  const ast::Expr* term = nullptr;  // the body's expression; null for a `*` column
  std::string base;                 // the source column it is ("" when computed)
  int side = -1;                    // join views: the side `base` belongs to
  ExprPtr qualified;                // join views: the term, every column side-qualified
  // An invertible term (`b + 1`, `-b`, `b collate nocase`): the steps from a written view
  // value to the base value it stands for (empty: the identity). From the lineage service.
  std::vector<InverseStep> inverse;
  // An authored inverse, `… with inverse (target = expr, …)` (vu-inverses.md): the puts a
  // written value becomes, each over the written view row (`new.<column>`). Authored wins:
  // it replaces the routing above. Null when the column has none.
  const std::vector<ast::NamedExpr>* authored = nullptr;

  // Join views: an outer join's existence flag over padded side `existence_side` (-1: not
  // one). Writing it materializes (true) or deletes (false) that side's row.
  int existence_side = -1;

  ExprPtr to_base(ExprPtr value) const { return apply_inverse(inverse, std::move(value)); }
  bool writable() const { return authored || !base.empty(); }
};

// One table of a join view's FROM.
struct JoinSide {
  std::shared_ptr<TableEntry> table;
  std::string qualifier;  // the body's alias for it, or its name as written
  bool padded = false;    // the non-preserved side of an outer join (NULL-extended)
  int find(std::string_view column) const { return table->schema.find_column(std::string(column)); }
};

// A single-source view: SELECT <columns> FROM <one relation> [alias] [WHERE p].
struct ViewShape {
  std::string name;                // the view's display name, for messages
  std::string schema;              // the view's schema (lower-case)
  ast::QualifiedName source;       // the body's source, schema-qualified
  std::shared_ptr<TableEntry> table;  // when the source is a table
  std::string alias;               // the body's alias for the source ("" when none)
  std::string qualifier;           // the name the body's columns are qualified by
  std::vector<std::string> source_columns;
  std::vector<ViewColumn> columns;
  const ast::Expr* where = nullptr;
  // Join views (an inner equi-join of two or more tables): the sides in FROM order and
  // the equivalence classes of (side, column) the ON equalities establish.
  std::vector<JoinSide> sides;
  std::vector<std::vector<std::pair<int, int>>> classes;
  // The columns a JOIN … USING names: an unqualified reference is the first side's.
  std::vector<std::string> using_columns;
  // The body's `WITH DEFAULTS (col = expr, …)`: values for columns an INSERT omits.
  const std::vector<ast::NamedExpr>* defaults = nullptr;
  // The writing statement's environment, for the names its subqueries read.
  PlanningContext* db = nullptr;
  std::vector<std::string> caller_path;
  const ast::Select* body = nullptr;
  // The body's lineage (planner/lineage.h): where each column comes from, the join's
  // equalities and key facts. Column routing and key preservation read it.
  RelLineage lineage;
  bool join() const { return !sides.empty(); }
  // An INSERT shares one value across the join's key classes (supplied by one member, or
  // minted from the anchor's DEFAULT) when the join is two distinct tables: the shared
  // key is the one ON equality between them (vu-operators.md, Inserts). A join of more
  // tables, or a self-join, leaves each side's key to be supplied (view_info() reports
  // it not insertable when it is not).
  // A lens body synthesized from a mapping advertisement (docs/decompositions.md): every
  // padded side is an optional member keyed 1:1 by the anchor, so it belongs to the row
  // and a DELETE removes it too (anchor last).
  bool decomposition = false;
  std::vector<LensSlot::EavMember> eav;  // its EAV members (their triples go on DELETE)
  // Join keys shared as one value per row: two different tables, or every member of an
  // advertised decomposition (a plain view over more than two tables stays
  // non-insertable, as the reference has it: vu-operators.md, Inner Join).
  bool shares_keys() const {
    if (sides.size() < 2 || (sides.size() > 2 && !decomposition)) return false;
    for (size_t i = 0; i < sides.size(); ++i)
      for (size_t j = i + 1; j < sides.size(); ++j)
        if (sides[i].table == sides[j].table) return false;  // a self-join: aliases differ, keys do not
    return true;
  }

  // Two view columns that expose one join key class (`p.pid as ppid, c.pid as cpid` over
  // `c.pid = p.pid`): an INSERT could not honour two values (unsupported-join). Empty
  // when none do.
  std::vector<std::string> join_key_exposed_twice() const {
    if (!shares_keys()) return {};
    for (const auto& cls : classes) {
      std::vector<std::string> names;
      for (const ViewColumn& c : columns) {
        if (c.base.empty() || c.authored) continue;
        const int col = sides[c.side].find(c.base);
        for (const auto& [side, column] : cls)
          if (side == c.side && column == col) names.push_back(c.name);
      }
      if (names.size() > 1) return names;
    }
    return {};
  }

  const ViewColumn* find(std::string_view n) const {
    for (auto& c : columns)
      if (iequals(c.name, n)) return &c;
    return nullptr;
  }
  // The column the body's select names `n` (an authored put's `new.<n>`).
  const ViewColumn* find_output(std::string_view n) const {
    for (auto& c : columns)
      if (iequals(c.output, n)) return &c;
    return nullptr;
  }
  // The base term of view column `c`, as an expression at the lowered statement's level.
  ExprPtr term(const ViewColumn& c) const {
    if (c.qualified) return clone(*c.qualified);
    if (c.term) return clone(*c.term);
    auto ref = std::make_unique<ast::ColumnRef>();
    ref->column = c.base;
    return ref;
  }
  [[noreturn]] void refuse(const std::string& why) const {
    throw Error(StatusCode::kError, "cannot write through view '" + name + "': " + why);
  }
};

// Whether `pred` holds for a function call at the body's own level of `e` (through
// operators, casts and call arguments; not into subqueries, which may legitimately hold

// (view_shape.cc)
ViewShape analyze(PlanningContext& db, const ViewEntry& view);
// A window call at the expression's own level (not inside its subqueries).
bool has_window(const ast::Expr& e);
// An aggregate call at the expression's own level.
bool has_aggregate(PlanningContext& db, const ast::Expr& e);
std::pair<int, int> join_column(const ViewShape& v, const ast::Expr* e);
std::vector<std::string> relation_columns(PlanningContext& db, const ResolvedRelation& rel);
std::vector<std::pair<std::string, const ast::Literal*>> constant_bindings(const ViewShape& v);

// ------------------------------------------------------------------ lowering steps

// (view_writes.cc)
void lower_update(ast::UpdateStmt& s, const ViewShape& v);
void lower_delete(ast::DeleteStmt& s, const ViewShape& v);
void lower_insert(ast::InsertStmt& s, const ViewShape& v);
// A set operation's leg over a join, written as its own target: `stmt` retargeted to a
// CTE `__vw_leg<index>` over the leg's body (schema-qualified), which the statement's
// planning lowers through the join path with its own key capture. The user's references
// keep the view's name (the target's alias).
ast::StatementPtr leg_as_cte_target(const ViewShape& v, const ast::Statement& stmt, size_t index);

// ------------------------------------------------------------------ set operations
// (view_write_membership.cc)

// A set-operation body as a tree of binary operators (compounds group to the right, a
// parenthesized leg is a nested operator). A leaf is one SELECT core, written as an
// ephemeral view named like the view whose columns are the set operation's data columns.
struct SetOpTree;
struct SetOpOperand {
  std::shared_ptr<const ViewEntry> leg;  // a leaf
  std::unique_ptr<SetOpTree> tree;       // or a nested set operation
};
struct SetOpTree {
  ast::CompoundOp op = ast::CompoundOp::kUnion;
  SetOpOperand sides[2];
};
struct SetOpBody {
  std::vector<std::string> names;  // the view's columns: data columns, then membership flags
  size_t data = 0;                 // how many are data columns
  std::string flags[2];            // the root operator's membership flag per side ("": none)
  SetOpTree root;

  // The leaves of one side of the root (-1: both), left to right.
  std::vector<std::shared_ptr<const ViewEntry>> leaves(int side = -1) const;
  // No membership flags and only UNION / UNION ALL operators: written leg by leg.
  bool flat_union() const;
  int flag_side(std::string_view name) const;  // -1: not a flag
  int data_index(std::string_view name) const;  // -1: not a data column
  // The root's operands a data UPDATE or a DELETE reaches (an EXCEPT: its left only).
  std::vector<int> fan_sides() const;
};
// The body of a set-operation view; nullopt when the body is no set operation. Throws
// when it is one that cannot be written through at all (LIMIT, its own WITH, DIFF).
std::optional<SetOpBody> set_op_body(PlanningContext& db, const ViewEntry& view);

// One leg a data write or a delete reaches, confined to the captured rows whose
// membership flag `gate` is true ("": every captured row).
struct FanTarget {
  std::shared_ptr<const ViewEntry> leg;
  std::string gate;
};
// Throws when an EXCEPT / INTERSECT inside the operand has no flag to confine it.
std::vector<FanTarget> fan_targets(const ViewEntry& view, const SetOpBody& body, int side);

// A write through a body with membership flags, an INTERSECT / EXCEPT, or a nested
// operand: the addressed rows are captured first, then each branch is written.
// `ephemeral`: the view is a CTE or an inline subquery target, read from its body.
void lower_membership_write(PlanningContext& db, const ViewEntry& view, const SetOpBody& body,
                            const ast::Statement& stmt, const std::vector<std::string>& caller_path, bool ephemeral,
                            LoweredWrite& out);

// (view_write_setops.cc)
void lower_set_op_write(PlanningContext& db, const ViewEntry& view,
                        const std::vector<std::shared_ptr<const ViewEntry>>& legs, const ast::Statement& stmt,
                        const std::vector<std::string>& caller_path, LoweredWrite& out);

}  // namespace quereus::view_write
