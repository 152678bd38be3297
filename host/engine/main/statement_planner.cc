// Statement planning: turns each statement kind into an Executable — queries through
// planner/ and optimizer/, DML onto the single write path (write/dml_writer.h),
// DDL onto the catalog and modules, transaction control onto the coordinator.
#include <algorithm>
#include <set>

#include "common/status.h"

#include "catalog/ddl_names.h"
#include "ddl/alter_table.h"
#include "main/database_impl.h"
#include "ddl/declarative/declared_schema.h"
#include "runtime/executable.h"
#include "ddl/ddl_common.h"
#include "ddl/index_ddl.h"
#include "ddl/table_ddl.h"
#include "ddl/view_ddl.h"
#include "main/copy_statement.h"
#include "main/integrity_check.h"
#include "main/lenses.h"
#include "main/materialized_views.h"
#include "maintained/maintenance.h"
#include "main/pragmas.h"
#include "ddl/tags.h"
#include "types/conversions.h"
#include "types/json_value.h"
#include "optimizer/optimizer.h"
#include "parser/ast_printer.h"
#include "parser/ast_walk.h"
#include "parser/parser.h"
#include "write/dml_relation.h"
#include "planner/planner.h"
#include "ddl/schema_expressions.h"
#include "rewrite/view_writes.h"
#include "write/dml_writer.h"
#include "runtime/table_reads.h"
#include "write/foreign_keys.h"
#include "parser/ast_visit.h"

namespace quereus {

namespace {

// True when `s` writes: a DML statement in a relation position, directly or as a FROM
// source, a compound leg or a nested query of it.
bool query_writes(const ast::Select& s);
bool source_writes(const ast::TableSource* t) {
  if (!t) return false;
  if (t->kind == ast::TableSource::Kind::kSubquery) return t->subquery && query_writes(*t->subquery);
  if (t->kind == ast::TableSource::Kind::kJoin) return source_writes(t->left.get()) || source_writes(t->right.get());
  return false;
}
bool query_writes(const ast::Select& s) {
  if (s.dml) return true;
  if (s.core.nested && query_writes(*s.core.nested)) return true;
  if (source_writes(s.core.from.get())) return true;
  for (const auto& leg : s.compounds)
    if ((leg.core.nested && query_writes(*leg.core.nested)) || source_writes(leg.core.from.get())) return true;
  return false;
}

// An UPDATE / DELETE evaluates SET and WHERE once per target row; a data-modifying
// subquery there would run per row of the outer write, whose ordering the reference
// refuses to guess at (sql-select.md "Query expressions").
void refuse_per_row_dml(const ast::Expr* e, const char* verb) {
  if (!e) return;
  bool writes = ast::any_expr_deep(*e, [](const ast::Expr& x) {
    const ast::Select* sub = nullptr;
    if (x.kind == ast::ExprKind::kSubquery) sub = static_cast<const ast::SubqueryExpr&>(x).subquery.get();
    if (x.kind == ast::ExprKind::kExists) sub = static_cast<const ast::ExistsExpr&>(x).subquery.get();
    if (x.kind == ast::ExprKind::kIn) sub = static_cast<const ast::InExpr&>(x).subquery.get();
    return sub && query_writes(*sub);
  });
  if (writes)
    throw Error(StatusCode::kUnsupported,
                std::string("A data-modifying subquery evaluated per row of an outer ") + verb +
                    " is not supported; run it first in the statement's WITH clause, or as a statement of its own",
                e->site);
}

ConflictAction conflict_of(ast::ConflictClause c, ConflictAction def = ConflictAction::kAbort) {
  switch (c) {
    case ast::ConflictClause::kRollback: return ConflictAction::kRollback;
    case ast::ConflictClause::kAbort: return ConflictAction::kAbort;
    case ast::ConflictClause::kFail: return ConflictAction::kFail;
    case ast::ConflictClause::kIgnore: return ConflictAction::kIgnore;
    case ast::ConflictClause::kReplace: return ConflictAction::kReplace;
    default: return def;
  }
}

[[noreturn]] void not_yet(const std::string& what, const SourceSite& site);

// A statement's own OR action; nullopt when it has none (constraint defaults apply).
std::optional<ConflictAction> statement_action(ast::ConflictClause c) {
  if (c == ast::ConflictClause::kNone) return std::nullopt;
  return conflict_of(c);
}

RelPtr optimize(DatabaseImpl& db, RelPtr root) { return db.optimize_plan(std::move(root)); }

// Plans subqueries' access paths as well: walk the scalar trees of every node.
class QueryExec : public Executable {
 public:
  QueryExec(RelPtr root, std::vector<std::string> names, std::vector<std::shared_ptr<DmlRun>> prelude = {})
      : root_(std::move(root)), prelude_(std::move(prelude)) {
    names_ = std::move(names);
  }
  void start(ExecContext& ctx) override {
    run_dml_prelude(prelude_, ctx);
    env_ = EvalEnv{nullptr, nullptr, &ctx};
    // The operator tree is built once per plan and re-opened per execution (every
    // operator's open() resets its state).
    if (!op_) op_ = root_->instantiate();
    op_->open(env_);
  }
  bool next(Row& out) override { return op_->next(out); }

 private:
  RelPtr root_;
  std::vector<std::shared_ptr<DmlRun>> prelude_;  // the leading WITH clause's DML members
  std::unique_ptr<Operator> op_;
  EvalEnv env_;
};

// Rows produced by a write statement's RETURNING clause, materialized at start.
class BufferedExec : public Executable {
 public:
  bool next(Row& out) override {
    if (i_ >= rows_.size()) return false;
    out = std::move(rows_[i_++]);
    return true;
  }

