// Planner: the second stage of the pipeline. AST → bound plan (names resolved to
// attributes, types and collations decided, subqueries planned).
//
//   parser/ → Planner → optimizer/ → runtime/
#pragma once

#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/rel_node.h"
#include "planner/scalar_expr.h"
#include "catalog/catalog.h"
#include "planner/planning_context.h"

namespace quereus {

struct ParamTypes;

struct ViewEntry;
struct LensSlot;
struct AggBinding;
struct DmlRun;
struct WindowBinding;

// The facts of a basis table a lens key proof reads (its columns and their nullability,
// its primary key, its CHECKs with the operations they run on), as one comparable text:
// a logical key asserted from a proof holds only while these are unchanged.
std::string key_proof_facts(const TableSchema& t);

// A named relation visible to FROM: a CTE.
struct CteBinding {
  const ast::CommonTableExpr* cte = nullptr;
  bool recursive = false;  // declared under WITH RECURSIVE
  std::optional<int64_t> max_recursion;  // the clause's OPTION (MAXRECURSION n)
  // While the recursive term is planned, references to the CTE read this working table.
  std::shared_ptr<WorkingTableNode> working;
  int order = 0;  // position in its WITH list
  // A data-modifying member (insert/update/delete … returning) of a statement's leading
  // WITH clause: its one run, shared by every reference (null run: not such a member).
  PlannedDml dml;
  // Named more than once by the statement, or hinted MATERIALIZED (and not NOT
  // MATERIALIZED): the rows every uncorrelated reference replays, computed once per
  // execution (sql-select.md 3.7; null: each reference runs the body itself).
  std::shared_ptr<SharedRows> shared;
};

// What names mean at one query level.
struct Scope {
  struct Column {
    std::string table;   // alias or table name (for qualified refs)
    std::string schema;
    std::string name;
    int slot = 0;
    Attribute attr;
    // Above an aggregation: a source column that is not a grouping key. Naming it is an
    // error, even from a correlated subquery.
    bool ungrouped = false;
  };
  // A select-list alias, visible to HAVING and ORDER BY of a grouped query as the
  // lowest-precedence name of its level.
  struct Alias {
    std::string name;
    ScalarPtr expr;
  };
  std::vector<Column> columns;
  std::vector<Alias> aliases;
  bool implicit_group = false;             // aggregated without GROUP BY: one group
  const Scope* outer = nullptr;
  AggBinding* agg = nullptr;               // set while binding post-aggregate expressions
  WindowBinding* win = nullptr;            // set where window functions may appear
  mutable bool correlated = false;         // a reference escaped to an outer scope
  // A CHECK's own row: a table-qualified reference reaching it from a subquery stands
  // for the bare column, so a subquery source exposing that bare name captures it and
  // the qualified form is refused ("t.c isn't a column"), as the reference does.
  bool qualified_self = false;
  // When set, the slot of every column a name resolves to at this level is recorded
  // (schema expressions use it for dependency edges and "which variables are read").
  std::set<int>* used = nullptr;
};

// Rows a view write fills at run time (its insert envelope, its captured row keys), visible
// to FROM under `name` while a planner that bound them plans (rewrite/view_writes.h).
struct BoundRows {
  std::string name;
  std::vector<Attribute> columns;  // names and types; ids are minted per planner
  std::shared_ptr<std::vector<Row>> rows;
};

using CteFrame = std::map<std::string, std::shared_ptr<CteBinding>>;

// What a planner inherits from the statement it plans a part of: the row sets of a view
// write, and the WITH members a nested DML statement (a data-modifying WITH member) sees
// (the enclosing statement's, and the siblings declared before it).
struct PlanSeed {
  std::vector<BoundRows> rows;
  std::vector<CteFrame> ctes;
  // The statement's declared parameter types (types-parameters.md; null: none declared):
  // a typed parameter types the expression it appears in.
  const ParamTypes* param_types = nullptr;
};

struct QueryPlan {
  RelPtr root;
  std::vector<std::string> names;  // output column names (FORMAT.md §6.3)
};

// A data-modifying WITH member outside the statement's own leading WITH clause (a
// subquery, a CTE body, a view or assertion body): refused with its own diagnostic, which
// callers that plan a body only to look for problems let through by type.
class MisplacedDmlError : public Error {
 public:
  using Error::Error;
};

// A column name that resolves in no scope ("Column not found: x"): its own type, so a
// caller that recovers from it (the generated-column analysis) decides by type, never by
// the message's text.
class UnknownColumnError : public Error {
 public:
  using Error::Error;
};

class Planner {
 public:
  // `db` is what the planner sees of the database (DatabaseImpl implements it).
  explicit Planner(PlanningContext& db) : db_(db) {}

