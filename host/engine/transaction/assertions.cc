// CREATE / DROP ASSERTION and their commit-time evaluation (see assertions.h).
#include "transaction/assertions.h"

#include "catalog/ddl_names.h"
#include "catalog/derivation.h"

#include <set>

#include "transaction/transaction_context.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "planner/planner.h"
#include "eval/exec_context.h"
#include "parser/ast_visit.h"

namespace quereus {

namespace {

// Collects the tables and views a query reaches, following view bodies (each resolved
// in its own schema) and honouring CTE names that shadow catalog relations.
class ReferenceWalker {
 public:
  ReferenceWalker(TransactionContext& db, std::vector<AssertionReference>& out) : db_(db), out_(out) {}

  void expression(const ast::Expr& e, const std::string& home) { expr(&e, home); }

  void select(const ast::Select& s, const std::string& home) {
    if (s.dml) return;
    size_t pushed = 0;
    if (s.with) {
      std::set<std::string> names;
      for (const auto& cte : s.with->ctes) names.insert(to_lower(cte.name));
      ctes_.push_back(std::move(names));
      pushed = 1;
      for (const auto& cte : s.with->ctes)
        if (cte.select) select(*cte.select, home);
    }
    core(s.core, home);
    for (const auto& leg : s.compounds) core(leg.core, home);
    for (const auto& o : s.order_by) expr(o.expr.get(), home);
    expr(s.limit.get(), home);
    expr(s.offset.get(), home);
    if (pushed) ctes_.pop_back();
  }

 private:
  void core(const ast::SelectCore& c, const std::string& home) {
    if (c.nested) select(*c.nested, home);
    for (const auto& rc : c.columns) expr(rc.expr.get(), home);
    if (c.from) source(*c.from, home);
    expr(c.where.get(), home);
    for (const auto& g : c.group_by) expr(g.get(), home);
    expr(c.having.get(), home);
    for (const auto& row : c.values)
      for (const auto& v : row) expr(v.get(), home);
  }

  bool shadowed(const std::string& name) const {
    std::string n = to_lower(name);
    for (const auto& scope : ctes_)
      if (scope.count(n)) return true;
    return false;
  }

  void source(const ast::TableSource& src, const std::string& home) {
    using K = ast::TableSource::Kind;
    switch (src.kind) {
      case K::kTable: {
        std::string schema = src.table.schema;
        if (schema.empty() && shadowed(src.table.name)) return;
        if (iequals(schema, "committed") && !db_.catalog().has_schema("committed")) schema.clear();
        // A view body resolves in its own schema first, then along the session path.
        std::vector<std::string> path;
        if (!home.empty()) {
          path.push_back(home);
          for (const std::string& p : db_.schema_path())
            if (p != home) path.push_back(p);
        }
        ResolvedRelation rel = db_.find_relation(schema, src.table.name, home.empty() ? nullptr : &path);
        if (!rel.table && !rel.view) return;  // planning reports a missing relation
        if (rel.table) {
          out_.push_back({false, rel.table->schema.schema_name, rel.table->schema.name, through_, path_});
          // A maintained table reads its body's sources: they are reached through it.
          const auto& d = rel.table->schema.derivation;
          if (!d || !d->body || std::find(tables_.begin(), tables_.end(), rel.table.get()) != tables_.end()) return;
          tables_.push_back(rel.table.get());
          through_.push_back(std::string(d->sugar ? "materialized view '" : "maintained table '") +
                             rel.table->schema.name + "'");
          path_.push_back({true, rel.table->schema.schema_name, rel.table->schema.name});
          auto saved = std::exchange(ctes_, {});
          select(*d->body, rel.table->schema.schema_name);
          ctes_ = std::move(saved);
          path_.pop_back();
          through_.pop_back();
          tables_.pop_back();
          return;
        }
        out_.push_back({true, rel.view->schema_name, rel.view->name, through_, path_});
        if (std::find(expanding_.begin(), expanding_.end(), rel.view.get()) != expanding_.end()) return;
        expanding_.push_back(rel.view.get());
        through_.push_back("view '" + rel.view->name + "'");
        path_.push_back({false, rel.view->schema_name, rel.view->name});
        auto saved = std::exchange(ctes_, {});
        if (rel.view->definition && rel.view->definition->select) select(*rel.view->definition->select, rel.view->schema_name);
        ctes_ = std::move(saved);
        path_.pop_back();
        through_.pop_back();
        expanding_.pop_back();
        return;
      }
      case K::kSubquery:
        if (src.subquery) select(*src.subquery, home);
        return;
      case K::kJoin:
        if (src.left) source(*src.left, home);
        if (src.right) source(*src.right, home);
        expr(src.on.get(), home);
        return;
      case K::kFunction:
        for (const auto& a : src.function_args) expr(a.get(), home);
        return;
    }
  }