 protected:
  void reset_rows() { rows_.clear(); i_ = 0; }
  std::vector<Row> rows_;
  size_t i_ = 0;
  std::vector<std::shared_ptr<DmlRun>> prelude_;  // the leading WITH clause's DML members
};

enum class WriteKind { kInsert, kUpdate, kDelete };

using Returning = BoundReturning;

// True when `pred` holds for `e` or a node below it (not looking inside subqueries).
template <typename Pred>
bool any_node(const ast::Expr& e, const Pred& pred) {
  if (pred(e)) return true;
  bool found = false;
  ast::for_each_child_expr(e, [&](const ast::ExprPtr& x) { found = found || any_node(*x, pred); });
  return found;
}

// True when `e` (outside subqueries) names a column qualified by `table`.
bool names_qualifier(const ast::Expr& e, std::string_view table) {
  return any_node(e, [table](const ast::Expr& x) {
    if (x.kind != ast::ExprKind::kColumn) return false;
    auto& c = static_cast<const ast::ColumnRef&>(x);
    return c.schema.empty() && iequals(c.table, table);
  });
}

Returning bind_returning(Planner& planner, const std::vector<ast::ResultColumn>& cols, const Scope& table_scope,
                         std::vector<std::string>& names, WriteKind kind) {
  Returning r;
  Scope images;
  auto add_image = [&](const char* qualifier, int base) {
    for (Scope::Column c : table_scope.columns) {
      c.table = qualifier;
      c.schema.clear();
      c.slot += base;
      images.columns.push_back(c);
    }
  };
  if (kind != WriteKind::kDelete) add_image("new", 0);
  if (kind != WriteKind::kInsert)
    add_image("old", kind == WriteKind::kUpdate ? static_cast<int>(table_scope.columns.size()) : 0);
  Scope scope = table_scope;
  scope.outer = &images;
  for (auto& rc : cols) {
    if (rc.kind == ast::ResultColumn::Kind::kExpr) {
      if (kind == WriteKind::kInsert && names_qualifier(*rc.expr, "old"))
        throw Error(StatusCode::kError, "OLD qualifier cannot be used in INSERT RETURNING clause", rc.expr->site);
      if (kind == WriteKind::kDelete && names_qualifier(*rc.expr, "new"))
        throw Error(StatusCode::kError, "NEW qualifier cannot be used in DELETE RETURNING clause", rc.expr->site);
    }
    if (rc.kind == ast::ResultColumn::Kind::kTableStar &&
        std::none_of(scope.columns.begin(), scope.columns.end(),
                     [&rc](const Scope::Column& c) { return iequals(c.table, rc.table); }))
      throw Error(StatusCode::kError, "Table '" + rc.table + "' not found in RETURNING " + rc.table + ".*", rc.site);
    if (rc.kind != ast::ResultColumn::Kind::kExpr) {
      for (auto& c : scope.columns) {
        if (rc.kind == ast::ResultColumn::Kind::kTableStar && !iequals(c.table, rc.table)) continue;
        auto e = std::make_shared<ColumnScalar>(0, c.slot, c.attr.id);
        e->type = c.attr.type;
        r.exprs.push_back(e);
        names.push_back(c.name);
      }
      continue;
    }
    r.exprs.push_back(planner.bind_expr(*rc.expr, scope));
    // An image reference keeps its qualifier in the name (`old.v`), as in the reference.
    auto* ref = rc.alias.empty() && rc.expr->kind == ast::ExprKind::kColumn
                    ? static_cast<const ast::ColumnRef*>(rc.expr.get()) : nullptr;
    if (ref && ref->schema.empty() && (iequals(ref->table, "old") || iequals(ref->table, "new")))
      names.push_back(ref->table + "." + ref->column);
    else
      names.push_back(Planner::column_name(rc));
  }
  dedupe_names(names);
  return r;
}

// A planner for a table's schema-authored expressions (DEFAULT, CHECK): they resolve
// names in the table's own schema only and never see the writing statement's CTEs or
// search path (schema.md, schema-authored expressions).
Planner schema_authored_planner(DatabaseImpl& db, const TableEntry& table) {
  Planner p(db);
  p.set_schema_authored(table.schema.schema_name);
  return p;
}

// The table a write statement targets. A view target never gets here: plan_write lowers
// it onto its base tables first (rewrite/view_writes.h).
std::shared_ptr<TableEntry> write_target(Planner& planner, const ast::QualifiedName& name, const char* verb) {
  auto rel = planner.resolve_relation(name);
  if (rel.view)
    throw Error(StatusCode::kInternal,
                std::string(verb) + " reached view '" + rel.view->qualified_name() + "' without being lowered",
                name.site);
  // The backstop of the write boundary: a maintained table's rows are derived, and only
  // maintenance writes them (a write naming it is lowered onto its sources first).
  if (rel.table && rel.table->schema.derivation)
    throw Error(StatusCode::kReadOnly,
                std::string(verb) + " would write maintained table '" + rel.table->qualified_name() + "' directly",
                name.site);
  return rel.table;
}

// The bindings of a table the engine writes itself (a foreign-key action's target):
// the table's own schema-authored expressions, like a statement writing it. The
// determinism gate is judged separately, per action (CascadeTarget).
TableWriteBindings bind_table_writes(DatabaseImpl& db, const TableEntry& table) {
  Planner planner = schema_authored_planner(db, table);
  TableWriteBindings out;
  std::set<int> context_read;
  out.checks = bind_checks(db, planner, table, {RowOp::kInsert, RowOp::kUpdate, RowOp::kDelete}, context_read,
                           nullptr, false);
  std::vector<bool> all(table.schema.columns.size(), true);
  for (size_t i = 0; i < table.schema.columns.size(); ++i)
    out.defaults.push_back(bind_default(db, planner, table, static_cast<int>(i), all, false, context_read));
  out.generated = bind_generated(db, planner, table, false);
  return out;
}

// The refusal `judge` throws, kept for the action that evaluates those bodies; null when
// it throws nothing.
template <typename F>
std::exception_ptr refusal_of(F&& judge) {
  try {
    judge();
  } catch (const Error&) {
    return std::current_exception();
  }
  return nullptr;
}

// A foreign-key action's target, bound, with the determinism gate judged per action.
CascadeTarget bind_cascade_target(DatabaseImpl& db, const TableEntry& child) {
  CascadeTarget t;
  try {
    t.bindings = bind_table_writes(db, child);
  } catch (const Error&) {
    t.error = std::current_exception();
    return t;
  }
  if (db.options().nondeterministic_schema) return t;
  t.remove_refusal = refusal_of([&] { judge_write_bodies(db, child, {RowOp::kDelete}, false); });
  t.update_refusal = refusal_of([&] { judge_write_bodies(db, child, {RowOp::kUpdate}, true); });
  const TableSchema& ts = child.schema;
  for (const ForeignKeySchema& fk : ts.foreign_keys) {
    if (fk.on_delete != ReferentialAction::kSetDefault && fk.on_update != ReferentialAction::kSetDefault) continue;
    for (int c : fk.columns) {
      if (c < 0 || c >= static_cast<int>(ts.columns.size()) || !ts.columns[c].default_expr) continue;
      t.default_refusals.resize(ts.columns.size());
      if (t.default_refusals[c]) continue;
      t.default_refusals[c] = refusal_of([&] {
        require_deterministic(db.registry(), *ts.columns[c].default_expr, "DEFAULT",
                              "for column '" + ts.columns[c].name + "'", true, true, BodySite::kStored, &ts, nullptr, &db.catalog());
      });
    }
  }
  return t;
}

// Every table a write to `target` can reach through foreign-key actions that write
// (CASCADE, SET NULL, SET DEFAULT — transitively, a self-reference included), bound
// now so no cascade binds at run time. Keys are followed from their declarations, not
// resolved (a key that cannot be enforced is reported where it is enforced, as
// before), whether or not foreign keys are enforced at the moment (the pragma may change
// before the statement runs); a schema change re-plans the statement. A table whose
// expressions do not bind keeps the error for the action that reaches it. Null when no
// action writes.
std::shared_ptr<const CascadeBindings> bind_cascades(DatabaseImpl& db, const std::shared_ptr<TableEntry>& target) {
  auto out = std::make_shared<CascadeBindings>();
  std::vector<std::shared_ptr<TableEntry>> queue{target};
  std::set<const TableEntry*> seen{target.get()};
  while (!queue.empty()) {
    std::shared_ptr<TableEntry> parent = std::move(queue.back());
    queue.pop_back();
    for (const auto& child : db.catalog().tables())
      for (const ForeignKeySchema& fk : child->schema.foreign_keys) {
        if (fk.referenced_schema != parent->schema.schema_name || !iequals(fk.referenced_table, parent->schema.name))
          continue;
        if (!writes_referencing_rows(fk.on_delete) && !writes_referencing_rows(fk.on_update)) continue;
        if (!out->count(child.get())) out->emplace(child.get(), bind_cascade_target(db, *child));
        if (seen.insert(child.get()).second) queue.push_back(child);
      }
  }
  if (out->empty()) return nullptr;
  return out;
}

bool has_subquery(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kSubquery || e.kind == ScalarKind::kExists || e.kind == ScalarKind::kInSubquery)
    return true;
  for (const ScalarPtr* o : e.operands())
    if (*o && has_subquery(**o)) return true;
  return false;
}

// Whether a plan provably reads no table: a streaming table function (a data file) under
// projections, with no subquery anywhere.
bool reads_no_table(const RelNode& n) {
  if (n.kind == RelKind::kProject) {
    auto& p = static_cast<const ProjectNode&>(n);
    for (const ScalarPtr& e : p.exprs)
      if (has_subquery(*e)) return false;
    return reads_no_table(*p.input);
  }
  if (n.kind != RelKind::kTableFunction) return false;
  auto& f = static_cast<const TableFunctionNode&>(n);
  if (!f.fn->open) return false;
  for (const ScalarPtr& a : f.args)
    if (has_subquery(*a)) return false;
  return true;
}

class InsertExec : public BufferedExec {
 public:
  // `nested`: the search path of the statement this one is a relation of (null: top level).
  // `seed`: the row sets of the view write this statement was lowered from, or the WITH
  // members a nested statement sees.
  InsertExec(DatabaseImpl& db, const ast::InsertStmt& s, const std::vector<std::string>* nested = nullptr,
             const PlanSeed* seed = nullptr)
      : db_(db) {
    Planner planner(db);
    planner.seed(seed);
    // `insert … values (…) with schema x`: the trailing clause parses onto the source
    // query, but names the whole statement's path.
    planner.set_statement_path(!s.schema_path.empty() || !s.source ? s.schema_path : s.source->schema_path);
    if (nested) planner.inherit_statement_path(*nested);
    if (!nested) planner.set_leading_with(s.with.get());
    // The leading WITH is visible to every clause: the source, a VALUES row's subquery,
    // RETURNING, the upsert arms and WITH CONTEXT (sql-select.md 3.7).
    if (s.with) planner.push_with(*s.with, s.source.get());
    plan_.table = write_target(planner, s.table, "INSERT");
    Planner authored = schema_authored_planner(db, *plan_.table);
    const TableSchema& ts = plan_.table->schema;
    plan_.action = s.replace ? std::optional<ConflictAction>(ConflictAction::kReplace) : statement_action(s.or_action);
    if (!s.upserts.empty() && plan_.action)
      throw Error(StatusCode::kError, "Cannot use both 'INSERT OR ...' and 'ON CONFLICT' in the same statement",
                  s.upserts.front().site);
    if (!s.columns.empty()) {
      std::set<int> seen;
      for (auto& c : s.columns) {
        int idx = ts.find_column(c);
        if (idx < 0) throw Error(StatusCode::kError, "Column not found: " + c + " in table " + ts.name);
        if (!seen.insert(idx).second) throw Error(StatusCode::kError, "column " + c + " specified more than once");
        refuse_generated_write(ts, idx, "INSERT into");
        targets_.push_back(idx);
      }
    } else {
      // Without a column list the values fill the written (non-generated) columns.
      for (size_t i = 0; i < ts.columns.size(); ++i)
        if (!ts.columns[i].generated()) targets_.push_back(static_cast<int>(i));
    }
    // Defaults fire for the omitted columns and may read the supplied ones as `new.c`.
    // Schema-authored expressions resolve names in the table's own schema.
    std::vector<bool> supplied(ts.columns.size(), false), all(ts.columns.size(), true);
    for (int t : targets_) supplied[t] = true;
    std::set<int> context_read;
    for (size_t i = 0; i < ts.columns.size(); ++i) {
      bool firing = !supplied[i] && !ts.columns[i].generated();
      plan_.bindings.defaults.push_back(bind_default(db, authored, *plan_.table, static_cast<int>(i), firing ? supplied : all, firing,
                                       context_read));
    }
    plan_.bindings.generated = bind_generated(db, authored, *plan_.table);
    context_ = bind_context_values(planner, ts, s.context);
    if (s.source) {
      QueryPlan qp = planner.plan_select(*s.source, nullptr);
      size_t width = qp.root->columns.size();
      if (width != targets_.size()) {
        if (s.columns.empty())
          throw Error(StatusCode::kError, "table " + ts.name + " has " + std::to_string(targets_.size()) +
                                              " columns but " + std::to_string(width) + " values were supplied");
        throw Error(StatusCode::kError, std::to_string(width) + " values for " + std::to_string(targets_.size()) + " columns");
      }
      source_ = optimize(db, qp.root);
    }
    Scope scope = planner.table_scope(*plan_.table, s.alias);
    plan_.returning = bind_returning(planner, s.returning, scope, names_, WriteKind::kInsert);
    std::vector<RowOp> ops{RowOp::kInsert};
    for (const ast::UpsertClause& u : s.upserts)
      if (!u.do_nothing) ops.push_back(RowOp::kUpdate);
    plan_.bindings.checks = bind_checks(db, authored, *plan_.table, ops, context_read, &s.attached_checks);
    require_context(ts, context_, context_read);
    bind_upserts(planner, s, scope);
    plan_.cascades = bind_cascades(db, plan_.table);
    prelude_ = planner.take_dml_prelude();
  }
  void start(ExecContext& ctx) override {
    reset_rows();
    run_dml_prelude(prelude_, ctx);
    DmlWriter writer(db_, plan_, ctx);
    writer.set_returning_sink(&rows_);
    const TableSchema& ts = plan_.table->schema;
    writer.set_context_row(eval_context(ts, context_, ctx));
    EvalEnv env{nullptr, nullptr, &ctx};
    int64_t ordinal = 0;
    if (given_.empty()) {  // which columns the statement supplies: the same every execution
      given_.assign(ts.columns.size(), false);
      for (int t : targets_) given_[t] = true;
    }
    auto write = [&](Row& src) {
      RowChange change;
      change.new_row.resize(ts.columns.size());
      for (size_t i = 0; i < targets_.size(); ++i) change.new_row[targets_[i]] = std::move(src[i]);
      change.supplied = &given_;
      change.ordinal = ++ordinal;
      writer.apply(std::move(change));
    };
    if (!source_) {
      Row none;
      write(none);
      return;
    }
    // One VALUES row (the prepared `insert … values (?, …)`): evaluated straight into the
    // row buffer, without an operator.
    if (source_->kind == RelKind::kValues) {
      const auto& rows = static_cast<const ValuesNode&>(*source_).rows;
      if (rows.size() == 1) {
        EvalEnv values_env{nullptr, &env, &ctx};
        one_row_.resize(rows[0].size());
        for (size_t c = 0; c < rows[0].size(); ++c) one_row_[c] = rows[0][c]->eval(values_env);
        write(one_row_);
        return;
      }
    }
    // Materialize the source first so a statement never reads its own writes. The
    // operator tree is built once and re-opened by each execution. A source that reads
    // no table (a data file: COPY … FROM) streams, one row in memory at a time.
    if (!source_op_) source_op_ = source_->instantiate();
    source_op_->open(env);
    if (reads_no_table(*source_)) {
      for (Row r; source_op_->next(r);) write(r);
      return;
    }
    std::vector<Row> src_rows;
    ScopedCharge memory(memory_budget(env.ctx));
    Row r;
    while (source_op_->next(r)) {
      memory.add_row(r);
      src_rows.push_back(std::move(r));
    }
    for (auto& row : src_rows) write(row);
  }