  QueryPlan plan_select(const ast::Select& select, const Scope* outer);
  ScalarPtr bind_expr(const ast::Expr& expr, const Scope& scope);
  // Scope over the columns of a table (used by DML).
  Scope table_scope(const TableEntry& table, const std::string& alias) const;
  // Makes a statement's own WITH clause visible to what is planned next (DML sources).
  // `owner`: the query the clause belongs to (an INSERT's source), whose references to
  // each member, with the other members' bodies', decide whether the member's rows are
  // shared (null: the members' bodies alone).
  void push_with(const ast::WithClause& with, const ast::Select* owner = nullptr);
  void pop_with();
  // Makes `rows` visible to FROM by its name, below every WITH clause.
  void bind_rows(const BoundRows& rows);
  // Applies a PlanSeed (null: nothing) before anything is planned.
  void seed(const PlanSeed* seed);
  // The declared parameter types the planner types parameters with (null: none).
  const ParamTypes* param_types() const { return param_types_; }
  // Marks `with` as the statement's own leading WITH clause: the only one whose members
  // may be data-modifying. Those members run before the statement body, once each
  // (take_dml_prelude hands them to the executable).
  void set_leading_with(const ast::WithClause* with) { leading_with_ = with; }
  std::vector<std::shared_ptr<DmlRun>> take_dml_prelude() { return std::move(dml_prelude_); }
  // Plans a view body as the view sees it: no outer scope, none of the caller's CTEs,
  // and unqualified names resolved in `home_schema` first (sql-views.md, home-schema
  // resolution).
  QueryPlan plan_view_body(const ast::Select& body, const std::string& home_schema);
  // A statement's `WITH SCHEMA a, b`: unqualified names resolve along this path instead
  // of the session schema_path (stored bodies planned meanwhile keep their own path).
  void set_statement_path(const std::vector<std::string>& path);
  // The enclosing statement's path, for a nested DML statement without its own.
  void inherit_statement_path(const std::vector<std::string>& path) {
    if (statement_path_.empty()) set_statement_path(path);
  }
  // Schema-authored expressions (DEFAULT, CHECK, generated columns) of a table in
  // `schema`: unqualified names resolve in that schema only, and no caller CTE is visible.
  void set_schema_authored(const std::string& schema);
  // Resolves a relation name the way a FROM reference at the current position would.
  ResolvedRelation resolve_relation(const ast::QualifiedName& name);
  // The search path unqualified names currently walk.
  std::vector<std::string> search_path() const;
  // The result column name of a select item.
  static std::string column_name(const ast::ResultColumn& rc);
  // A fresh attribute id.
  int mint_attr() { return next_attr_++; }