  void expr(const ast::Expr* e, const std::string& home) {
    if (!e) return;
    ast::for_each_child(
        *e, [&](const ast::ExprPtr& x) { expr(x.get(), home); },
        [&](const ast::Select& q) { select(q, home); });
  }

  TransactionContext& db_;
  std::vector<AssertionReference>& out_;
  std::vector<std::set<std::string>> ctes_;
  std::vector<std::string> through_;
  std::vector<const ViewEntry*> expanding_;
  std::vector<const TableEntry*> tables_;  // maintained tables being expanded
  std::vector<PathStep> path_;
};

// The violation query, `select 1 where not (<check>)` (a.violation_sql), built on a copy
// of the check. As the parser reads that text, NOT over a plain EXISTS is NOT EXISTS.
std::unique_ptr<ast::Select> violation_select(const AssertionEntry& a) {
  auto sel = std::make_unique<ast::Select>();
  auto one = std::make_unique<ast::Literal>();
  one->literal_kind = ast::LiteralKind::kInteger;
  one->text = "1";
  sel->core.columns.emplace_back();
  sel->core.columns.back().expr = std::move(one);
  ast::ExprPtr check = ast::clone(*a.check);
  if (check->kind == ast::ExprKind::kExists && !static_cast<ast::ExistsExpr&>(*check).negated) {
    static_cast<ast::ExistsExpr&>(*check).negated = true;
    sel->core.where = std::move(check);
  } else {
    auto negation = std::make_unique<ast::UnaryExpr>();
    negation->op = ast::UnaryOp::kNot;
    negation->operand = std::move(check);
    sel->core.where = std::move(negation);
  }
  return sel;
}

// Plans the violation query against the current schema.
RelPtr plan_violation(TransactionContext& db, const AssertionEntry& a) {
  std::unique_ptr<ast::Select> sel = violation_select(a);
  Planner planner(db);
  QueryPlan qp = planner.plan_view_body(*sel, a.schema_name);
  return db.optimize_plan(qp.root);
}

}  // namespace

RelPtr plan_assertion_violation(TransactionContext& db, const AssertionEntry& a) { return plan_violation(db, a); }

void plan_path_bodies(TransactionContext& db, const AssertionReference& r) {
  for (const PathStep& step : r.path) {
    const ast::Select* body = nullptr;
    std::shared_ptr<TableEntry> t;
    if (step.maintained) {
      t = db.catalog().find(step.schema, step.name);
      if (t && t->schema.derivation) body = t->schema.derivation->body.get();
    } else if (auto v = db.catalog().find_view(step.schema, step.name); v && v->definition) {
      body = v->definition->select.get();
    }
    if (!body) continue;
    Planner planner(db);
    QueryPlan qp = planner.plan_view_body(*body, step.schema);
    // A view's explicit column list names the body's columns by position: a body whose
    // arity moved (a star over the narrowed source) breaks the view, every column of it.
    if (!t)
      if (auto v = db.catalog().find_view(step.schema, step.name);
          v && !v->definition->columns.empty() && v->definition->columns.size() != qp.names.size())
        throw Error(StatusCode::kSchema, "view '" + step.name + "' names its " +
                                             std::to_string(v->definition->columns.size()) +
                                             " columns by position over a star, so dropping the column breaks it "
                                             "outright");
    // A maintained table keeps its columns: a body that no longer produces them (a star
    // over a narrowed source) breaks it as surely as one that no longer plans.
    if (t && qp.names.size() != t->schema.columns.size())
      throw Error(StatusCode::kSchema, "the body of '" + step.name + "' no longer produces its " +
                                           std::to_string(t->schema.columns.size()) + " columns");
  }
}

std::string describe_view_chain(const AssertionReference& r) {
  std::string out;
  for (size_t i = 0; i < r.through.size(); ++i) out += (i ? " -> " : " through ") + r.through[i];
  return out;
}

std::vector<AssertionReference> expression_references(TransactionContext& db, const ast::Expr& e,
                                                      const std::string& home) {
  std::vector<AssertionReference> refs;
  ReferenceWalker(db, refs).expression(e, home);
  return refs;
}

const AssertionReference* table_reference(const std::vector<AssertionReference>& refs, const std::string& schema,
                                          const std::string& name) {
  const AssertionReference* hit = nullptr;
  for (const auto& r : refs) {
    if (r.is_view || r.schema != schema || !iequals(r.name, name)) continue;
    if (!hit || r.through.size() < hit->through.size()) hit = &r;
  }
  return hit;
}

std::string plan_failure_when_narrowed(TableEntry& t, const TableSchema& narrowed, const std::function<void()>& plan) {
  TableSchema live = t.schema;
  t.schema = narrowed;
  std::string failure;
  try {
    plan();
  } catch (const Error& e) {
    failure = e.raw_message();
  } catch (...) {
    t.schema = std::move(live);
    throw;
  }
  t.schema = std::move(live);
  return failure;
}

std::shared_ptr<AssertionEntry> Assertions::find(const std::string& schema, const std::string& name) const {
  for (const auto& a : list_)
    if (a->schema_name == schema && iequals(a->name, name)) return a;
  return nullptr;
}

void Assertions::create(TransactionContext& db, const ast::CreateAssertionStmt& s, DdlOrigin origin) {
  std::string schema = ddl_schema(s.name.schema);
  if (!db.catalog().has_schema(schema)) throw Error(StatusCode::kError, "Schema not found: " + schema);
  if (find(schema, s.name.name)) throw Error(StatusCode::kError, "Assertion " + s.name.name + " already exists");
  auto a = std::make_shared<AssertionEntry>();
  a->schema_name = schema;
  a->name = s.name.name;
  a->check = ast::clone(*s.check);
  a->violation_sql = "select 1 where not (" + expr_to_sql(*s.check) + ")";
  // The body is planned now, at a view body's strictness: a missing table, column or
  // function fails the CREATE instead of every later COMMIT.
  try {
    a->plan = plan_violation(db, *a);
  } catch (const Error& e) {
    throw Error(e.code(), "Cannot create assertion '" + a->name + "': " + e.raw_message());
  }
  a->planned_version = db.schema_version();
  ReferenceWalker(db, a->references).select(*violation_select(*a), schema);
  if (origin == DdlOrigin::kStatement) db.persist_assertion(*a);
  if (db.changes().capturing())
    db.changes().record_schema(
        object_event(SchemaChangeKind::kCreate, SchemaObjectKind::kAssertion, schema, a->name, assertion_ddl(*a)));
  list_.push_back(std::move(a));
  db.bump_schema_version();
}

void Assertions::drop(TransactionContext& db, const ast::DropStmt& s) {
  std::shared_ptr<AssertionEntry> a;
  for (const std::string& schema : ddl_lookup_schemas(s.name.schema))
    if ((a = find(schema, s.name.name))) break;
  if (!a) {
    if (s.if_exists) return;
    throw Error(StatusCode::kNotFound, "Assertion " + s.name.name + " not found");
  }
  list_.erase(std::remove(list_.begin(), list_.end(), a), list_.end());
  db.bump_schema_version();
  db.unpersist_assertion(a->schema_name, a->name);
  if (db.changes().capturing())
    db.changes().record_schema(object_event(SchemaChangeKind::kDrop, SchemaObjectKind::kAssertion, a->schema_name,
                                            a->name, "drop assertion " + quote_identifier(a->schema_name) + "." +
                                                         quote_identifier(a->name)));
}

void Assertions::forget(const std::string& schema, const std::string& name) {
  list_.erase(std::remove_if(list_.begin(), list_.end(),
                             [&](const auto& a) { return a->schema_name == schema && iequals(a->name, name); }),
              list_.end());
}

std::string assertion_ddl(const AssertionEntry& a) {
  return "create assertion " + quote_identifier(a.schema_name) + "." + quote_identifier(a.name) + " check (" +
         expr_to_sql(*a.check) + ")";
}

void Assertions::check(TransactionContext& db, const std::vector<TableEntry*>& written,
                       std::vector<AssertionViolation>* collect) {
  if (list_.empty()) return;
  std::set<std::string> changed;
  for (const TableEntry* t : written) changed.insert(to_lower(t->qualified_name()));
  for (const auto& a : list_) {
    bool reads_table = false, relevant = false;
    for (const auto& r : a->references) {
      if (r.is_view) continue;
      reads_table = true;
      if (changed.count(r.schema + "." + to_lower(r.name))) relevant = true;
    }
    if (reads_table && !relevant) continue;
    if (!a->plan || a->planned_version != db.schema_version()) {
      a->plan = plan_violation(db, *a);
      a->planned_version = db.schema_version();
      // Views may have been redefined since: follow what the body reaches now.
      std::vector<AssertionReference> refs;
      ReferenceWalker(db, refs).select(*violation_select(*a), a->schema_name);
      a->references = std::move(refs);
    }
    ExecContext ctx;
    db.open_execution(ctx);
    EvalEnv env{nullptr, nullptr, &ctx};
    auto op = a->plan->instantiate();
    op->open(env);
    Row row;
    // Named as the reference names it: qualified outside main.
    const std::string name = a->schema_name == "main" ? a->name : a->qualified_name();
    if (!op->next(row)) continue;
    if (!collect) throw Error(StatusCode::kConstraint, "Integrity assertion failed: " + name);
    AssertionViolation v{name, {}};
    do v.samples.emplace_back(row.begin(), row.end());
    while (v.samples.size() < 5 && op->next(row));
    collect->push_back(std::move(v));
  }
}

void Assertions::set_check(TransactionContext& db, AssertionEntry& a, std::unique_ptr<ast::Expr> check) {
  std::string text = expr_to_sql(*check);
  a.check = std::shared_ptr<const ast::Expr>(check.release());
  a.violation_sql = "select 1 where not (" + text + ")";
  a.plan.reset();
  a.planned_version = 0;
  std::vector<AssertionReference> refs;
  ReferenceWalker(db, refs).select(*violation_select(a), a.schema_name);
  a.references = std::move(refs);
  db.persist_assertion(a);
}

void Assertions::guard_column_drop(TransactionContext& db, TableEntry& t, const TableSchema& narrowed,
                                   const std::string& column) const {
  const std::string schema = to_lower(t.schema.schema_name);
  for (const auto& a : list_) {
    // The most direct way the assertion reaches the table (a view chain, or none).
    const AssertionReference* hit = table_reference(a->references, schema, t.schema.name);
    if (!hit) continue;
    std::string failure = plan_failure_when_narrowed(t, narrowed, [&] {
      plan_path_bodies(db, *hit);
      plan_violation(db, *a);
    });
    if (failure.empty()) continue;
    // The assertion is qualified when it lives in another schema; through views (whose
    // text the assertion's own body may not show) the chain is named.
    std::string who = a->schema_name == schema ? a->name : a->qualified_name();
    throw Error(StatusCode::kError, "Cannot drop column '" + column + "' from '" + t.schema.name +
                                        "': it is referenced by assertion '" + who + "'" + describe_view_chain(*hit) +
                                        " — drop or redefine the assertion first (" + failure + ")");
  }
}

void Assertions::guard_drop(const std::string& kind, const std::string& schema, const std::string& name) const {
  for (const auto& a : list_) {
    const AssertionReference* hit = nullptr;
    for (const auto& r : a->references) {
      if (r.is_view != (kind == "view") || r.schema != schema || !iequals(r.name, name)) continue;
      if (!hit || (!hit->through.empty() && r.through.size() < hit->through.size())) hit = &r;
    }
    if (!hit) continue;
    std::string who = a->schema_name == schema ? a->name : a->qualified_name();
    std::string msg = "cannot drop " + kind + " '" + schema + "." + name + "': assertion '" + who + "' ";
    if (hit->through.empty()) {
      msg += "still refers to it";
    } else {
      msg += "reaches it through ";
      for (size_t i = 0; i < hit->through.size(); ++i) msg += (i ? " -> " : "") + hit->through[i];
    }
    throw Error(StatusCode::kConstraint, msg + " — drop or redefine the assertion first");
  }
}

}  // namespace quereus