 private:
  std::unique_ptr<Operator> source_op_;  // source_, instantiated on first execution
  std::vector<bool> given_;              // per column: supplied by the statement
  Row one_row_;                          // a single VALUES row, evaluated in place
  using Upsert = BoundUpsert;

  void bind_upserts(Planner& planner, const ast::InsertStmt& s, const Scope& scope) {
    const TableSchema& ts = plan_.table->schema;
    Scope proposed;
    for (const char* qualifier : {"excluded", "new"})
      for (Scope::Column c : scope.columns) {
        c.table = qualifier;
        c.schema.clear();
        proposed.columns.push_back(c);
      }
    Scope inner = scope;
    inner.outer = &proposed;
    for (const ast::UpsertClause& u : s.upserts) {
      if (u.target.empty() && u.target_where) not_yet("ON CONFLICT WHERE without a conflict target", u.site);
      Upsert b;
      if (!u.target.empty()) b.target = conflict_target(ts, u);
      b.do_nothing = u.do_nothing;
      std::set<int> seen;
      for (const ast::Assignment& a : u.set) {
        if (a.columns.size() != 1) not_yet("row-value assignments in DO UPDATE", u.site);
        int idx = ts.find_column(a.columns[0]);
        if (idx < 0) throw Error(StatusCode::kError, "Column not found: " + a.columns[0] + " in table " + ts.name, u.site);
        if (!seen.insert(idx).second)
          throw Error(StatusCode::kError, "duplicate assignment to column '" + a.columns[0] + "'", u.site);
        refuse_generated_write(ts, idx, "UPDATE");
        b.set.emplace_back(idx, planner.bind_expr(*a.value, inner));
      }
      if (u.where) b.where = planner.bind_expr(*u.where, inner);
      plan_.upserts.push_back(std::move(b));
    }
  }

