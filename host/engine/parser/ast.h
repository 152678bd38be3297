// AST: the typed syntax tree the parser produces and the planner consumes.
//
// Every node carries the SourceSite of its first token. Nodes are immutable after
// parsing; the planner never rewrites them (it builds plan nodes instead).
// The canonical printer (parser/ast_printer.h) turns any node back into SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace quereus::ast {

// ---------------------------------------------------------------- expressions

enum class ExprKind {
  kLiteral,     // Literal
  kColumn,      // ColumnRef
  kParameter,   // Parameter
  kUnary,       // UnaryExpr
  kBinary,      // BinaryExpr
  kFunction,    // FunctionCall
  kCast,        // CastExpr
  kCollate,     // CollateExpr
  kCase,        // CaseExpr
  kBetween,     // BetweenExpr
  kIn,          // InExpr
  kExists,      // ExistsExpr
  kSubquery,    // SubqueryExpr (scalar)
  kIsNull,      // IsNullExpr (IS NULL / IS NOT NULL / NOTNULL / ISNULL)
};

struct Expr {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceSite site;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Select;  // below
struct Statement;

enum class LiteralKind { kNull, kInteger, kReal, kString, kBlob, kTrue, kFalse };

struct Literal : Expr {
  Literal() : Expr(ExprKind::kLiteral) {}
  LiteralKind literal_kind = LiteralKind::kNull;
  // kInteger/kReal: the number as spelled in the source (e.g. "1.0", "0x1F", "1e3");
  // kString: the unescaped string; kBlob: the raw bytes.
  std::string text;
  // Integers beyond int64 are parsed as kReal but keep their spelling in `text`.
};

struct ColumnRef : Expr {
  ColumnRef() : Expr(ExprKind::kColumn) {}
  std::string schema;  // optional qualifier parts, as written (quotes removed)
  std::string table;
  std::string column;  // "*" never appears here (see ResultColumn)
};

struct Parameter : Expr {
  Parameter() : Expr(ExprKind::kParameter) {}
  // "?" (positional; `index` is its 1-based position), "?NNN", ":name", "$name", "@name".
  std::string spelling;
  int index = 0;  // 1-based positional index for "?" / "?NNN"; 0 for named
  std::string name;  // for named parameters, without the sigil
};

enum class UnaryOp { kNegate, kPlus, kBitNot, kNot };

struct UnaryExpr : Expr {
  UnaryExpr() : Expr(ExprKind::kUnary) {}
  UnaryOp op = UnaryOp::kNot;
  ExprPtr operand;
};

enum class BinaryOp {
  kOr, kAnd, kXor,
  kEq,      // "="
  kEqEq,    // "==" (kept distinct for printing)
  kNe,      // "!=" and "<>" (printed "!=")
  kLt, kLe, kGt, kGe,
  kIs, kIsNot,           // IS / IS NOT (null-safe equality); `x IS [NOT] TRUE|FALSE` is
                         // kIs/kIsNot with a kTrue/kFalse Literal on the right, which
                         // Quereus evaluates as a truthiness test (printed `x is true`)
  kLike, kNotLike, kGlob, kNotGlob, kMatch, kRegexp,
  kAdd, kSub, kMul, kDiv, kMod,
  kConcat,               // ||
  kBitAnd, kBitOr, kShl, kShr,
};

struct BinaryExpr : Expr {
  BinaryExpr() : Expr(ExprKind::kBinary) {}
  BinaryOp op = BinaryOp::kEq;
  ExprPtr left, right;
  ExprPtr escape;  // LIKE … ESCAPE e
};

struct WindowSpec;  // extended by the full parser (issue 3)

struct FunctionCall : Expr {
  FunctionCall() : Expr(ExprKind::kFunction) {}
  std::string name;  // as written
  bool distinct = false;
  bool star = false;  // count(*)
  std::vector<ExprPtr> args;
  std::shared_ptr<WindowSpec> over;  // window call when non-null
};

struct CastExpr : Expr {
  CastExpr() : Expr(ExprKind::kCast) {}
  ExprPtr operand;
  std::string type_name;  // as written
};

struct CollateExpr : Expr {
  CollateExpr() : Expr(ExprKind::kCollate) {}
  ExprPtr operand;
  std::string collation;  // as written
};

struct CaseExpr : Expr {
  CaseExpr() : Expr(ExprKind::kCase) {}
  ExprPtr base;  // may be null
  std::vector<std::pair<ExprPtr, ExprPtr>> whens;
  ExprPtr else_expr;  // may be null
};

struct BetweenExpr : Expr {
  BetweenExpr() : Expr(ExprKind::kBetween) {}
  bool negated = false;
  ExprPtr operand, low, high;
};

struct InExpr : Expr {
  InExpr() : Expr(ExprKind::kIn) {}
  bool negated = false;
  ExprPtr operand;
  std::vector<ExprPtr> list;        // IN (a, b, …)
  std::unique_ptr<Select> subquery; // IN (select …)
};

struct ExistsExpr : Expr {
  ExistsExpr() : Expr(ExprKind::kExists) {}
  bool negated = false;
  std::unique_ptr<Select> subquery;
};

struct SubqueryExpr : Expr {
  SubqueryExpr() : Expr(ExprKind::kSubquery) {}
  std::unique_ptr<Select> subquery;
};

struct IsNullExpr : Expr {
  IsNullExpr() : Expr(ExprKind::kIsNull) {}
  bool negated = false;  // IS NOT NULL
  ExprPtr operand;
};

// ---------------------------------------------------------------- queries

struct QualifiedName {
  std::string schema;  // "" when unqualified
  std::string name;
  SourceSite site;
};

struct ResultColumn {
  enum class Kind { kExpr, kStar, kTableStar } kind = Kind::kExpr;
  ExprPtr expr;          // kExpr
  std::string alias;     // kExpr, "" when none
  std::string table;     // kTableStar qualifier
  SourceSite site;
};

enum class JoinKind { kInner, kLeft, kRight, kFull, kCross };

struct TableSource;
using TableSourcePtr = std::unique_ptr<TableSource>;

struct TableSource {
  enum class Kind { kTable, kSubquery, kJoin, kFunction } kind = Kind::kTable;
  SourceSite site;
  // kTable
  QualifiedName table;
  // kSubquery
  std::unique_ptr<Select> subquery;
  // kFunction (table-valued function)
  std::string function_name;
  std::vector<ExprPtr> function_args;
  // kTable / kSubquery / kFunction
  std::string alias;
  // kSubquery / kFunction: `AS t(a, b)` column names, empty when none.
  std::vector<std::string> alias_columns;
  // The right side of a join written `JOIN LATERAL <source>`.
  bool lateral = false;
  // kJoin
  JoinKind join = JoinKind::kInner;
  TableSourcePtr left, right;
  ExprPtr on;
  std::vector<std::string> using_columns;
};

struct OrderingTerm {
  ExprPtr expr;
  bool desc = false;
  enum class Nulls { kDefault, kFirst, kLast } nulls = Nulls::kDefault;
};

// One bound of a window frame: UNBOUNDED PRECEDING, <expr> PRECEDING, CURRENT ROW,
// <expr> FOLLOWING, UNBOUNDED FOLLOWING.
struct FrameBound {
  enum class Kind { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing,
                    kUnboundedFollowing } kind = Kind::kCurrentRow;
  ExprPtr offset;  // kPreceding / kFollowing
};

// ROWS|RANGE|GROUPS <start> or ROWS|RANGE|GROUPS BETWEEN <start> AND <end> [EXCLUDE …].
struct WindowFrame {
  enum class Unit { kRows, kRange, kGroups } unit = Unit::kRows;
  FrameBound start;
  bool has_end = false;  // false: the short form (the end is CURRENT ROW)
  FrameBound end;
  enum class Exclude { kNone, kNoOthers, kCurrentRow, kGroup, kTies } exclude = Exclude::kNone;
};

// The OVER (…) of a window call. Named windows (OVER w, WINDOW w AS …) are rejected
// by the parser, as in the reference.
struct WindowSpec {
  std::vector<ExprPtr> partition_by;
  std::vector<OrderingTerm> order_by;
  std::unique_ptr<WindowFrame> frame;  // null when no frame clause was written
};

// One SELECT core (no compound, ORDER BY or LIMIT).
struct SelectCore {
  bool distinct = false;
  std::vector<ResultColumn> columns;
  TableSourcePtr from;  // may be null
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  ExprPtr having;
  // VALUES (…), (…) when non-empty (then the fields above are unused)
  std::vector<std::vector<ExprPtr>> values;
  // A parenthesized query expression used as this leg, e.g. `(a union b) union c` or a
  // leg with its own ORDER BY / LIMIT. When non-null every field above is unused.
  // (A redundant `(select …)` with no compound, ORDER BY, LIMIT or WITH is collapsed
  // into a plain core by the parser.)
  std::unique_ptr<Select> nested;
};

enum class CompoundOp { kUnion, kUnionAll, kIntersect, kExcept, kDiff };

struct CommonTableExpr {
  std::string name;
  std::vector<std::string> columns;
  std::unique_ptr<Select> select;
  SourceSite site;
  // AS MATERIALIZED / AS NOT MATERIALIZED hint.
  enum class Materialization { kDefault, kMaterialized, kNotMaterialized }
      materialization = Materialization::kDefault;
};

struct WithClause {
  bool recursive = false;
  std::vector<CommonTableExpr> ctes;
  std::optional<int64_t> max_recursion;  // OPTION (MAXRECURSION n)
};

// A query expression. `core` followed by `compounds` is a flat chain
// `core op1 leg1 op2 leg2 …`; as in the reference, an unparenthesized chain groups to
// the RIGHT: `a except b union c` is `a except (b union c)`. Parenthesized legs are
// SelectCore::nested. ORDER BY / LIMIT / OFFSET apply to the whole chain.
struct Select {
  SourceSite site;
  std::unique_ptr<WithClause> with;
  SelectCore core;
  std::vector<std::pair<CompoundOp, SelectCore>> compounds;
  std::vector<OrderingTerm> order_by;
  ExprPtr limit;
  ExprPtr offset;
  // INSERT / UPDATE / DELETE … RETURNING used as a relation (FROM subquery, scalar /
  // IN / EXISTS subquery, CTE body, compound leg). When non-null every other field is
  // unused; the statement carries its own WITH clause.
  std::unique_ptr<Statement> dml;
};

// ---------------------------------------------------------------- statements

enum class StmtKind {
  kSelect, kInsert, kUpdate, kDelete,
  kCreateTable, kDropTable,
  kBegin, kCommit, kRollback, kSavepoint, kRelease,
  kPragma,
  // Added by the parser milestone (additive):
  kCreateIndex, kDropIndex, kCreateView, kDropView, kAnalyze,
};

struct Statement {
  explicit Statement(StmtKind k) : kind(k) {}
  virtual ~Statement() = default;
  StmtKind kind;
  SourceSite site;
  // The statement's own text, [begin, end) byte offsets into the prepared SQL.
  size_t text_begin = 0, text_end = 0;
};
using StatementPtr = std::unique_ptr<Statement>;

struct SelectStmt : Statement {
  SelectStmt() : Statement(StmtKind::kSelect) {}
  std::unique_ptr<Select> select;
};

enum class ConflictClause { kNone, kRollback, kAbort, kFail, kIgnore, kReplace };

struct UpsertClause;  // extended by the full parser (issue 5)

struct InsertStmt : Statement {
  InsertStmt() : Statement(StmtKind::kInsert) {}
  std::unique_ptr<WithClause> with;
  ConflictClause or_action = ConflictClause::kNone;  // INSERT OR …
  bool replace = false;  // REPLACE INTO
  QualifiedName table;
  std::string alias;
  std::vector<std::string> columns;
  std::unique_ptr<Select> source;  // VALUES are a Select whose core has `values`
  bool default_values = false;
  std::vector<ResultColumn> returning;
};

struct Assignment {
  std::vector<std::string> columns;  // one, or several for (a, b) = (…)
  ExprPtr value;
};

struct UpdateStmt : Statement {
  UpdateStmt() : Statement(StmtKind::kUpdate) {}
  std::unique_ptr<WithClause> with;
  ConflictClause or_action = ConflictClause::kNone;
  QualifiedName table;
  std::string alias;
  std::vector<Assignment> assignments;
  ExprPtr where;
  std::vector<ResultColumn> returning;
};

struct DeleteStmt : Statement {
  DeleteStmt() : Statement(StmtKind::kDelete) {}
  std::unique_ptr<WithClause> with;
  QualifiedName table;
  std::string alias;
  ExprPtr where;
  std::vector<ResultColumn> returning;
};

// REFERENCES … ON DELETE / ON UPDATE actions (kNone when the clause was not written).
enum class FkAction { kNone, kSetNull, kSetDefault, kCascade, kRestrict, kNoAction };

// REFERENCES … [NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE].
struct FkDeferral {
  enum class Deferrable { kUnspecified, kDeferrable, kNotDeferrable } deferrable =
      Deferrable::kUnspecified;
  enum class Initially { kUnspecified, kDeferred, kImmediate } initially =
      Initially::kUnspecified;
};

// CHECK ON INSERT, UPDATE, DELETE (the row operations a CHECK applies to).
enum class RowOp { kInsert, kUpdate, kDelete };

// Column and table constraints.
struct ColumnConstraint {
  enum class Kind { kPrimaryKey, kNotNull, kNull, kUnique, kCheck, kDefault, kCollate,
                    kForeignKey, kGenerated } kind = Kind::kNotNull;
  std::string name;  // CONSTRAINT name, "" when none
  bool desc = false;               // PRIMARY KEY DESC
  ConflictClause on_conflict = ConflictClause::kNone;
  ExprPtr expr;                    // CHECK / DEFAULT / GENERATED
  std::string collation;           // COLLATE
  QualifiedName fk_table;          // REFERENCES
  std::vector<std::string> fk_columns;
  bool generated_stored = false;
  SourceSite site;
  FkAction fk_on_delete = FkAction::kNone;  // REFERENCES … ON DELETE
  FkAction fk_on_update = FkAction::kNone;  // REFERENCES … ON UPDATE
  FkDeferral fk_deferral;
  std::vector<RowOp> check_on;              // CHECK ON …; empty = the default
};

struct ColumnDef {
  std::string name;
  std::string type_name;  // as written, "" when none
  std::vector<ColumnConstraint> constraints;
  SourceSite site;
};

struct IndexedColumn {
  std::string name;  // column name (expressions are not indexable yet)
  std::string collation;
  bool desc = false;
};

struct TableConstraint {
  enum class Kind { kPrimaryKey, kUnique, kCheck, kForeignKey } kind = Kind::kPrimaryKey;
  std::string name;
  std::vector<IndexedColumn> columns;  // PK / UNIQUE / FK local columns
  ConflictClause on_conflict = ConflictClause::kNone;
  ExprPtr expr;                        // CHECK
  QualifiedName fk_table;
  std::vector<std::string> fk_columns;
  SourceSite site;
  FkAction fk_on_delete = FkAction::kNone;
  FkAction fk_on_update = FkAction::kNone;
  FkDeferral fk_deferral;
  std::vector<RowOp> check_on;
};

struct ModuleArg {
  std::string key;     // "" for a positional argument
  ExprPtr value;       // literal expression
};

struct CreateTableStmt : Statement {
  CreateTableStmt() : Statement(StmtKind::kCreateTable) {}
  bool temporary = false;
  bool if_not_exists = false;
  QualifiedName table;
  std::vector<ColumnDef> columns;
  std::vector<TableConstraint> constraints;
  std::string module_name;             // USING module, "" for the default
  std::vector<ModuleArg> module_args;  // USING module(args)
};

struct DropTableStmt : Statement {
  DropTableStmt() : Statement(StmtKind::kDropTable) {}
  bool if_exists = false;
  QualifiedName table;
};

struct BeginStmt : Statement {
  BeginStmt() : Statement(StmtKind::kBegin) {}
  std::string mode;  // "", "deferred", "immediate", "exclusive"
};
struct CommitStmt : Statement { CommitStmt() : Statement(StmtKind::kCommit) {} };
struct RollbackStmt : Statement {
  RollbackStmt() : Statement(StmtKind::kRollback) {}
  std::string savepoint;  // ROLLBACK TO [SAVEPOINT] name when non-empty
};
struct SavepointStmt : Statement {
  SavepointStmt() : Statement(StmtKind::kSavepoint) {}
  std::string name;
};
struct ReleaseStmt : Statement {
  ReleaseStmt() : Statement(StmtKind::kRelease) {}
  std::string name;
};

struct PragmaStmt : Statement {
  PragmaStmt() : Statement(StmtKind::kPragma) {}
  QualifiedName name;
  ExprPtr value;  // PRAGMA x = v or PRAGMA x(v); null for a read
};

// ---------------------------------------------------------------- added statements
// (parser milestone; additive, same conventions as above)

// CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON table (col [COLLATE c] [ASC|DESC], …)
// [WHERE e]. Expression columns are rejected by the parser ("Indices on expressions are
// not supported").
struct CreateIndexStmt : Statement {
  CreateIndexStmt() : Statement(StmtKind::kCreateIndex) {}
  bool unique = false;
  bool if_not_exists = false;
  QualifiedName index;
  QualifiedName table;
  std::vector<IndexedColumn> columns;
  ExprPtr where;  // partial index predicate, null when none
};

struct DropIndexStmt : Statement {
  DropIndexStmt() : Statement(StmtKind::kDropIndex) {}
  bool if_exists = false;
  QualifiedName index;
};

// CREATE VIEW [IF NOT EXISTS] name [(cols)] AS <query expression>
struct CreateViewStmt : Statement {
  CreateViewStmt() : Statement(StmtKind::kCreateView) {}
  bool if_not_exists = false;
  QualifiedName view;
  std::vector<std::string> columns;
  std::unique_ptr<Select> select;
};

struct DropViewStmt : Statement {
  DropViewStmt() : Statement(StmtKind::kDropView) {}
  bool if_exists = false;
  QualifiedName view;
};

// ANALYZE | ANALYZE [schema.]table | ANALYZE schema.*
struct AnalyzeStmt : Statement {
  AnalyzeStmt() : Statement(StmtKind::kAnalyze) {}
  std::string schema;       // "" when not written
  std::string table;        // "" for ANALYZE or ANALYZE schema.*
  bool all_in_schema = false;  // ANALYZE schema.*
};

}  // namespace quereus::ast
