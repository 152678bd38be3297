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

// `name = expr`: WITH CONTEXT / WITH DEFAULTS / WITH INVERSE entries, OPTIONS (…),
// USING (…) of a schema declaration, and tags (WITH TAGS (key = value, …); a tag value
// is a literal; DROP TAGS (key, …) lists keys with a null `value`).
struct NamedExpr {
  std::string name;
  ExprPtr value;
  SourceSite site;
};
using TagList = std::vector<NamedExpr>;

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
  // `expr [as alias] WITH INVERSE (base_col = expr-over-new, …)` (authored write-back).
  std::vector<NamedExpr> inverse;
};

// `EXISTS [LEFT|RIGHT] AS name`: an existence flag after an outer join's ON/USING, or a
// membership flag between a set operator and its right leg.
struct ExistenceColumn {
  enum class Side { kDefault, kLeft, kRight } side = Side::kDefault;
  std::string name;
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
  std::vector<ExistenceColumn> exists_columns;  // after ON / USING
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

// One `op [membership columns] leg` of a compound chain.
struct CompoundLeg {
  CompoundOp op = CompoundOp::kUnion;
  std::vector<ExistenceColumn> membership;  // `union exists left as a, exists right as b`
  SelectCore core;
};

// A query expression. `core` followed by `compounds` is a flat chain
// `core op1 leg1 op2 leg2 …`; as in the reference, an unparenthesized chain groups to
// the RIGHT: `a except b union c` is `a except (b union c)`. Parenthesized legs are
// SelectCore::nested. ORDER BY / LIMIT / OFFSET apply to the whole chain.
struct Select {
  SourceSite site;
  std::unique_ptr<WithClause> with;
  SelectCore core;
  std::vector<CompoundLeg> compounds;
  std::vector<OrderingTerm> order_by;
  ExprPtr limit;
  ExprPtr offset;
  // Trailing `WITH SCHEMA a, b` (search path for unqualified names) and
  // `WITH DEFAULTS (col = expr, …)` (omitted-insert defaults for write-through).
  std::vector<std::string> schema_path;
  std::vector<NamedExpr> defaults;
  // INSERT / UPDATE / DELETE … RETURNING used as a relation (FROM subquery, scalar /
  // IN / EXISTS subquery, CTE body, compound leg). When non-null every other field is
  // unused; the statement carries its own WITH clause.
  std::unique_ptr<Statement> dml;
};

// ---------------------------------------------------------------- statements

enum class StmtKind {
  kSelect, kInsert, kUpdate, kDelete,
  kCreateTable, kCreateIndex, kCreateView, kCreateMaterializedView, kCreateAssertion,
  kDrop, kAlterTable, kAlterTags, kRefreshMaterializedView,
  kBegin, kCommit, kRollback, kSavepoint, kRelease,
  kPragma, kAnalyze, kCopy,
  kDeclareSchema, kDeclareLens, kSeed, kApplySchema, kDiffSchema, kExplainSchema,
};

// Catalog object kinds named by DROP and ALTER … TAGS.
enum class ObjectKind { kTable, kIndex, kView, kMaterializedView, kAssertion };

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

struct Assignment {
  std::vector<std::string> columns;  // one, or several for (a, b) = (…)
  ExprPtr value;
};

struct IndexedColumn {
  std::string name;  // column name (expressions are not indexable yet)
  std::string collation;
  bool desc = false;
};

// ON CONFLICT [(target cols) [WHERE e]] DO NOTHING | DO UPDATE SET … [WHERE e]
struct UpsertClause {
  std::vector<IndexedColumn> target;  // empty: any uniqueness conflict
  ExprPtr target_where;
  bool do_nothing = true;
  std::vector<Assignment> set;
  ExprPtr where;
  SourceSite site;
};

// The clauses every DML statement may carry after its body.
// A CHECK a lens carries down to a write it lowers (never parsed): the write evaluates it
// over its written row with the target table's own CHECKs (docs/lenses.md).
struct AttachedCheck {
  std::string name;
  std::string text;
  std::shared_ptr<const Expr> expr;
  bool on_insert = true;
  bool on_update = true;
  bool on_delete = false;
};

struct DmlClauses {
  std::vector<NamedExpr> context;       // WITH CONTEXT name = e, …
  TagList tags;                         // WITH TAGS (…)
  std::vector<std::string> schema_path; // WITH SCHEMA a, b
  std::vector<AttachedCheck> attached_checks;  // a lens's logical constraints
};

struct InsertStmt : Statement, DmlClauses {
  InsertStmt() : Statement(StmtKind::kInsert) {}
  std::unique_ptr<WithClause> with;
  ConflictClause or_action = ConflictClause::kNone;  // INSERT OR …
  bool replace = false;  // REPLACE INTO
  QualifiedName table;
  std::string alias;
  std::vector<std::string> columns;
  std::unique_ptr<Select> source;  // VALUES are a Select whose core has `values`
  bool default_values = false;
  std::vector<UpsertClause> upserts;
  std::vector<ResultColumn> returning;
};


struct UpdateStmt : Statement, DmlClauses {
  UpdateStmt() : Statement(StmtKind::kUpdate) {}
  std::unique_ptr<WithClause> with;
  ConflictClause or_action = ConflictClause::kNone;
  QualifiedName table;
  std::string alias;
  // `update (select …) as v [(a, b)] set …`: an inline subquery target, written through
  // like a view (docs/view-updates.md); `table` is then the alias, unqualified, and
  // `target_columns` the optional rename list of the subquery's columns.
  std::unique_ptr<Select> target_query;
  std::vector<std::string> target_columns;
  std::vector<Assignment> assignments;
  ExprPtr where;
  std::vector<ResultColumn> returning;
};

struct DeleteStmt : Statement, DmlClauses {
  DeleteStmt() : Statement(StmtKind::kDelete) {}
  std::unique_ptr<WithClause> with;
  QualifiedName table;
  std::string alias;
  // `delete from (select …) as v [(a, b)] …` (see UpdateStmt::target_query).
  std::unique_ptr<Select> target_query;
  std::vector<std::string> target_columns;
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
  // WITH TAGS right after a NAMED PRIMARY KEY / UNIQUE / CHECK / REFERENCES constraint
  // belongs to it; after an unnamed one it is the column's (ColumnDef::tags).
  TagList tags;
};

struct ColumnDef {
  std::string name;
  std::string type_name;  // as written, "" when none
  std::vector<ColumnConstraint> constraints;
  TagList tags;  // trailing WITH TAGS (…) (also after an unnamed inline constraint)
  SourceSite site;
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
  TagList tags;
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
  // WITH CONTEXT (name type [NULL|NOT NULL], …): mutation-context variables.
  std::vector<ColumnDef> context;
  // MAINTAINED [(cols)] AS <query>: a maintained table (the declared-shape form of a
  // materialized view). `maintained_columns` is the optional rename list.
  std::unique_ptr<Select> maintained;
  std::vector<std::string> maintained_columns;
  TagList tags;
};

// CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(cols)] [USING module(args)] AS <query>
// [WITH TAGS (…)]
struct CreateMaterializedViewStmt : Statement {
  CreateMaterializedViewStmt() : Statement(StmtKind::kCreateMaterializedView) {}
  bool if_not_exists = false;
  QualifiedName view;
  std::vector<std::string> columns;
  std::string module_name;
  std::vector<ModuleArg> module_args;
  std::unique_ptr<Select> select;
  TagList tags;
};

// CREATE ASSERTION name CHECK (expr)
struct CreateAssertionStmt : Statement {
  CreateAssertionStmt() : Statement(StmtKind::kCreateAssertion) {}
  QualifiedName name;
  ExprPtr check;
};

// DROP TABLE | INDEX | VIEW | MATERIALIZED VIEW | ASSERTION [IF EXISTS] name
struct DropStmt : Statement {
  DropStmt() : Statement(StmtKind::kDrop) {}
  ObjectKind object = ObjectKind::kTable;
  bool if_exists = false;
  QualifiedName name;
};

// REFRESH MATERIALIZED VIEW name
struct RefreshMaterializedViewStmt : Statement {
  RefreshMaterializedViewStmt() : Statement(StmtKind::kRefreshMaterializedView) {}
  QualifiedName view;
};

enum class TagVerb { kSet, kAdd, kDrop };

// ALTER TABLE name <action>: one arm of sql-alter.md §2.7.
struct AlterTableStmt : Statement {
  AlterTableStmt() : Statement(StmtKind::kAlterTable) {}
  enum class Action {
    kRenameTable,       // RENAME TO new_name
    kRenameColumn,      // RENAME [COLUMN] name TO new_name
    kAddColumn,         // ADD [COLUMN] column
    kDropColumn,        // DROP [COLUMN] name
    kAddConstraint,     // ADD [CONSTRAINT name] <table constraint>
    kDropConstraint,    // DROP CONSTRAINT name
    kRenameConstraint,  // RENAME CONSTRAINT name TO new_name
    kAlterPrimaryKey,   // ALTER PRIMARY KEY (cols)
    kAlterColumn,       // ALTER [COLUMN] name <column_action>
    kTags,              // {SET|ADD|DROP} TAGS on the table, a column or a named constraint
    kSetMaintained,     // SET MAINTAINED [(cols)] AS <query>
    kDropMaintained,    // DROP MAINTAINED
  } action = Action::kRenameTable;
  enum class ColumnAction {
    kSetNotNull, kDropNotNull, kSetDataType, kSetDefault, kDropDefault, kSetCollate,
  } column_action = ColumnAction::kSetNotNull;
  enum class TagTarget { kTable, kColumn, kConstraint } tag_target = TagTarget::kTable;
  QualifiedName table;
  std::string name;      // the column / constraint acted on
  std::string new_name;  // RENAME … TO
  std::unique_ptr<ColumnDef> column;          // kAddColumn
  std::unique_ptr<TableConstraint> constraint;  // kAddConstraint
  std::vector<IndexedColumn> key;             // kAlterPrimaryKey
  std::string type_name;                      // SET DATA TYPE
  std::string collation;                      // SET COLLATE
  ExprPtr default_value;                      // SET DEFAULT
  TagVerb tag_verb = TagVerb::kSet;
  TagList tags;                               // kTags (DROP TAGS: keys only)
  std::unique_ptr<Select> maintained;         // kSetMaintained
  std::vector<std::string> maintained_columns;
};

// ALTER VIEW | MATERIALIZED VIEW | INDEX name {SET|ADD|DROP} TAGS (…)
struct AlterTagsStmt : Statement {
  AlterTagsStmt() : Statement(StmtKind::kAlterTags) {}
  ObjectKind object = ObjectKind::kView;
  QualifiedName name;
  TagVerb verb = TagVerb::kSet;
  TagList tags;
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
  TagList tags;
};

// CREATE VIEW [IF NOT EXISTS] name [(cols)] AS <query expression>
struct CreateViewStmt : Statement {
  CreateViewStmt() : Statement(StmtKind::kCreateView) {}
  bool if_not_exists = false;
  QualifiedName view;
  std::vector<std::string> columns;
  std::unique_ptr<Select> select;
  TagList tags;
};

// ANALYZE | ANALYZE [schema.]table | ANALYZE schema.*
struct AnalyzeStmt : Statement {
  AnalyzeStmt() : Statement(StmtKind::kAnalyze) {}
  std::string schema;       // "" when not written
  std::string table;        // "" for ANALYZE or ANALYZE schema.*
  bool all_in_schema = false;  // ANALYZE schema.*
};

// COPY [schema.]table [(col, …)] TO | FROM 'path' [[WITH] (option [value], …)]
// COPY (select …) TO 'path' [[WITH] (option [value], …)]
// Data to or from a file (docs/sql-dialect.md "Files"). Options: FORMAT csv|tsv|jsonl|json,
// HEADER [true|false], DELIMITER 'c', NULL 'text'; checked when the statement is planned.
struct CopyStmt : Statement {
  CopyStmt() : Statement(StmtKind::kCopy) {}
  QualifiedName table;            // unset with `query`
  std::vector<std::string> columns;
  std::unique_ptr<Select> query;  // COPY (select …) TO
  bool to = true;                 // TO a file; false: FROM a file
  std::string path;
  struct Option {
    std::string name;   // lower-case
    std::string value;  // the word, string or number as written; "" when none was given
    bool has_value = false;
    SourceSite site;
  };
  std::vector<Option> options;
};

// ---------------------------------------------------------------- declarative schema

// `seed table [(cols)] ( (row), … )` or `seed table [(cols)] values (row), …` inside a
// schema declaration.
struct SeedStmt : Statement {
  SeedStmt() : Statement(StmtKind::kSeed) {}
  std::string table;
  std::vector<std::string> columns;
  std::vector<std::vector<ExprPtr>> rows;
};

// DECLARE [LOGICAL] SCHEMA name [VERSION 'x.y.z'] [USING (key = value, …)] { items }
// Items are CREATE TABLE / INDEX / VIEW / MATERIALIZED VIEW / ASSERTION statements
// (written without CREATE) and SeedStmt. Item kinds the reference does not model yet
// (domain, collation, import) are skipped and counted in `skipped_items`.
struct DeclareSchemaStmt : Statement {
  DeclareSchemaStmt() : Statement(StmtKind::kDeclareSchema) {}
  bool logical = false;
  std::string name;
  std::string version;  // "" when not written
  std::vector<ModuleArg> options;  // USING (…)
  std::vector<StatementPtr> items;
  int skipped_items = 0;
};

// DECLARE LENS FOR logical OVER basis { VIEW T AS <query>; … }
struct DeclareLensStmt : Statement {
  DeclareLensStmt() : Statement(StmtKind::kDeclareLens) {}
  std::string logical_schema;
  std::string basis_schema;
  struct View {
    std::string name;
    std::unique_ptr<Select> select;
    SourceSite site;
  };
  std::vector<View> views;
};

// APPLY SCHEMA name [TO VERSION 'v'] [WITH SEED] [OPTIONS (allow_destructive = bool,
// rename_policy = 'allow'|'require-hint'|'deny')]
struct ApplySchemaStmt : Statement {
  ApplySchemaStmt() : Statement(StmtKind::kApplySchema) {}
  std::string name;
  std::string to_version;
  bool with_seed = false;
  std::vector<NamedExpr> options;
};

struct DiffSchemaStmt : Statement {
  DiffSchemaStmt() : Statement(StmtKind::kDiffSchema) {}
  std::string name;
};

struct ExplainSchemaStmt : Statement {
  ExplainSchemaStmt() : Statement(StmtKind::kExplainSchema) {}
  std::string name;
  std::optional<std::string> version;  // `explain schema x version '2.0'`
};

}  // namespace quereus::ast