  // The constraint an ON CONFLICT target names: the primary key (-1) or the unique index
  // whose columns are exactly the target's (a partial index needs the target's WHERE).
  static int conflict_target(const TableSchema& ts, const ast::UpsertClause& u) {
    std::set<int> named;
    for (const ast::IndexedColumn& ic : u.target) {
      int idx = ts.find_column(ic.name);
      if (idx < 0) throw Error(StatusCode::kError, "Column not found: " + ic.name + " in table " + ts.name, u.site);
      named.insert(idx);
    }
    auto no_match = [&u]() {
      return Error(StatusCode::kError, "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint", u.site);
    };
    if (named.size() != u.target.size()) throw no_match();
    std::set<int> pk;
    for (const KeyColumn& k : ts.primary_key) pk.insert(k.column);
    if (named == pk && !u.target_where) return -1;
    for (size_t i = 0; i < ts.indexes.size(); ++i) {
      const IndexSchema& ix = ts.indexes[i];
      if (!ix.unique || static_cast<bool>(ix.where) != static_cast<bool>(u.target_where)) continue;
      std::set<int> cols;
      for (const IndexColumn& c : ix.columns) cols.insert(c.column);
      if (cols == named) return static_cast<int>(i);
    }
    // Like the reference, a partial target matches a UNIQUE constraint (or the primary
    // key) that involves every listed column.
    auto covers = [&named](const std::set<int>& cols) {
      return std::includes(cols.begin(), cols.end(), named.begin(), named.end());
    };
    for (size_t i = 0; i < ts.indexes.size(); ++i) {
      const IndexSchema& ix = ts.indexes[i];
      if (!ix.unique || ix.where || u.target_where) continue;
      std::set<int> cols;
      for (const IndexColumn& c : ix.columns) cols.insert(c.column);
      if (covers(cols)) return static_cast<int>(i);
    }
    // A table without a declared key is keyed on every column; that key is a fallback.
    if (!u.target_where && covers(pk)) return -1;
    throw no_match();
  }

  DatabaseImpl& db_;
  TableWritePlan plan_;
  std::vector<int> targets_;
  std::vector<ScalarPtr> context_;  // WITH CONTEXT values, per declared variable
  RelPtr source_;
};

// Scan of a table with an optional WHERE, for UPDATE and DELETE.
RelPtr plan_target_scan(Planner& planner, DatabaseImpl& db, const std::shared_ptr<TableEntry>& table,
                        const Scope& scope, const ast::Expr* where) {
  auto scan = std::make_shared<TableScanNode>();
  scan->table = table;
  for (auto& c : scope.columns) scan->columns.push_back(c.attr);
  RelPtr node = scan;
  if (where) {
    auto f = std::make_shared<FilterNode>();
    f->input = node;
    f->predicate = planner.bind_expr(*where, scope);
    f->columns = node->columns;
    node = f;
  }
  return optimize(db, node);
}

std::vector<Row> collect(const RelPtr& plan, ExecContext& ctx) {
  EvalEnv env{nullptr, nullptr, &ctx};
  auto op = plan->instantiate();
  op->open(env);
  std::vector<Row> rows;
  // Counted while the rows are gathered; the caller holds them for as long as it writes.
  ScopedCharge memory(&ctx.memory);
  Row r;
  while (op->next(r)) {
    memory.add_row(r);
    rows.push_back(r);
  }
  return rows;
}

class UpdateExec : public BufferedExec {
 public:
  UpdateExec(DatabaseImpl& db, const ast::UpdateStmt& s, const std::vector<std::string>* nested = nullptr,
             const PlanSeed* seed = nullptr)
      : db_(db) {
    Planner planner(db);
    planner.seed(seed);
    planner.set_statement_path(s.schema_path);
    if (nested) planner.inherit_statement_path(*nested);
    if (!nested) planner.set_leading_with(s.with.get());
    if (s.with) planner.push_with(*s.with);
    plan_.table = write_target(planner, s.table, "UPDATE");
    Planner authored = schema_authored_planner(db, *plan_.table);
    plan_.action = statement_action(s.or_action);
    Scope scope = planner.table_scope(*plan_.table, s.alias);
    std::set<int> seen;
    for (auto& a : s.assignments) {
      if (a.columns.size() != 1) throw Error(StatusCode::kUnsupported, "row-value assignments are not supported yet");
      int idx = plan_.table->schema.find_column(a.columns[0]);
      if (idx < 0) throw Error(StatusCode::kError, "Column not found: " + a.columns[0] + " in table " + plan_.table->schema.name);
      if (!seen.insert(idx).second) throw Error(StatusCode::kError, "duplicate assignment to column '" + a.columns[0] + "'");
      refuse_generated_write(plan_.table->schema, idx, "UPDATE");
      refuse_per_row_dml(a.value.get(), "UPDATE");
      assignments_.emplace_back(idx, planner.bind_expr(*a.value, scope));
    }
    refuse_per_row_dml(s.where.get(), "UPDATE");
    scan_ = plan_target_scan(planner, db, plan_.table, scope, s.where.get());
    plan_.returning = bind_returning(planner, s.returning, scope, names_, WriteKind::kUpdate);
    std::set<int> context_read;
    plan_.bindings.checks = bind_checks(db, authored, *plan_.table, {RowOp::kUpdate}, context_read, &s.attached_checks);
    std::vector<bool> all(plan_.table->schema.columns.size(), true);
    for (size_t i = 0; i < plan_.table->schema.columns.size(); ++i)
      plan_.bindings.defaults.push_back(bind_default(db, authored, *plan_.table, static_cast<int>(i), all, false, context_read));
    plan_.bindings.generated = bind_generated(db, authored, *plan_.table);
    context_ = bind_context_values(planner, plan_.table->schema, s.context);
    require_context(plan_.table->schema, context_, context_read);
    plan_.cascades = bind_cascades(db, plan_.table);
    prelude_ = planner.take_dml_prelude();
  }
  void start(ExecContext& ctx) override {
    reset_rows();
    run_dml_prelude(prelude_, ctx);
    DmlWriter writer(db_, plan_, ctx);
    writer.set_returning_sink(&rows_);
    writer.set_context_row(eval_context(plan_.table->schema, context_, ctx));
    // Halloween protection: find every target row before changing any.
    std::vector<Row> targets = collect(scan_, ctx);
    for (auto& old_row : targets) {
      EvalEnv env{&old_row, nullptr, &ctx};
      RowChange change;
      change.op = RowOp::kUpdate;
      change.old_row = &old_row;
      change.new_row = old_row;
      for (auto& [idx, e] : assignments_) change.new_row[idx] = e->eval(env);
      writer.apply(std::move(change));
    }
  }

