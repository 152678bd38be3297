// Row-time maintenance of maintained tables (materialized views): the row observer that
// keeps every maintained table equal to its body inside each writing statement
// (docs/design-materialized-views.md).
//
// The observer's index — which maintained tables read which source table, and each one's
// compiled maintenance plan — is derived from the catalog and rebuilt whenever the schema
// version moves, so DDL only has to change the catalog. Per source row change:
//   - an inverse-projection view computes the changed row's old and new images through
//     its projection and filter and applies at most a delete and an upsert at once;
//   - a full-rebuild view is marked dirty, and at the statement's end its body runs once
//     and the result replaces the stored rows by a keyed diff.
// Every change a maintenance write realizes is observed in turn (a view over a view is
// maintained by the same path) and recorded in the change log. The writes go through the
// backing host's apply_maintenance into the table's transaction state, so they commit and
// roll back with the source write.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/derivation.h"
#include "planner/rel_node.h"
#include "transaction/transaction_context.h"
#include "write/dml_writer.h"

namespace quereus {

struct ExecContext;

// A maintained table's compiled maintenance plan.
struct MaintenancePlan {
  std::shared_ptr<TableEntry> view;  // the maintained table
  MaintenanceStrategy strategy = MaintenanceStrategy::kFullRebuild;
  // The view is keyed by a coarsened key (coarsened_key): colliding source rows merge.
  bool coarsened = false;
  RelPtr body;  // the optimized body: the fill and the full rebuild
  std::vector<TableEntry*> sources;
  // Inverse projection: over the source row (level 0 = its columns in table order), the
  // filter (null: every row) and one expression per view column.
  TableEntry* source = nullptr;
  ScalarPtr filter;
  std::vector<ScalarPtr> project;
  // Group residual: the source columns the groups are keyed by; the body filtered to one
  // group (`g_i = ?i`, and `g_i IS ?i` for a key with a NULL); per view primary-key
  // member, the grouping key it holds.
  std::vector<int> group_columns;
  RelPtr residual_eq, residual_is;
  std::vector<int> key_groups;
  // Join residual: `source` is the driving table T and the groups are its primary key;
  // `lookup` is the other table, `lookup_columns` its columns the join equates with T's,
  // and `members` the T keys (in group_columns order) whose T row holds given values
  // there (`select <T pk> from T where t.a_i = ?i`).
  TableEntry* lookup = nullptr;
  std::vector<int> join_driving_columns, lookup_columns;  // equal pairwise
  RelPtr members;
  // Prefix delete: `source` is T and the groups are its primary key, the leading members
  // of the view's; `residual_eq` the body filtered to one T key; `slice` the view rows
  // whose key starts with given values (`select * from view where k_i = ?i`).
  RelPtr slice;
  // Delta path of the group residual (insert-only statements): per view column, what it
  // holds — a grouping key (its index) or an aggregate folded from the inserted rows; the
  // filter under the aggregate (null: none). Empty `delta` when the body is not eligible.
  struct DeltaColumn {
    enum class Kind { kGroup, kCountStar, kCount, kSum, kMin, kMax, kAvg, kAlgebra } kind = Kind::kGroup;
    int group = -1;   // kGroup
    int source = -1;  // the aggregated source column
    // kAlgebra: an aggregate that declares merge and decode (a plugin's, SDK 1.9), over
    // these source columns; `retracts` when a retraction folds too (negate, and an exact
    // decode or NOT NULL arguments), else a group a retraction reaches is recomputed.
    const AggregateFunction* fn = nullptr;
    std::vector<int> args;
    bool retracts = false;
  };
  std::vector<DeltaColumn> delta;
  int count_star_column = -1;  // the view column holding count(*) (the group's size)
  ScalarPtr delta_filter;
};

// What maintenance did to one maintained table since the database opened (telemetry,
// materialized_view_info()): statement rollbacks do not take counts back.
struct MaintenanceCounters {
  uint64_t fills = 0;              // create-fills and reopen refills
  uint64_t rebuilds = 0;           // keyed-diff replacements (full rebuild, refresh, attach)
  uint64_t recomputed_groups = 0;  // group rows recomputed by the residual
  uint64_t folded_rows = 0;        // inserted source rows folded by the delta path
  uint64_t rows_written = 0;       // row changes the backing host realized
  uint64_t collisions = 0;         // coarsened key: a source row's image replaced a sibling's
};

class MaintenanceManager : public RowObserver {
 public:
  explicit MaintenanceManager(TransactionContext& db);
  ~MaintenanceManager() override;

  void on_row(const ObservedChange& change) override;
  void rollback_to(uint64_t seq) override;
  void statement_end() override;

  // Brings the index up to the current schema (after DDL): a view whose body no longer
  // plans is marked stale (TableEntry::stale), one that plans again is not.
  void sync();

  // The compiled plan of maintained table `view` (compiled afresh if the schema moved).
  // Throws what planning its body throws.
  std::shared_ptr<const MaintenancePlan> plan_of(const TableEntry& view);

  // Where the write plan of a maintained table comes from (its CHECKs bound the way a
  // statement writing it binds them, and the foreign-key cascades its deletes can
  // reach): main owns the binder and installs it once. The plan is null when the table
  // has nothing for maintenance writes to enforce (no CHECK, foreign key or index, and
  // no key referencing it).
  using WritePlanBinder =
      std::function<std::shared_ptr<const TableWritePlan>(const std::shared_ptr<TableEntry>&)>;
  void set_write_plan_binder(WritePlanBinder binder) { binder_ = std::move(binder); }
  std::shared_ptr<const TableWritePlan> write_plan(const TableEntry& view);

  // The counters of maintained table `view` (zero when maintenance never touched it).
  MaintenanceCounters counters(const TableEntry& view) const;
  void note_fill(const TableEntry& view) { ++counters_[view.qualified_name()].fills; }