 private:
  struct Source {
    RelPtr node;
    Scope scope;  // columns with slots relative to node's output
  };
  QueryPlan plan_cte(const ast::CommonTableExpr& cte, CteBinding& binding, const Scope* outer);
  PlannedDml make_dml_run(const ast::Statement& stmt, const CteFrame* siblings = nullptr);
  QueryPlan plan_dml(const PlannedDml& dml);
  Source plan_view(const ViewEntry& view, const ast::TableSource& src);
  // Auxiliary-access routing (planner/lens_reads.cc; spec/lens.md "Auxiliary-access
  // read-path routing"): a WHERE conjunct of `core` that reads one logical table's column
  // in a form an auxiliary of its lens answers makes that reference's body start from
  // the auxiliary, restricted by the conjunct moved onto it (the conjunct stays in WHERE).
  struct AuxRouting {
    std::shared_ptr<const LensSlot> slot;
    size_t route = 0;           // index into slot->aux_routes
    ast::ExprPtr predicate;     // the conjunct over the auxiliary's column
  };
  // The FROM's table references that name a logical table (a CTE of the name shadows it;
  // a name that does not resolve is left for plan_from to report), resolved once per core.
  struct LensReference {
    const ast::TableSource* src;
    std::shared_ptr<const ViewEntry> view;
  };
  void note_lens_reads(const ast::SelectCore& core, const std::vector<ast::OrderingTerm>* order_by);
  void route_auxiliary_access(const ast::SelectCore& core, const std::vector<LensReference>& refs, size_t leaves);
  // Mandatory-member elimination (planner/lens_reads.cc): for a reference of a logical
  // table whose decomposition has inclusion dependencies, the names of the view columns
  // the query may read; plan_view then leaves out a mandatory member none of whose
  // columns is among them (its row exists for every anchor row, keyed 1:1).
  void note_used_columns(const ast::SelectCore& core, const std::vector<ast::OrderingTerm>* order_by,
                         const std::vector<LensReference>& refs);
  // Drops what note_lens_reads noted for `from`'s references
  // and plan_view did not take (the keys are syntax nodes: none may outlive its plan_from).
  void forget_lens_reads(const ast::TableSource& from);
  std::unique_ptr<ast::Select> reduced_body(const ast::Select& body, const LensSlot& slot,
                                            const std::set<std::string>& used) const;
  std::unique_ptr<ast::Select> routed_body(const ast::Select& body, const AuxRouting& r) const;
  Source plan_from(const ast::TableSource& src, const Scope* outer);
  // plan_from by kind of source (planner.cc).
  std::optional<Source> plan_cte_reference(const ast::TableSource& src, const Scope* outer);
  Source plan_table_reference(const ast::TableSource& src);
  Source plan_subquery_source(const ast::TableSource& src, const Scope* outer);
  Source plan_table_function(const ast::TableSource& src, const Scope* outer);
  Source plan_join(const ast::TableSource& src, const Scope* outer);
  ScalarPtr bind_using(const ast::TableSource& src, const Source& l, const Source& r, int left_width);
  QueryPlan plan_core(const ast::SelectCore& core, const Scope* outer,
                      const std::vector<ast::OrderingTerm>* order_by, RelPtr* sorted_root);
  // The stages of plan_core, in pipeline order (planner.cc).
  struct CoreState;
  QueryPlan plan_values(const ast::SelectCore& core, const Scope* outer);
  void plan_core_source(CoreState& st);
  void expand_select_list(CoreState& st);
  void order_aggregate_input(CoreState& st);
  void plan_grouping(CoreState& st);
  void bind_select_list(CoreState& st);
  void bind_having(CoreState& st);
  void bind_order_by(CoreState& st);
  SortKey bind_order_term(CoreState& st, const ast::OrderingTerm& term);
  void finish_aggregate(CoreState& st);
  void add_having_filter(CoreState& st);
  void add_window(CoreState& st);
  void add_projection(CoreState& st);
  void add_distinct_and_sort(CoreState& st, RelPtr* sorted_root);
  // bind_expr by kind of expression (planner.cc).
  ScalarPtr bind_parameter(const ast::Parameter& p);
  ScalarPtr bind_binary(const ast::BinaryExpr& b, const Scope& scope);
  ScalarPtr bind_case(const ast::CaseExpr& c, const Scope& scope);
  ScalarPtr bind_in(const ast::InExpr& in, const Scope& scope);
  ScalarPtr bind_function(const ast::FunctionCall& call, const Scope& scope);
  ScalarPtr bind_outer_group_key(const ast::Expr& e, const Scope& scope);
  ScalarPtr bind_aggregate(const ast::FunctionCall& call, AggBinding& agg, int level);
  RelPtr sort_output(RelPtr node, const std::vector<std::string>& names,
                     const std::vector<ast::OrderingTerm>& order_by, const Scope* outer);
  // `node` with column i converted to casts[i] (ANY: unchanged); `node` itself when none is.
  RelPtr cast_columns(RelPtr node, const std::vector<qrs_logical_type>& casts);
  ScalarPtr bind_window(const ast::FunctionCall& call, const Scope& scope);
  ScalarPtr bind_subquery(const ast::Select& sel, const Scope& scope, ScalarKind kind,
                          ScalarPtr operand, bool negated);
  const Collation* resolve_collation(std::string_view name) const;
  bool is_aggregate_call(const ast::FunctionCall& f) const;
  bool contains_aggregate(const ast::Expr& e) const;
  void visit_aggregates(const ast::Expr& e, bool into_windows,
                        const std::function<void(const ast::FunctionCall&)>& on) const;

  // Views and CTE bodies are planned afresh at every reference: their nesting is bounded
  // by Limits::max_view_depth and their total per statement by kMaxExpansions, so that
  // stacked or fanning definitions fail with TOOBIG instead of exhausting stack or memory.
  class ExpansionGuard;
  static constexpr int64_t kMaxExpansions = 100'000;
  int64_t expansion_depth_ = 0;
  int64_t expansions_ = 0;

  PlanningContext& db_;
  int next_attr_ = 1;
  std::vector<std::map<std::string, std::shared_ptr<CteBinding>>> cte_stack_;  // WITH clauses in scope
  std::string home_schema_;                       // while a view body is planned: its schema
  std::vector<std::string> statement_path_;       // WITH SCHEMA of the statement being planned
  bool authored_ = false;                         // schema-authored: home_schema_ only
  const ast::WithClause* leading_with_ = nullptr;  // the statement's own WITH clause
  const ParamTypes* param_types_ = nullptr;  // PlanSeed::param_types
  std::vector<std::shared_ptr<DmlRun>> dml_prelude_;
  std::vector<const ViewEntry*> expanding_views_;  // views being expanded (cycle guard)
  std::map<const ast::TableSource*, AuxRouting> aux_routing_;  // FROM references routed
  std::map<const ast::TableSource*, std::set<std::string>> used_columns_;  // lower-case
  std::vector<std::shared_ptr<ast::CommonTableExpr>> bound_rows_;  // names bound by bind_rows
};

// Assigns `name:1`, `name:2`, … to duplicate output names (FORMAT.md §6.3 rule 6).
void dedupe_names(std::vector<std::string>& names);

}  // namespace quereus