 private:
  DatabaseImpl& db_;
  TableWritePlan plan_;  // defaults bound for NOT NULL … REPLACE
  std::vector<std::pair<int, ScalarPtr>> assignments_;
  RelPtr scan_;
  std::vector<ScalarPtr> context_;
};

class DeleteExec : public BufferedExec {
 public:
  DeleteExec(DatabaseImpl& db, const ast::DeleteStmt& s, const std::vector<std::string>* nested = nullptr,
             const PlanSeed* seed = nullptr)
      : db_(db) {
    Planner planner(db);
    planner.seed(seed);
    planner.set_statement_path(s.schema_path);
    if (nested) planner.inherit_statement_path(*nested);
    if (!nested) planner.set_leading_with(s.with.get());
    if (s.with) planner.push_with(*s.with);
    plan_.table = write_target(planner, s.table, "DELETE");
    refuse_per_row_dml(s.where.get(), "DELETE");
    Scope scope = planner.table_scope(*plan_.table, s.alias);
    scan_ = plan_target_scan(planner, db, plan_.table, scope, s.where.get());
    plan_.returning = bind_returning(planner, s.returning, scope, names_, WriteKind::kDelete);
    Planner authored = schema_authored_planner(db, *plan_.table);
    std::set<int> context_read;
    plan_.bindings.checks = bind_checks(db, authored, *plan_.table, {RowOp::kDelete}, context_read, &s.attached_checks);
    context_ = bind_context_values(planner, plan_.table->schema, s.context);
    require_context(plan_.table->schema, context_, context_read);
    plan_.cascades = bind_cascades(db, plan_.table);
    prelude_ = planner.take_dml_prelude();
  }
  void start(ExecContext& ctx) override {
    reset_rows();
    run_dml_prelude(prelude_, ctx);
    DmlWriter writer(db_, plan_, ctx);
    writer.set_returning_sink(&rows_);
    writer.set_context_row(eval_context(plan_.table->schema, context_, ctx));
    std::vector<Row> targets = collect(scan_, ctx);
    for (auto& old_row : targets) {
      RowChange change;
      change.op = RowOp::kDelete;
      change.old_row = &old_row;
      writer.apply(std::move(change));
    }
  }

 private:
  DatabaseImpl& db_;
  TableWritePlan plan_;
  RelPtr scan_;
  std::vector<ScalarPtr> context_;
};

// A write through a view: the base statements it was lowered to (rewrite/view_writes.h), run
// in order after the join capture (if any) is materialized; the rows are those of the
// statement carrying the view's RETURNING, or of the join view's RETURNING query.
std::unique_ptr<Executable> plan_write(DatabaseImpl& db, const ast::Statement& stmt,
                                       const std::vector<std::string>* nested,
                                       const PlanSeed* seed = nullptr, int depth = 0);

class ViewWriteExec : public Executable {
 public:
  ViewWriteExec(DatabaseImpl& db, LoweredWrite lowered, const std::vector<std::string>* nested,
                const PlanSeed* outer, int depth)
      : lowered_(std::move(lowered)) {
    if (outer) seed_ = *outer;
    // Row sets bound before everything (lens parent keys): each sees the earlier ones.
    for (auto& pc : lowered_.pre_captures) {
      auto& sel = *static_cast<const ast::SelectStmt&>(*pc.select).select;
      Planner planner(db);
      planner.seed(&seed_);
      if (nested) planner.inherit_statement_path(*nested);
      planner.set_leading_with(sel.with.get());
      QueryPlan qp = planner.plan_select(sel, nullptr);
      BoundRows rows{pc.name, qp.root->columns, std::make_shared<std::vector<Row>>()};
      for (size_t i = 0; i < rows.columns.size(); ++i) rows.columns[i].name = qp.names[i];
      pre_captured_.push_back({std::make_unique<QueryExec>(optimize(db, qp.root), qp.names, planner.take_dml_prelude()),
                               rows.rows});
      seed_.rows.push_back(std::move(rows));
    }
    if (lowered_.capture) {
      auto& sel = *static_cast<const ast::SelectStmt&>(*lowered_.capture).select;
      Planner planner(db);
      planner.seed(&seed_);
      if (nested) planner.inherit_statement_path(*nested);
      planner.set_leading_with(sel.with.get());
      QueryPlan qp = planner.plan_select(sel, nullptr);
      capture_ = std::make_unique<QueryExec>(optimize(db, qp.root), qp.names, planner.take_dml_prelude());
      BoundRows rows{lowered_.capture_name, qp.root->columns, std::make_shared<std::vector<Row>>()};
      for (size_t i = 0; i < rows.columns.size(); ++i) rows.columns[i].name = qp.names[i];
      for (size_t k = 0; k < lowered_.minted.size(); ++k) {
        const auto& key = lowered_.minted[k];
        const ColumnSchema& col = key.table->schema.columns[key.column];
        Attribute a;
        a.name = "m" + std::to_string(k);
        a.type = col.logical_type;
        rows.columns.push_back(a);
        Planner authored = schema_authored_planner(db, *key.table);
        std::vector<bool> visible(key.table->schema.columns.size(), false);
        for (size_t j = 0; j < key.supplied.size(); ++j) visible[j] = key.supplied[j] >= 0;
        std::set<int> context_read;
        minted_.push_back(bind_default(db, authored, *key.table, key.column, visible, true, context_read));
        minted_width_.push_back(key.table->schema.context.size());
      }
      captured_ = rows.rows;
      seed_.rows.push_back(std::move(rows));
    }
    for (auto& pc : lowered_.pre_checks) {
      auto& sel = *static_cast<const ast::SelectStmt&>(*pc.select).select;
      Planner planner(db);
      planner.seed(&seed_);
      if (nested) planner.inherit_statement_path(*nested);
      QueryPlan qp = planner.plan_select(sel, nullptr);
      pre_checks_.push_back(std::make_unique<QueryExec>(optimize(db, qp.root), qp.names));
    }
    for (auto& s : lowered_.statements) parts_.push_back(plan_write(db, *s, nested, &seed_, depth + 1));
    if (lowered_.returning_query) {
      auto& sel = *static_cast<const ast::SelectStmt&>(*lowered_.returning_query).select;
      Planner planner(db);
      planner.seed(&seed_);
      if (nested) planner.inherit_statement_path(*nested);
      QueryPlan qp = planner.plan_select(sel, nullptr);
      returning_ = std::make_unique<QueryExec>(optimize(db, qp.root), qp.names);
      names_ = qp.names;
    } else if (lowered_.returning_from >= 0) {
      names_ = parts_[lowered_.returning_from]->names();
    }
  }
  void start(ExecContext& ctx) override {
    rows_.clear();
    i_ = 0;
    for (auto& [exec, into] : pre_captured_) {
      into->clear();
      exec->start(ctx);
      Row r;
      while (exec->next(r)) into->push_back(std::move(r));
    }
    if (capture_) {
      captured_->clear();
      capture_->start(ctx);
      Row r;
      std::vector<Row> rows;
      while (capture_->next(r)) rows.push_back(std::move(r));
      // The shared keys are minted for every row before any base write, so a default
      // reading the anchor table sees the pre-statement state.
      for (size_t i = 0; i < rows.size(); ++i) {
        MutationOrdinalScope produced(ctx, static_cast<int64_t>(i) + 1);
        Row& row = rows[i];
        for (size_t k = 0; k < minted_.size(); ++k) {
          const auto& key = lowered_.minted[k];
          Row image(key.table->schema.columns.size());
          for (size_t j = 0; j < key.supplied.size(); ++j)
            if (key.supplied[j] >= 0) image[j] = row[key.supplied[j]];
          Row context(minted_width_[k]);
          EvalEnv images{&image, nullptr, &ctx};
          EvalEnv env{&context, &images, &ctx};
          row.push_back(minted_[k] ? minted_[k]->eval(env) : Value());
        }
      }
      *captured_ = std::move(rows);
    }
    for (size_t c = 0; c < pre_checks_.size(); ++c) {
      pre_checks_[c]->start(ctx);
      Row r;
      if (pre_checks_[c]->next(r)) throw Error(StatusCode::kConstraint, lowered_.pre_checks[c].message);
    }
    if (returning_ && lowered_.returning_before) drain(*returning_, ctx);
    for (size_t p = 0; p < parts_.size(); ++p) {
      parts_[p]->start(ctx);
      Row r;
      while (parts_[p]->next(r))
        if (static_cast<int>(p) == lowered_.returning_from) rows_.push_back(std::move(r));
    }
    if (returning_ && !lowered_.returning_before) drain(*returning_, ctx);
  }
  bool next(Row& out) override {
    if (i_ >= rows_.size()) return false;
    out = std::move(rows_[i_++]);
    return true;
  }

