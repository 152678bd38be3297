// Schema expressions: the DEFAULT, GENERATED ALWAYS AS and CHECK bodies a table declares
// and its WITH CONTEXT variables — validated at CREATE TABLE (scope, determinism, literal
// types, generated-column dependencies) and bound once per DML plan for the write path
// (write/dml_writer.h). See docs/generated-columns.md.
//
// Row layouts the bound expressions are evaluated against (level 0 first):
//   generated: [the row being written] → [the same row, as `new.c`]
//   default:   [context variables]    → [the row being written, as `new.c`]
//   CHECK:     [context variables]    → [the checked row] → [NEW…, OLD…] images
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/planner.h"
#include "write/dml_writer.h"

namespace quereus {

class Catalog;
class DdlContext;
class Registry;
struct TableEntry;
struct TableSchema;

// Calls `fn` on every expression node of `e`, including those inside subqueries (select
// lists, FROM sources, WHERE, …, and window specs). `opaque` is true below a frame whose
// bindings a walk cannot see: a derived table, a CTE body, a nested DML statement.
using ExprFn = std::function<void(const ast::Expr& e, bool opaque)>;
void walk_expr(const ast::Expr& e, const ExprFn& fn, bool opaque = false);

// Where a refusal points. kHere: at the expression, which the statement being run wrote.
// kStored: nowhere — a table's stored body was parsed from its DDL, so its line and column
// would point into that earlier text, not into the statement being run (errors.md: the
// line and column locate the SQL that failed).
enum class BodySite { kHere, kStored };

// Throws Error "Non-deterministic expression not allowed in <clause> …" naming the first
// non-deterministic function (or nested DML) in `e`. `clause` is "DEFAULT", "CHECK" or
// "GENERATED ALWAYS AS"; `what` names the column or constraint for the message.
// `functions` / `dml` choose what is looked for: CREATE TABLE judges a CHECK's functions,
// a write statement binding it judges both (as the reference does). A date/time function
// (kClockArgs) is judged by its arguments: 'now', 'localtime', or an argument that
// may be one of them at run time (anything but a constant or a column of `row` whose type
// holds no text) makes the call non-deterministic. `hint`: the way out the message offers
// (default: a WITH CONTEXT variable or the pragma). `views`: the views the body reads are
// judged too, through their bodies (a view over `(insert … returning …)` or `random()`
// is as non-deterministic as the body written out; the reference judges the planned body).
void require_deterministic(const Registry& registry, const ast::Expr& e, const std::string& clause,
                           const std::string& what, bool functions = true, bool dml = true,
                           BodySite site = BodySite::kHere, const TableSchema* row = nullptr,
                           const char* hint = nullptr, const Catalog* views = nullptr);

// ---- CREATE TABLE

// Checks made before any storage exists: DEFAULT with GENERATED, bind parameters in a
// DEFAULT, a literal DEFAULT its column's type cannot hold, non-deterministic GENERATED
// bodies (unless `pragma nondeterministic_schema`). Throws on the first problem.
void validate_schema_expressions(DdlContext& db, const TableSchema& ts);

// Checks that need the table in the catalog (a body may read its own table through a
// subquery): DEFAULT scope (no bare column) and determinism, generated-column names and
// dependencies. Fills `entry.schema.generated_order`. Throws on the first problem; the
// caller removes the table again.
void resolve_schema_expressions(DdlContext& db, TableEntry& entry);

// The DEFAULT part of resolve_schema_expressions for one column (ALTER TABLE ADD COLUMN
// runs it over the table's new schema, so a default the catalog could not load again
// is refused as at CREATE TABLE).
void resolve_default(DdlContext& db, TableEntry& entry, int column);

// The generated-column part of resolve_schema_expressions (determinism, names,
// dependencies → `entry.schema.generated_order`); ALTER TABLE ADD COLUMN runs it over
// the table's new schema. Throws on the first problem.
void resolve_generated(DdlContext& db, TableEntry& entry);

// ---- DML binding

// The determinism gate of a write (determinism.md "Validation Timing"), on the bodies it
// evaluates: throws the refusal for the first CHECK that applies to one of `ops` and is not
// deterministic (nested DML is refused in any CHECK) and, when `generated`, the first
// non-deterministic GENERATED ALWAYS AS body. Nothing while `pragma
// nondeterministic_schema` is on. The refusal carries no position (BodySite::kStored).
void judge_write_bodies(DdlContext& db, const TableEntry& table, const std::vector<RowOp>& ops, bool generated);

// The generated columns of `table`, bound in dependency order. When `judge`, a
// non-deterministic body is refused unless `pragma nondeterministic_schema` is on.
std::vector<BoundGenerated> bind_generated(DdlContext& db, Planner& planner, const TableEntry& table,
                                           bool judge = true);

// The CHECK constraints of `table`; the slots of the context variables read by those
// that apply to one of `ops` are added to `context_read`. When `judge`, a
// non-deterministic CHECK that applies is refused unless `pragma nondeterministic_schema`
// is on (judge_write_bodies). `attached`: the checks a lens carried down to this write
// (ast::DmlClauses), bound after the table's own, in the same scopes.
std::vector<BoundCheck> bind_checks(DdlContext& db, Planner& planner, const TableEntry& table,
                                    const std::vector<RowOp>& ops, std::set<int>& context_read,
                                    const std::vector<ast::AttachedCheck>* attached = nullptr, bool judge = true);

// The DEFAULT of `column` (null when it has none). `visible[i]` says whether `new.<col i>`
// may be read (INSERT: the supplied columns). When `firing`, the default is one this
// statement evaluates: its context reads are recorded and, unless `pragma
// nondeterministic_schema`, a non-deterministic default is refused.
ScalarPtr bind_default(DdlContext& db, Planner& planner, const TableEntry& table, int column,
                       const std::vector<bool>& visible, bool firing, std::set<int>& context_read);

// A statement's WITH CONTEXT envelope for `table`: one bound value per declared variable
// (null where the statement supplies none; names the table does not declare are ignored).
std::vector<ScalarPtr> bind_context_values(Planner& planner, const TableSchema& table,
                                           const std::vector<ast::NamedExpr>& supplied);

// Throws when a NOT NULL variable in `read` is not supplied.
void require_context(const TableSchema& table, const std::vector<ScalarPtr>& values, const std::set<int>& read);

// Evaluates the envelope into the context row (declared order, coerced to the declared
// types; NULL where not supplied).
Row eval_context(const TableSchema& table, const std::vector<ScalarPtr>& values, ExecContext& ctx);

// Throws "Cannot <verb> generated column 'c'" when `column` is generated.
void refuse_generated_write(const TableSchema& table, int column, const char* verb);

}  // namespace quereus