  // Runs `plan`'s body and returns its rows (the view's contents as they should be).
  std::vector<Row> evaluate(const MaintenancePlan& plan);
  // Makes `view`'s stored rows equal `rows` by a keyed diff applied through its backing
  // host into the current transaction; the realized changes are observed and recorded.
  void replace_by_diff(TableEntry& view, std::vector<Row> rows);

 private:
  void refresh_index();
  void maintain_inverse(const MaintenancePlan& plan, const ObservedChange& change);
  // Applies `ops` to `view` through its backing host, then observes and records what
  // they realized.
  void apply(TableEntry& view, std::vector<MaintenanceOp> ops);

  TransactionContext& db_;
  WritePlanBinder binder_;
  std::map<std::string, MaintenanceCounters> counters_;  // by qualified name
  // What apply() needs of a view, looked up once per schema version.
  struct ViewState {
    MaintenanceCounters* counters = nullptr;  // into counters_ (its nodes are stable)
    std::shared_ptr<const TableWritePlan> write_plan;
    bool coarsened = false;
  };
  std::map<const TableEntry*, ViewState> view_state_;
  ViewState& view_state(const TableEntry& view);
  uint64_t indexed_version_ = ~uint64_t{0};
  std::map<const TableEntry*, std::vector<std::shared_ptr<const MaintenancePlan>>> by_source_;
  std::map<const TableEntry*, std::shared_ptr<const MaintenancePlan>> by_view_;
  std::map<const TableEntry*, std::string> broken_;  // views whose body no longer plans: why
  void flush_groups(const MaintenancePlan& plan, std::vector<Row> keys);
  // Prefix delete: replaces each dirty key's slice with what the body gives for it.
  void flush_slices(const MaintenancePlan& plan, std::vector<Row> keys);
  // Runs a keyed plan (a residual, a slice, the join members) with `params` as ?1, ?2, ….
  std::vector<Row> run_keyed(const RelPtr& plan, const Row& params);
  // Join residual: appends the driving keys whose row the lookup row `lookup_row` joins.
  void join_members_of(const MaintenancePlan& plan, const Row& lookup_row, std::vector<Row>& keys);
  // Full-rebuild and group-residual views dirtied by the running statement, brought up
  // to date at its end (the group-residual ones at the groups in dirty_groups_).
  std::set<const MaintenancePlan*> dirty_;
  std::map<const MaintenancePlan*, std::vector<Row>> dirty_groups_;
  // A source row's contribution to a delta-eligible group-residual view: +1 (an insert,
  // an update's new image) or -1 (a delete, an update's old image).
  struct SignedRow {
    Row row;
    int sign;
  };
  std::map<const MaintenancePlan*, std::vector<SignedRow>> inserted_;
  // Group-residual views whose statement's groups must all be recomputed (a non-delta
  // view's changes, or folded contributions a partial rollback could not unwind).
  std::set<const MaintenancePlan*> retracted_;
  // Folds `rows` into the stored group rows by arithmetic (count, integer sum, avg as
  // sum / count; min and max only tighten); a group an aggregate cannot retract from (a
  // min / max group with a retraction) goes to `recompute`. False when nothing could be
  // folded (then the caller recomputes every group).
  bool fold_deltas(const MaintenancePlan& plan, const std::vector<SignedRow>& rows, std::vector<Row>& recompute);
  std::vector<std::shared_ptr<const MaintenancePlan>> dirty_hold_;
  int depth_ = 0;  // cascade depth (a cycle guard)
  // The context the per-row arms evaluate in (their expressions read the row alone and
  // call deterministic functions only): made once.
  ExecContext& row_context();
  std::unique_ptr<ExecContext> row_ctx_;
  // run_keyed's plans run once per dirty key, many times a transaction: each keeps its
  // operator tree and context between runs (operators re-open), dropped with the plans
  // at a schema change. A run that re-enters its own plan builds a fresh tree.
  struct KeyedRun {
    std::unique_ptr<Operator> op;
    std::unique_ptr<ExecContext> ctx;
    bool busy = false;
  };
  std::map<const RelNode*, KeyedRun> keyed_runs_;
};

// The unique keys a body's plan proves (output positions): those the plan carries, those
// its functional dependencies prove, and all columns when its rows are a set.
std::vector<std::vector<int>> body_keys(const RelNode& root);

// The coarsened backing key of a body with no provable key (materialized-views.md,
// "Coarsened backing keys"): when the body is a row-preserving chain (sort, filter, one
// projection) over one table and every source primary-key column reaches an output
// column verbatim (possibly under COLLATE), those outputs (a non-coarsening one preferred
// per key column). `coarsens` says whether some chosen output's collation is coarser than
// the source column's (then colliding source rows last-write-win in the view). Empty when
// the shape does not apply.
std::vector<int> coarsened_key(const RelNode& root, bool* coarsens);

// Sorts `rows` (a body's result for maintained table `view`) by primary key; throws
// CONSTRAINT when two share a key (the body's rows must be a set).
void check_set(const TableSchema& view, std::vector<Row>& rows);

// Compiles the maintenance plan of `view` (a table with a derivation): plans its body as
// the view sees it (home schema first), classifies the strategy and binds the
// inverse-projection expressions. Throws a planning error of the body.
// `check_attributes` false (a refresh or attach about to reshape the table): the column
// count is not checked either; a body whose columns' types, nullability or collations moved
// still compiles (a refresh reshaping the view evaluates it before it sets them).
std::shared_ptr<MaintenancePlan> compile_maintenance(TransactionContext& db, std::shared_ptr<TableEntry> view,
                                                     bool check_attributes = true);

}  // namespace quereus