 private:
  void drain(Executable& e, ExecContext& ctx) {
    e.start(ctx);
    Row r;
    while (e.next(r)) rows_.push_back(std::move(r));
  }

  LoweredWrite lowered_;  // owns the syntax the parts were planned from
  PlanSeed seed_;
  std::unique_ptr<Executable> capture_;
  std::vector<std::unique_ptr<Executable>> pre_checks_;
  std::vector<std::pair<std::unique_ptr<Executable>, std::shared_ptr<std::vector<Row>>>> pre_captured_;
  std::shared_ptr<std::vector<Row>> captured_;
  std::vector<ScalarPtr> minted_;
  std::vector<size_t> minted_width_;
  std::vector<std::unique_ptr<Executable>> parts_;
  std::unique_ptr<Executable> returning_;
  std::vector<Row> rows_;
  size_t i_ = 0;
};

// An INSERT / UPDATE / DELETE: onto its table, or lowered through its view.
std::unique_ptr<Executable> plan_write(DatabaseImpl& db, const ast::Statement& stmt,
                                       const std::vector<std::string>* nested,
                                       const PlanSeed* seed, int depth) {
  LoweredWrite lowered = lower_view_write(db, stmt, nested);
  if (!lowered.statements.empty()) {
    if (depth > 64) throw Error(StatusCode::kError, "view write nests too deeply", stmt.site);
    try {
      return std::make_unique<ViewWriteExec>(db, std::move(lowered), nested, seed, depth);
    } catch (const Error& e) {
      // A position inside the lowered statements' text means nothing to the user: point
      // at the statement that wrote through the view.
      throw Error(e.code(), e.raw_message(), stmt.site);
    }
  }
  switch (stmt.kind) {
    case ast::StmtKind::kInsert:
      return std::make_unique<InsertExec>(db, static_cast<const ast::InsertStmt&>(stmt), nested, seed);
    case ast::StmtKind::kUpdate:
      return std::make_unique<UpdateExec>(db, static_cast<const ast::UpdateStmt&>(stmt), nested, seed);
    default: return std::make_unique<DeleteExec>(db, static_cast<const ast::DeleteStmt&>(stmt), nested, seed);
  }
}

// An Executable that runs a function at start and yields no rows.
class ActionExec : public Executable {
 public:
  ActionExec(std::function<void(ExecContext&)> fn, bool txn_control) : fn_(std::move(fn)), txn_control_(txn_control) {}
  bool controls_transaction() const override { return txn_control_; }
  void start(ExecContext& ctx) override { fn_(ctx); }
  bool next(Row&) override { return false; }

 private:
  std::function<void(ExecContext&)> fn_;
  bool txn_control_;
};

// A DDL statement: its effects run inside the database's schema-change scope, so on a
// module with one (the store) they become durable together or not at all.
std::unique_ptr<Executable> ddl_exec(DatabaseImpl& db, std::function<void(ExecContext&)> fn) {
  return std::make_unique<ActionExec>(
      [&db, fn = std::move(fn)](ExecContext& ctx) {
        db.run_schema_change([&] { fn(ctx); });
        // Materialized views whose bodies the change broke (or mended) are marked now,
        // so the next read of one reports it.
        db.maintenance().sync();
      },
      false);
}

// pragma integrity_check: one row per problem found, or one row 'ok' (as SQLite).
class IntegrityCheckExec : public Executable {
 public:
  explicit IntegrityCheckExec(DatabaseImpl& db) : db_(db) { names_ = {"integrity_check"}; }
  void start(ExecContext&) override {
    problems_ = check_integrity(db_);
    if (problems_.empty()) problems_.push_back("ok");
    next_ = 0;
  }
  bool next(Row& out) override {
    if (next_ >= problems_.size()) return false;
    out.clear();
    out.push_back(Value::Text(problems_[next_++]));
    return true;
  }

 private:
  DatabaseImpl& db_;
  std::vector<std::string> problems_;
  size_t next_ = 0;
};

class PragmaExec : public Executable {
 public:
  PragmaExec(DatabaseImpl& db, const ast::PragmaStmt& s) : db_(db), name_(to_lower(s.name.name)) {
    if (s.value) {
      // A signed number (`pragma x = -1`) is a literal too, as in SQLite.
      const ast::Expr* v = s.value.get();
      bool negative = false;
      if (v->kind == ast::ExprKind::kUnary) {
        auto& u = static_cast<const ast::UnaryExpr&>(*v);
        bool numeric = u.operand && u.operand->kind == ast::ExprKind::kLiteral &&
                       (static_cast<const ast::Literal&>(*u.operand).literal_kind == ast::LiteralKind::kInteger ||
                        static_cast<const ast::Literal&>(*u.operand).literal_kind == ast::LiteralKind::kReal);
        if (numeric && (u.op == ast::UnaryOp::kNegate || u.op == ast::UnaryOp::kPlus)) {
          negative = u.op == ast::UnaryOp::kNegate;
          v = u.operand.get();
        }
      }
      if (v->kind == ast::ExprKind::kLiteral) {
        auto& l = static_cast<const ast::Literal&>(*v);
        const std::string text = negative ? "-" + l.text : l.text;
        value_ = l.literal_kind == ast::LiteralKind::kInteger ? parse_number(text, false)
               : l.literal_kind == ast::LiteralKind::kReal ? parse_number(text, false)
               : l.literal_kind == ast::LiteralKind::kTrue ? Value::Boolean(true)
               : l.literal_kind == ast::LiteralKind::kFalse ? Value::Boolean(false)
               : Value::Text(l.text);
      } else if (s.value->kind == ast::ExprKind::kColumn) {
        value_ = Value::Text(static_cast<const ast::ColumnRef&>(*s.value).column);
      } else {
        throw Error(StatusCode::kError, "PRAGMA value must be a literal");
      }
      has_value_ = true;
    } else {
      names_ = {"name", "value"};  // a read is one (name, value) row, as in the reference
    }
  }
  void start(ExecContext&) override {
    done_ = false;
    if (has_value_) {
      Status st = db_.set_option(name_, value_);
      if (!st.ok()) throw Error(st.code(), st.raw_message());
      done_ = true;
    }
  }
  bool next(Row& out) override {
    if (done_) return false;
    done_ = true;
    out.clear();
    out.push_back(Value::Text(name_));
    out.push_back(read_pragma(db_, name_));
    return true;
  }

 private:
  DatabaseImpl& db_;
  std::string name_;
  Value value_;
  bool has_value_ = false;
  bool done_ = true;
};

// ---------------------------------------------------------------- DDL

// ANALYZE [schema.]table | ANALYZE schema.* | ANALYZE: counts each table's rows through
// its module and records them in the catalog, one (table, rows) result row per table.
class AnalyzeExec : public BufferedExec {
 public:
  AnalyzeExec(DatabaseImpl& db, const ast::AnalyzeStmt& s) : db_(db) {
    names_ = {"table", "rows"};
    if (!s.table.empty()) {
      // `committed.t` names t's last committed state: the same stored rows, resolved
      // through the search path like a plain reference.
      std::string schema = s.schema;
      if (iequals(schema, "committed") && !db.catalog().has_schema("committed")) schema.clear();
      auto rel = db.resolve_relation(schema, s.table);
      if (rel.view)
        throw Error(StatusCode::kError, "Cannot ANALYZE view '" + rel.view->qualified_name() +
                                            "': a view has no stored rows to collect statistics from.");
      targets_.push_back(rel.table);
      return;
    }
    std::string schema = ddl_schema(s.schema);  // bare ANALYZE: the current schema only
    if (!db.catalog().has_schema(schema)) throw Error(StatusCode::kError, "Schema not found: " + s.schema);
    for (auto& t : db.catalog().tables())
      if (t->schema.schema_name == schema) targets_.push_back(t);
  }
  void start(ExecContext&) override {
    reset_rows();
    for (auto& t : targets_) {
      int64_t n = count_rows(*t);
      t->row_count = n;
      rows_.push_back({Value::Text(t->schema.name), Value::Integer(n)});
    }
    // Plans made before now could not see the counts.
    if (!targets_.empty()) db_.bump_schema_version();
  }

 private:
  DatabaseImpl& db_;
  std::vector<std::shared_ptr<TableEntry>> targets_;
};

[[noreturn]] void not_yet(const std::string& what, const SourceSite& site) {
  throw Error(StatusCode::kUnsupported, what + " is not supported yet", site);
}

// Clauses the parser accepts (the whole dialect parses) but the engine does not execute
// yet are refused here, so nothing is silently ignored.
void refuse_unimplemented_clauses(const ast::Statement& stmt) {
  auto target = [](const ast::QualifiedName& t) {
    if (iequals(t.schema, "committed")) {
      throw Error(StatusCode::kError, "Cannot modify committed-state table 'committed." + t.name + "'", t.site);
    }
  };
  // Statement tags are informational; only the reserved namespace is checked.
  auto dml = [](const ast::DmlClauses& d, const SourceSite&) { validate_reserved_tags(d.tags, TagSite::kDmlStatement); };
  using K = ast::StmtKind;
  switch (stmt.kind) {
    case K::kInsert: {
      auto& s = static_cast<const ast::InsertStmt&>(stmt);
      target(s.table);
      dml(s, s.site);
      break;
    }
    case K::kUpdate:
      target(static_cast<const ast::UpdateStmt&>(stmt).table);
      dml(static_cast<const ast::UpdateStmt&>(stmt), stmt.site);
      break;
    case K::kDelete:
      target(static_cast<const ast::DeleteStmt&>(stmt).table);
      dml(static_cast<const ast::DeleteStmt&>(stmt), stmt.site);
      break;
    case K::kCreateTable: {
      auto& s = static_cast<const ast::CreateTableStmt&>(stmt);
      validate_create_table_tags(s);
      break;
    }
    default:
      break;
  }
}

const char* statement_name(ast::StmtKind kind) {
  using K = ast::StmtKind;
  switch (kind) {
    case K::kCreateIndex: return "CREATE INDEX";
    case K::kCreateView: return "CREATE VIEW";
    case K::kCreateMaterializedView: return "CREATE MATERIALIZED VIEW";
    case K::kCreateAssertion: return "CREATE ASSERTION";
    case K::kDrop: return "DROP";
    case K::kAlterTable: return "ALTER TABLE";
    case K::kAlterTags: return "ALTER … TAGS";
    case K::kRefreshMaterializedView: return "REFRESH MATERIALIZED VIEW";
    case K::kAnalyze: return "ANALYZE";
    case K::kDeclareSchema: return "DECLARE SCHEMA";
    case K::kDeclareLens: return "DECLARE LENS";
    case K::kSeed: return "SEED outside a schema declaration";
    case K::kApplySchema: return "APPLY SCHEMA";
    case K::kDiffSchema: return "DIFF SCHEMA";
    case K::kExplainSchema: return "EXPLAIN SCHEMA";
    default: return "This statement";
  }
}

}  // namespace

std::shared_ptr<const TableWritePlan> bind_maintained_writes(DatabaseImpl& db, const std::shared_ptr<TableEntry>& view) {
  const TableSchema& ts = view->schema;
  bool referenced = false;
  for (const auto& t : db.catalog().tables())
    for (const ForeignKeySchema& fk : t->schema.foreign_keys)
      referenced |= fk.referenced_schema == ts.schema_name && iequals(fk.referenced_table, ts.name);
  if (!referenced && ts.checks.empty() && ts.foreign_keys.empty() && ts.indexes.empty()) return nullptr;
  return bind_table_write_plan(db, view);
}

std::shared_ptr<const TableWritePlan> bind_table_write_plan(DatabaseImpl& db, const std::shared_ptr<TableEntry>& table) {
  auto plan = std::make_shared<TableWritePlan>();
  plan->table = table;
  plan->action = ConflictAction::kAbort;
  plan->bindings = bind_table_writes(db, *table);
  plan->cascades = bind_cascades(db, table);
  return plan;
}

// Stored bodies of statements not executed yet (materialized view, maintained table,
// assertion) are planned before the refusal so a data-modifying WITH member in them gets
// its own diagnostic; any other planning failure is left to the refusal.
void reject_dml_in_unsupported_bodies(DatabaseImpl& db, const ast::Statement& stmt) {
  using K = ast::StmtKind;
  const ast::Select* body = nullptr;
  const ast::Expr* check = nullptr;
  if (stmt.kind == K::kCreateMaterializedView) body = static_cast<const ast::CreateMaterializedViewStmt&>(stmt).select.get();
  if (stmt.kind == K::kCreateTable) body = static_cast<const ast::CreateTableStmt&>(stmt).maintained.get();
  if (stmt.kind == K::kCreateAssertion) check = static_cast<const ast::CreateAssertionStmt&>(stmt).check.get();
  if (!body && !check) return;
  try {
    Planner planner(db);
    if (body) planner.plan_view_body(*body, "main");
    if (check) planner.bind_expr(*check, Scope{});
  } catch (const MisplacedDmlError&) {
    throw;
  } catch (const Error&) {
    // any other planning failure is left to the refusal
  }
}

std::unique_ptr<Executable> plan_statement(DatabaseImpl& db, const ast::Statement& stmt,
                                           const ParamTypes* param_types) {
  using K = ast::StmtKind;
  reject_dml_in_unsupported_bodies(db, stmt);
  refuse_unimplemented_clauses(stmt);
  PlanSeed typed;
  typed.param_types = param_types;
  switch (stmt.kind) {
    case K::kSelect: {
      Planner planner(db);
      planner.seed(&typed);
      const ast::Select& sel = *static_cast<const ast::SelectStmt&>(stmt).select;
      planner.set_leading_with(sel.with.get());
      QueryPlan qp = planner.plan_select(sel, nullptr);
      return std::make_unique<QueryExec>(db.optimize_query(qp.root), qp.names, planner.take_dml_prelude());
    }
    case K::kInsert:
    case K::kUpdate:
    case K::kDelete: return plan_write(db, stmt, nullptr, &typed);
    case K::kCreateTable: {
      auto& s = static_cast<const ast::CreateTableStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) {
        db.check_ddl_allowed("CREATE TABLE");
        if (s.maintained) create_maintained_table(db, s, ctx); else create_table(db, s, ctx);
      });
    }
    case K::kCreateMaterializedView: {
      auto& s = static_cast<const ast::CreateMaterializedViewStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) {
        db.check_ddl_allowed("CREATE MATERIALIZED VIEW");
        validate_reserved_tags(s.tags, TagSite::kViewDdl);
        create_materialized_view(db, s, ctx);
      });
    }
    case K::kRefreshMaterializedView: {
      auto& s = static_cast<const ast::RefreshMaterializedViewStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) {
        db.check_ddl_allowed("REFRESH MATERIALIZED VIEW");
        refresh_materialized_view(db, s, ctx);
      });
    }
    case K::kDrop: {
      auto& s = static_cast<const ast::DropStmt&>(stmt);
      if (s.object == ast::ObjectKind::kView)
        return ddl_exec(db, [&db, &s](ExecContext&) { drop_view(db, s); });
      if (s.object == ast::ObjectKind::kAssertion)
        return ddl_exec(db, [&db, &s](ExecContext&) { db.assertions().drop(db, s); });
      if (s.object == ast::ObjectKind::kIndex)
        return ddl_exec(db, [&db, &s](ExecContext&) { drop_index(db, s); });
      if (s.object == ast::ObjectKind::kMaterializedView)
        return ddl_exec(db, [&db, &s](ExecContext&) { drop_materialized_view(db, s); });
      if (s.object != ast::ObjectKind::kTable) break;
      return ddl_exec(db, [&db, &s](ExecContext&) {
        db.check_ddl_allowed("DROP TABLE");
        drop_table(db, s);
      });
    }
    case K::kCreateIndex: {
      auto& s = static_cast<const ast::CreateIndexStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) {
        db.check_ddl_allowed("CREATE INDEX");
        validate_reserved_tags(s.tags, TagSite::kPhysicalIndex);
        create_index(db, s, tag_set(s.tags), ctx);
      });
    }
    case K::kCreateView: {
      auto& s = static_cast<const ast::CreateViewStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) { create_view(db, s, ctx); });
    }
    case K::kAlterTable: {
      auto& s = static_cast<const ast::AlterTableStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext& ctx) {
        // The tag verbs are catalog-only (no module call), like CREATE VIEW.
        if (s.action != ast::AlterTableStmt::Action::kTags) db.check_ddl_allowed("ALTER TABLE");
        using A = ast::AlterTableStmt::Action;
        if (s.action == A::kSetMaintained || s.action == A::kDropMaintained) {
          if (s.action == A::kSetMaintained) set_maintained(db, s, ctx); else drop_maintained(db, s);
          return;
        }
        alter_table(db, s, ctx);
      });
    }
    case K::kAlterTags: {
      auto& s = static_cast<const ast::AlterTagsStmt&>(stmt);
      return ddl_exec(db, [&db, &s](ExecContext&) { alter_object_tags(db, s); });
    }
    case K::kCreateAssertion: {
      auto& s = static_cast<const ast::CreateAssertionStmt&>(stmt);
      // An assertion is a constraint: a non-deterministic function or a data-changing
      // statement in its body is refused (determinism.md "Strict-mode behaviour": rejected
      // in constraints, DML "inside a CHECK / DEFAULT / assertion expression") before the
      // body would run at every COMMIT; the option lifts the gate.
      if (!db.options().nondeterministic_schema)
        require_deterministic(db.registry(), *s.check, "CHECK", "of assertion '" + s.name.name + "'", true, true,
                              BodySite::kHere, nullptr,
                              "an assertion reads no WITH CONTEXT variable: compare against a value stored in a table, "
                              "or pragma nondeterministic_schema = true", &db.catalog());
      return ddl_exec(db, [&db, &s](ExecContext&) { db.assertions().create(db, s); });
    }
    case K::kAnalyze: return std::make_unique<AnalyzeExec>(db, static_cast<const ast::AnalyzeStmt&>(stmt));
    case K::kCopy: return plan_copy(db, static_cast<const ast::CopyStmt&>(stmt), &typed);
    case K::kBegin: return std::make_unique<ActionExec>([&db](ExecContext&) { db.transaction().begin_explicit(); }, true);
    case K::kCommit: return std::make_unique<ActionExec>([&db](ExecContext&) { db.transaction().commit_explicit(); }, true);
    case K::kRollback: {
      std::string sp = static_cast<const ast::RollbackStmt&>(stmt).savepoint;
      return std::make_unique<ActionExec>([&db, sp](ExecContext&) {
        if (sp.empty()) db.transaction().rollback_explicit(); else db.transaction().rollback_to(sp);
      }, true);
    }
    case K::kSavepoint: {
      std::string name = static_cast<const ast::SavepointStmt&>(stmt).name;
      return std::make_unique<ActionExec>([&db, name](ExecContext&) { db.transaction().savepoint(name); }, true);
    }
    case K::kRelease: {
      std::string name = static_cast<const ast::ReleaseStmt&>(stmt).name;
      return std::make_unique<ActionExec>([&db, name](ExecContext&) { db.transaction().release(name); }, true);
    }
    case K::kPragma: {
      auto& p = static_cast<const ast::PragmaStmt&>(stmt);
      if (!p.value && (iequals(p.name.name, "integrity_check") || iequals(p.name.name, "quick_check")))
        return std::make_unique<IntegrityCheckExec>(db);
      return std::make_unique<PragmaExec>(db, p);
    }
    case K::kDeclareSchema: return plan_declare_schema(db, static_cast<const ast::DeclareSchemaStmt&>(stmt));
    case K::kApplySchema: {
      auto& a = static_cast<const ast::ApplySchemaStmt&>(stmt);
      auto it = db.declared_schemas().declared.find(to_lower(a.name));
      if (it != db.declared_schemas().declared.end() && it->second->logical) {
        std::string name = a.name;
        return std::make_unique<ActionExec>(
            [&db, name](ExecContext&) {
              db.run_schema_change([&] { apply_logical_schema(db, name); });
              db.maintenance().sync();
              notify_lens_deployment(db, name);
            },
            false);
      }
      return plan_apply_schema(db, a);
    }
    case K::kDeclareLens: {
      auto& l = static_cast<const ast::DeclareLensStmt&>(stmt);
      return ddl_exec(db, [&db, &l](ExecContext&) { declare_lens(db, l); });
    }
    case K::kDiffSchema: return plan_diff_schema(db, static_cast<const ast::DiffSchemaStmt&>(stmt));
    case K::kExplainSchema: return plan_explain_schema(db, static_cast<const ast::ExplainSchemaStmt&>(stmt));
    default: break;
  }
  if (stmt.kind == K::kDrop) {
    static const char* const kDrops[] = {"DROP TABLE", "DROP INDEX", "DROP VIEW", "DROP MATERIALIZED VIEW",
                                         "DROP ASSERTION"};
    not_yet(kDrops[static_cast<int>(static_cast<const ast::DropStmt&>(stmt).object)], stmt.site);
  }
  not_yet(statement_name(stmt.kind), stmt.site);
}

std::unique_ptr<Executable> plan_nested_dml(DatabaseImpl& db, const ast::Statement& stmt,
                                            const std::vector<std::string>& path, const PlanSeed* seed) {
  using K = ast::StmtKind;
  refuse_unimplemented_clauses(stmt);
  switch (stmt.kind) {
    case K::kInsert:
    case K::kUpdate:
    case K::kDelete: return plan_write(db, stmt, &path, seed);
    default: throw Error(StatusCode::kInternal, "not a data-modifying statement", stmt.site);
  }
}


}  // namespace quereus
