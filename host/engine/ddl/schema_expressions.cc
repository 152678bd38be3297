// Schema expressions (see schema_expressions.h): DEFAULT / GENERATED ALWAYS AS / CHECK
// validation at CREATE TABLE and their binding for the DML write path.
#include "ddl/schema_expressions.h"

#include <algorithm>

#include "common/status.h"
#include "catalog/registry.h"
#include "ddl/ddl_context.h"
#include "types/logical_type.h"
#include "parser/ast_printer.h"
#include "parser/ast_visit.h"

namespace quereus {

namespace {

// Visits expressions, FROM sources and nested DML statements of an AST subtree.
struct AstWalker {
  ExprFn on_expr;
  std::function<void(const ast::TableSource&)> on_source;  // optional
  std::function<void(const ast::Statement&)> on_dml;       // optional
  std::function<void(const ast::CommonTableExpr&)> on_cte;  // optional, before its uses

  void expr(const ast::Expr* e, bool opaque) {
    if (!e) return;
    on_expr(*e, opaque);
    ast::for_each_child(
        *e, [&](const ast::ExprPtr& x) { expr(x.get(), opaque); },
        [&](const ast::Select& q) { select(q, opaque); });
  }

  void select(const ast::Select& s, bool opaque) {
    if (s.dml) {
      if (on_dml) on_dml(*s.dml);
      return;  // a nested DML statement is opaque to the walk
    }
    if (s.with)
      for (auto& cte : s.with->ctes) {
        if (on_cte) on_cte(cte);
        select(*cte.select, true);
      }
    core(s.core, opaque);
    for (auto& leg : s.compounds) core(leg.core, opaque);
    for (auto& o : s.order_by) expr(o.expr.get(), opaque);
    expr(s.limit.get(), opaque);
    expr(s.offset.get(), opaque);
    // WITH DEFAULTS / WITH INVERSE are view write-through metadata: never evaluated here.
  }

  void core(const ast::SelectCore& c, bool opaque) {
    if (c.nested) {
      select(*c.nested, opaque);
      return;
    }
    for (auto& rc : c.columns) expr(rc.expr.get(), opaque);
    if (c.from) source(*c.from, opaque);
    expr(c.where.get(), opaque);
    for (auto& g : c.group_by) expr(g.get(), opaque);
    expr(c.having.get(), opaque);
    for (auto& row : c.values)
      for (auto& v : row) expr(v.get(), opaque);
  }

  void source(const ast::TableSource& src, bool opaque) {
    if (on_source) on_source(src);
    switch (src.kind) {
      case ast::TableSource::Kind::kSubquery: select(*src.subquery, true); break;
      case ast::TableSource::Kind::kFunction:
        for (auto& a : src.function_args) expr(a.get(), opaque);
        break;
      case ast::TableSource::Kind::kJoin:
        source(*src.left, opaque);
        source(*src.right, opaque);
        expr(src.on.get(), opaque);
        break;
      default: break;
    }
  }
};

// A definition read back from a stored catalog was judged when it was declared (perhaps
// with nondeterministic_schema on): reading it back judges nothing, writes judge it again.
bool nondeterministic_allowed(DdlContext& db) { return db.options().nondeterministic_schema || db.reading_stored(); }

// The context variables as a scope level: `name` and `context.name`.
Scope context_scope(const TableSchema& ts) {
  Scope s;
  for (size_t i = 0; i < ts.context.size(); ++i) {
    Scope::Column c;
    c.table = "context";
    c.name = ts.context[i].name;
    c.slot = static_cast<int>(i);
    c.attr.name = c.name;
    c.attr.type = ts.context[i].logical_type;
    c.attr.nullable = !ts.context[i].not_null;
    s.columns.push_back(c);
  }
  return s;
}

// `base`'s columns re-qualified as `qualifier.c` (slots shifted by `offset`); with
// `visible`, only the columns it marks.
void add_images(Scope& out, const Scope& base, const char* qualifier, int offset,
                const std::vector<bool>* visible = nullptr) {
  for (Scope::Column c : base.columns) {
    if (visible && !(*visible)[c.slot]) continue;
    c.table = qualifier;
    c.schema.clear();
    c.slot += offset;
    out.columns.push_back(c);
  }
}

bool has_node(const ast::Expr& e, const std::function<bool(const ast::Expr&)>& pred) {
  bool found = false;
  walk_expr(e, [&](const ast::Expr& x, bool) { found = found || pred(x); });
  return found;
}

bool has_parameter(const ast::Expr& e) {
  return has_node(e, [](const ast::Expr& x) { return x.kind == ast::ExprKind::kParameter; });
}

// A DEFAULT that is a constant the declaration itself fixes: no names, parameters or
// subqueries, and deterministic.
bool foldable_default(const Registry& registry, const ast::Expr& e) {
  bool ok = !has_node(e, [&registry](const ast::Expr& x) {
    using K = ast::ExprKind;
    if (x.kind == K::kColumn || x.kind == K::kParameter || x.kind == K::kSubquery || x.kind == K::kExists)
      return true;
    if (x.kind == K::kIn && static_cast<const ast::InExpr&>(x).subquery) return true;
    if (x.kind == K::kFunction) {
      auto& f = static_cast<const ast::FunctionCall&>(x);
      const ScalarFunction* fn = registry.find_scalar(f.name, static_cast<int>(f.args.size()));
      return !fn || !(fn->flags & kDeterministic) || (fn->flags & kPerRow);
    }
    return false;
  });
  return ok;
}

std::string quoted_list(const TableSchema& ts, const std::vector<int>& cols) {
  std::string out;
  for (int c : cols) out += (out.empty() ? "'" : ", '") + ts.columns[c].name + "'";
  return out;
}

// Binds generated column `g`'s body over the row scope; `used` collects the slots of
// the row's columns it reads. Unresolvable names get the declaration-time messages;
// returns false when the failing name sits where the analysis cannot see its bindings
// (a derived table, CTE or nested DML body): that declaration is accepted, and the
// first write reports the name.
bool analyze_generated(Planner& planner, const TableEntry& table, int g, std::set<int>& used) {
  const TableSchema& ts = table.schema;
  const ColumnSchema& col = ts.columns[g];
  Scope row = planner.table_scope(table, "");
  Scope images;
  add_images(images, row, "new", 0);
  row.used = &used;
  images.used = &used;
  row.outer = &images;
  try {
    planner.bind_expr(*col.generated_expr, row);
    return true;
  } catch (const UnknownColumnError& err) {
    if (!err.site()) throw;
    const ast::ColumnRef* ref = nullptr;
    bool opaque = false;
    walk_expr(*col.generated_expr, [&](const ast::Expr& x, bool in_opaque) {
      if (ref || x.kind != ast::ExprKind::kColumn) return;
      if (x.site.line == err.site()->line && x.site.column == err.site()->column) {
        ref = static_cast<const ast::ColumnRef*>(&x);
        opaque = in_opaque;
      }
    });
    if (!ref) throw;
    bool row_name = ref->table.empty() || (ref->schema.empty() && iequals(ref->table, "new"));
    if (row_name)
      throw Error(StatusCode::kError, "Column '" + ref->column + "' referenced by generated column '" + col.name +
                                          "' not found in table '" + ts.name + "'",
                  ref->site);
    if (opaque) return false;
    std::string spelled = (ref->schema.empty() ? "" : ref->schema + ".") + ref->table + "." + ref->column;
    throw Error(StatusCode::kError,
                "Reference '" + spelled + "' in generated column '" + col.name + "' of table '" + ts.name +
                    "' binds nothing: a generated value is computed from the row being written (spell its columns "
                    "as c, " + ts.name + ".c or new.c), and no FROM inside the expression binds '" +
                    (ref->schema.empty() ? "" : ref->schema + ".") + ref->table + "'",
                ref->site);
  }
}

// The (lower-case) column names read anywhere inside the DML statements nested in `e`.
void dml_names(const ast::Expr& e, std::set<std::string>& out);

void dml_statement_names(const ast::Statement& st, std::set<std::string>& out) {
  AstWalker w;
  w.on_expr = [&](const ast::Expr& x, bool) {
    if (x.kind == ast::ExprKind::kColumn) out.insert(to_lower(static_cast<const ast::ColumnRef&>(x).column));
  };
  w.on_dml = [&](const ast::Statement& inner) { dml_statement_names(inner, out); };
  auto returning = [&](const std::vector<ast::ResultColumn>& cols) {
    for (auto& rc : cols) w.expr(rc.expr.get(), true);
  };
  auto assignments = [&](const std::vector<ast::Assignment>& set) {
    for (auto& a : set) w.expr(a.value.get(), true);
  };
  switch (st.kind) {
    case ast::StmtKind::kInsert: {
      auto& ins = static_cast<const ast::InsertStmt&>(st);
      if (ins.source) w.select(*ins.source, true);
      for (auto& u : ins.upserts) {
        w.expr(u.target_where.get(), true);
        assignments(u.set);
        w.expr(u.where.get(), true);
      }
      returning(ins.returning);
      break;
    }
    case ast::StmtKind::kUpdate: {
      auto& up = static_cast<const ast::UpdateStmt&>(st);
      assignments(up.assignments);
      w.expr(up.where.get(), true);
      returning(up.returning);
      break;
    }
    case ast::StmtKind::kDelete: {
      auto& del = static_cast<const ast::DeleteStmt&>(st);
      w.expr(del.where.get(), true);
      returning(del.returning);
      break;
    }
    default: break;
  }
}

void dml_names(const ast::Expr& e, std::set<std::string>& out) {
  AstWalker w;
  w.on_expr = [](const ast::Expr&, bool) {};
  w.on_dml = [&](const ast::Statement& st) { dml_statement_names(st, out); };
  w.expr(&e, false);
}

}  // namespace

void walk_expr(const ast::Expr& e, const ExprFn& fn, bool opaque) {
  AstWalker w{fn, nullptr, nullptr, nullptr};
  w.expr(&e, opaque);
}

namespace {

// Why a call to a kClockArgs function (date, datetime, strftime, …) reads the clock or
// the process time zone, or "" when it cannot. An argument is safe when it is a literal
// other than 'now' / 'localtime', a column of `row` whose type cannot hold text
// (a DATE, TIME, DATETIME or numeric column stores no 'now'), another such call, or a
// sign / cast / COLLATE / parentheses around one. Anything else — a TEXT column, a
// context variable, a parameter, a subquery, an expression that could build the string —
// may be 'now' when the body runs, and the gate has no row to look at, so it is judged
// non-deterministic (the safe side: strict mode never stores a body that can read the
// clock; the refusal names the way out).
std::string clock_reason(const Registry& registry, const ast::FunctionCall& f, const TableSchema* row) {
  std::function<std::string(const ast::Expr&)> arg = [&](const ast::Expr& a) -> std::string {
    using K = ast::ExprKind;
    switch (a.kind) {
      case K::kLiteral: {
        auto& lit = static_cast<const ast::Literal&>(a);
        if (lit.literal_kind != ast::LiteralKind::kString) return "";
        std::string v = to_lower(lit.text);
        v.erase(0, v.find_first_not_of(" \t\n\r"));
        v.erase(v.find_last_not_of(" \t\n\r") + 1);
        if (v == "now") return "its argument 'now' reads the clock";
        // 'utc' reads no zone: UTC is the default (datetime.md "Timezone Control"), and
        // it only undoes an earlier 'localtime', which is judged on its own.
        if (v == "localtime") return "its modifier 'localtime' reads the process time zone";
        return "";
      }
      case K::kColumn: {
        auto& ref = static_cast<const ast::ColumnRef&>(a);
        if (row && ref.schema.empty() &&
            (ref.table.empty() || iequals(ref.table, row->name) || iequals(ref.table, "new") ||
             iequals(ref.table, "old")))
          for (const ColumnSchema& c : row->columns)
            if (iequals(c.name, ref.column)) {
              qrs_logical_type t = c.logical_type;
              if (is_numeric_type(t) || t == QRS_LT_BOOLEAN || t == QRS_LT_DATE || t == QRS_LT_TIME ||
                  t == QRS_LT_DATETIME)
                return "";
              break;
            }
        break;
      }
      case K::kUnary: return arg(*static_cast<const ast::UnaryExpr&>(a).operand);
      case K::kCast: return arg(*static_cast<const ast::CastExpr&>(a).operand);
      case K::kCollate: return arg(*static_cast<const ast::CollateExpr&>(a).operand);
      case K::kFunction: {
        auto& g = static_cast<const ast::FunctionCall&>(a);
        const ScalarFunction* fn = registry.find_scalar(g.name, static_cast<int>(g.args.size()));
        if (fn && (fn->flags & kClockArgs)) return clock_reason(registry, g, row);
        break;
      }
      default: break;
    }
    return "an argument that is not a constant (or a DATE, TIME, DATETIME or numeric column) may be 'now'";
  };
  for (const auto& a : f.args) {
    std::string why = arg(*a);
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

void require_deterministic(const Registry& registry, const ast::Expr& e, const std::string& clause,
                           const std::string& what, bool functions, bool dml, BodySite site, const TableSchema* row,
                           const char* hint, const Catalog* views) {
  std::string culprit;
  AstWalker w;
  std::set<const ViewEntry*> entered;
  // Names a CTE of the body binds (anywhere: a name some CTE takes is not looked up as a
  // view, which may miss a view read outside that CTE's scope, never judge a CTE as one).
  std::set<std::string> ctes;
  w.on_cte = [&](const ast::CommonTableExpr& cte) { ctes.insert(to_lower(cte.name)); };
  w.on_expr = [&](const ast::Expr& x, bool) {
    if (!functions || !culprit.empty() || x.kind != ast::ExprKind::kFunction) return;
    auto& f = static_cast<const ast::FunctionCall&>(x);
    int argc = static_cast<int>(f.args.size());
    if (const ScalarFunction* fn = registry.find_scalar(f.name, argc)) {
      if (fn->flags & kClockArgs) {
        std::string why = clock_reason(registry, f, row);
        if (!why.empty()) culprit = "Function '" + to_lower(f.name) + "' is not deterministic: " + why;
      } else if (!(fn->flags & kDeterministic)) {
        culprit = "Function '" + to_lower(f.name) + "' is not deterministic";
      }
    } else if (const AggregateFunction* agg = registry.find_aggregate(f.name, argc)) {
      if (!(agg->flags & kDeterministic)) culprit = "Function '" + to_lower(f.name) + "' is not deterministic";
    }
  };
  w.on_source = [&](const ast::TableSource& src) {
    if (!culprit.empty()) return;
    if (views && src.kind == ast::TableSource::Kind::kTable) {
      const std::string schema = to_lower(src.table.schema);
      if (schema.empty() && ctes.count(to_lower(src.table.name))) return;
      // Resolved as the body resolves it: a table's bodies in the table's own schema
      // (docs/schemas.md), anything else on main then temp; a table of the name hides a
      // view of a later schema.
      std::vector<std::string> walk;
      if (!schema.empty()) walk = {schema};
      else if (row) walk = {to_lower(row->schema_name)};
      else walk = {"main", "temp"};
      for (const std::string& s : walk) {
        if (views->find(s, src.table.name)) return;
        if (std::shared_ptr<const ViewEntry> v = views->find_view(s, src.table.name)) {
          if (!v->lens && entered.insert(v.get()).second) w.select(*v->definition->select, true);
          return;
        }
      }
      return;
    }
    if (!functions || src.kind != ast::TableSource::Kind::kFunction) return;
    const TableFunction* tf = registry.find_table_function(to_lower(src.function_name));
    if (tf && !(tf->flags & kDeterministic))
      culprit = "Function '" + to_lower(src.function_name) + "' is not deterministic";
  };
  w.on_dml = [&](const ast::Statement&) {
    if (dml && culprit.empty()) culprit = "a data-changing statement is not deterministic";
  };
  w.expr(&e, false);
  if (culprit.empty()) return;
  throw Error(StatusCode::kError,
              "Non-deterministic expression not allowed in " + clause + " " + what + ": " + culprit +
                  " (" + (hint ? hint : "use a WITH CONTEXT variable, or pragma nondeterministic_schema = true") + ")",
              site == BodySite::kHere && e.site.line > 0 ? std::optional<SourceSite>(e.site) : std::nullopt);
}

void refuse_generated_write(const TableSchema& table, int column, const char* verb) {
  if (table.columns[column].generated())
    throw Error(StatusCode::kError, std::string("Cannot ") + verb + " generated column '" +
                                        table.columns[column].name + "'");
}

// ---------------------------------------------------------------- CREATE TABLE

void validate_schema_expressions(DdlContext& db, const TableSchema& ts) {
  for (const ColumnSchema& col : ts.columns) {
    if (col.generated() && col.default_expr)
      throw Error(StatusCode::kError,
                  "Column '" + col.name + "' cannot have both DEFAULT and GENERATED ALWAYS AS", col.default_expr->site);
    // Walked as a CHECK is (determinism.md "CREATE TABLE"): no bind parameters — a scope
    // check, made whatever the pragma says, but not on a definition read back.
    if (col.generated() && !db.reading_stored() && has_parameter(*col.generated_expr))
      throw Error(StatusCode::kError,
                  "GENERATED ALWAYS AS for column '" + col.name + "' may not reference bind parameters",
                  col.generated_expr->site);
    if (col.generated() && !nondeterministic_allowed(db))
      require_deterministic(db.registry(), *col.generated_expr, "GENERATED ALWAYS AS", "for column '" + col.name + "'",
                            true, true, BodySite::kHere, &ts, nullptr, &db.catalog());
    if (!col.default_expr) continue;
    if (has_parameter(*col.default_expr))
      throw Error(StatusCode::kError, "DEFAULT for column '" + col.name + "' may not reference bind parameters",
                  col.default_expr->site);
    // A literal default must fit its own column's type; it is checked here, not at the
    // first INSERT that relies on it.
    if (foldable_default(db.registry(), *col.default_expr)) {
      Planner planner(db);
      ScalarPtr bound = planner.bind_expr(*col.default_expr, Scope{});
      ExecContext ctx;
      db.open_execution(ctx);
      EvalEnv env{nullptr, nullptr, &ctx};
      Value v;
      try {
        v = bound->eval(env);
      } catch (const Error&) {
        continue;  // an expression that fails to evaluate fails at the INSERT that fires it
      }
      DmlWriter::coerce(v, col, ts);
    }
  }
}

void resolve_default(DdlContext& db, TableEntry& entry, int column) {
  const TableSchema& ts = entry.schema;
  const ColumnSchema& col = ts.columns[column];
  if (!col.default_expr) return;
  Planner planner(db);
  // DEFAULT: context variables claim bare names; a bare column is refused (unless the
  // table declares a mutation context); `new.c` reads a supplied sibling, and such a
  // default's determinism is decided per INSERT.
  Scope ctx = context_scope(ts);
  std::set<int> bare, siblings;
  Scope row = planner.table_scope(entry, "");
  Scope images;
  add_images(images, row, "new", 0);
  row.used = &bare;
  images.used = &siblings;
  row.outer = &images;
  Scope vars = ctx;
  vars.outer = &row;
  planner.bind_expr(*col.default_expr, vars);
  // In a table with a mutation context the bare form reads the supplied sibling as
  // `new.c` does (vu-mutation-context.md: "the bare form resolves too unless a
  // same-named mutation-context variable shadows it"); without one it is refused.
  if (!bare.empty() && !ts.context.empty()) {
    siblings.insert(bare.begin(), bare.end());
    bare.clear();
  }
  if (!bare.empty()) {
    const std::string& other = ts.columns[*bare.begin()].name;
    throw Error(StatusCode::kError,
                "DEFAULT for column '" + col.name + "' may not reference a bare column ('" + other + "'): use new." +
                    other + " to read a value the INSERT supplies, or a generated column to compute from any sibling",
                col.default_expr->site);
  }
  if (siblings.empty() && !nondeterministic_allowed(db))
    require_deterministic(db.registry(), *col.default_expr, "DEFAULT", "for column '" + col.name + "'", true, true,
                          BodySite::kHere, &ts, nullptr, &db.catalog());
}

void resolve_schema_expressions(DdlContext& db, TableEntry& entry) {
  for (int i = 0; i < static_cast<int>(entry.schema.columns.size()); ++i) resolve_default(db, entry, i);
  resolve_generated(db, entry);
}

void resolve_generated(DdlContext& db, TableEntry& entry) {
  TableSchema& ts = entry.schema;
  Planner planner(db);
  planner.set_schema_authored(ts.schema_name);
  const int n = static_cast<int>(ts.columns.size());
  // GENERATED: names resolve against the row being written unless a FROM inside the
  // body binds them; the columns a body reads order the computation. A name inside a
  // nested DML statement is undecidable (its target may be this very table): it records
  // an edge to the generated column of that name, itself included.
  std::vector<std::set<int>> deps(n);
  std::vector<int> generated;
  for (int i = 0; i < n; ++i)
    if (ts.columns[i].generated()) generated.push_back(i);
  auto order_by_deps = [&] {
    std::vector<int> pending = generated, order;
    while (!pending.empty()) {
      auto ready = std::find_if(pending.begin(), pending.end(), [&](int g) {
        return std::all_of(deps[g].begin(), deps[g].end(),
                           [&](int d) { return std::find(order.begin(), order.end(), d) != order.end(); });
      });
      if (ready == pending.end())
        throw Error(StatusCode::kError, "Cyclic dependency in generated columns: " + quoted_list(ts, pending));
      order.push_back(*ready);
      pending.erase(ready);
    }
    return order;
  };
  // The undecidable edges first: a cycle through them is reported before any name in
  // the body is resolved (the DML's own relation may not expose it).
  for (int i : generated) {
    std::set<std::string> dml;
    dml_names(*ts.columns[i].generated_expr, dml);
    for (int j : generated)
      if (dml.count(to_lower(ts.columns[j].name))) deps[i].insert(j);
  }
  order_by_deps();
  for (int i : generated) {
    std::set<int> used;
    analyze_generated(planner, entry, i, used);
    for (int u : used)
      if (ts.columns[u].generated()) deps[i].insert(u);
  }
  std::vector<int> order = order_by_deps();
  if (!nondeterministic_allowed(db))
    for (int g : order)
      require_deterministic(db.registry(), *ts.columns[g].generated_expr, "GENERATED ALWAYS AS",
                            "for column '" + ts.columns[g].name + "'", true, true, BodySite::kHere, &ts, nullptr, &db.catalog());
  ts.generated_order = std::move(order);
}

// ---------------------------------------------------------------- DML binding

namespace {

// Binds a stored body (a CHECK, DEFAULT or generated expression parsed from the table's
// DDL) for a write. An error it raises ("Column not found", a type or collation problem)
// keeps its code and message but loses its line and column: those would point into the
// DDL's text, not into the statement being run (errors.md), as a determinism refusal of
// the same body does (BodySite::kStored).
ScalarPtr bind_stored(Planner& planner, const ast::Expr& body, const Scope& scope) {
  try {
    return planner.bind_expr(body, scope);
  } catch (const UnknownColumnError& err) {
    if (!err.site()) throw;
    throw UnknownColumnError(err.code(), err.raw_message());
  } catch (const Error& err) {
    if (!err.site()) throw;
    throw Error(err.code(), err.raw_message());
  }
}

// A write's generated-column projection judges the bodies again: a column declared while
// nondeterministic_schema was on meets the gate here.
void judge_generated(DdlContext& db, const TableEntry& table) {
  if (nondeterministic_allowed(db)) return;
  for (const ColumnSchema& col : table.schema.columns)
    if (col.generated())
      require_deterministic(db.registry(), *col.generated_expr, "GENERATED ALWAYS AS", "for column '" + col.name + "'",
                            true, true, BodySite::kStored, &table.schema, nullptr, &db.catalog());
}

}  // namespace

void judge_write_bodies(DdlContext& db, const TableEntry& table, const std::vector<RowOp>& ops, bool generated) {
  if (nondeterministic_allowed(db)) return;
  const TableSchema& ts = table.schema;
  // A write judges the CHECKs it enforces again (determinism.md "Validation Timing":
  // validated when building constraint checks): a constraint ALTER TABLE ADD CONSTRAINT
  // / ADD COLUMN added, or one declared while nondeterministic_schema was on, meets the
  // gate here. Nested DML is refused only here, whatever the operation.
  for (const CheckSchema& ck : ts.checks) {
    bool applies = std::any_of(ops.begin(), ops.end(), [&ck](RowOp op) {
      return op == RowOp::kInsert ? ck.on_insert : op == RowOp::kUpdate ? ck.on_update : ck.on_delete;
    });
    require_deterministic(db.registry(), *ck.expr, "CHECK", "constraint '" + ck.name + "'", applies, true,
                          BodySite::kStored, &ts, nullptr, &db.catalog());
  }
  if (generated) judge_generated(db, table);
}

std::vector<BoundGenerated> bind_generated(DdlContext& db, Planner& planner, const TableEntry& table, bool judge) {
  const TableSchema& ts = table.schema;
  std::vector<int> order = ts.generated_order;
  for (size_t i = 0; i < ts.columns.size(); ++i)  // columns no CREATE TABLE ordered
    if (ts.columns[i].generated() && std::find(order.begin(), order.end(), static_cast<int>(i)) == order.end())
      order.push_back(static_cast<int>(i));
  std::vector<BoundGenerated> out;
  if (order.empty()) return out;
  Scope row = planner.table_scope(table, "");
  Scope images;
  add_images(images, row, "new", 0);
  row.outer = &images;
  if (judge) judge_generated(db, table);
  for (int g : order) out.push_back({g, bind_stored(planner, *ts.columns[g].generated_expr, row)});
  return out;
}

std::vector<BoundCheck> bind_checks(DdlContext& db, Planner& planner, const TableEntry& table,
                                    const std::vector<RowOp>& ops, std::set<int>& context_read,
                                    const std::vector<ast::AttachedCheck>* attached, bool judge) {
  std::vector<BoundCheck> out;
  const TableSchema& ts = table.schema;
  if (ts.checks.empty() && (!attached || attached->empty())) return out;
  if (judge) judge_write_bodies(db, table, ops, false);
  Scope row = planner.table_scope(table, "");
  row.qualified_self = true;
  Scope images;
  int n = static_cast<int>(row.columns.size());
  add_images(images, row, "new", 0);
  add_images(images, row, "old", n);
  for (auto& c : images.columns) c.attr.nullable = true;  // an image the operation lacks reads as NULL
  row.outer = &images;
  Scope vars = context_scope(ts);
  vars.outer = &row;
  for (const CheckSchema& ck : ts.checks) {
    bool applies = std::any_of(ops.begin(), ops.end(), [&ck](RowOp op) {
      return op == RowOp::kInsert ? ck.on_insert : op == RowOp::kUpdate ? ck.on_update : ck.on_delete;
    });
    std::set<int> read;
    vars.used = &read;
    out.push_back({ck.name, expr_to_string(*ck.expr), bind_stored(planner, *ck.expr, vars), ck.on_insert, ck.on_update,
                   ck.on_delete, ck.on_conflict});
    // A CHECK reading other rows (a subquery) is judged at COMMIT (docs/foreign-keys.md).
    out.back().deferred = has_node(*ck.expr, [](const ast::Expr& x) {
      return x.kind == ast::ExprKind::kSubquery || x.kind == ast::ExprKind::kExists ||
             (x.kind == ast::ExprKind::kIn && static_cast<const ast::InExpr&>(x).subquery);
    });
    if (applies) context_read.insert(read.begin(), read.end());
  }
  if (attached)
    for (const ast::AttachedCheck& ck : *attached) {
      std::set<int> read;
      vars.used = &read;
      out.push_back({ck.name, ck.text, bind_stored(planner, *ck.expr, vars), ck.on_insert, ck.on_update, ck.on_delete,
                     std::nullopt});
      out.back().deferred = has_node(*ck.expr, [](const ast::Expr& x) {
        return x.kind == ast::ExprKind::kSubquery || x.kind == ast::ExprKind::kExists ||
               (x.kind == ast::ExprKind::kIn && static_cast<const ast::InExpr&>(x).subquery);
      });
    }
  return out;
}

ScalarPtr bind_default(DdlContext& db, Planner& planner, const TableEntry& table, int column,
                       const std::vector<bool>& visible, bool firing, std::set<int>& context_read) {
  const TableSchema& ts = table.schema;
  const ColumnSchema& col = ts.columns[column];
  if (!col.default_expr) return nullptr;
  if (firing && !nondeterministic_allowed(db))
    require_deterministic(db.registry(), *col.default_expr, "DEFAULT", "for column '" + col.name + "'", true, true,
                          BodySite::kStored, &ts, nullptr, &db.catalog());
  Scope row = planner.table_scope(table, "");
  Scope images;
  add_images(images, row, "new", 0, &visible);
  std::set<int> read;
  Scope vars = context_scope(ts);
  vars.used = &read;
  vars.outer = &images;
  ScalarPtr bound = bind_stored(planner, *col.default_expr, vars);
  if (firing) context_read.insert(read.begin(), read.end());
  return bound;
}

std::vector<ScalarPtr> bind_context_values(Planner& planner, const TableSchema& table,
                                           const std::vector<ast::NamedExpr>& supplied) {
  std::vector<ScalarPtr> out(table.context.size());
  for (const ast::NamedExpr& e : supplied) {
    for (size_t i = 0; i < table.context.size(); ++i)
      if (iequals(table.context[i].name, e.name)) out[i] = planner.bind_expr(*e.value, Scope{});
  }
  return out;
}

void require_context(const TableSchema& table, const std::vector<ScalarPtr>& values, const std::set<int>& read) {
  for (int i : read) {
    const ContextVariable& var = table.context[i];
    if (var.not_null && !values[i])
      throw Error(StatusCode::kError, "table '" + table.schema_name + "." + table.name +
                                          "' requires mutation context variable '" + var.name +
                                          "'; supply it with `with context " + var.name + " = …`");
  }
}

Row eval_context(const TableSchema& table, const std::vector<ScalarPtr>& values, ExecContext& ctx) {
  Row row(table.context.size());
  EvalEnv env{nullptr, nullptr, &ctx};
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    const ContextVariable& var = table.context[i];
    ColumnSchema as_column;
    as_column.name = var.name;
    as_column.type_name = var.type_name;
    as_column.logical_type = var.logical_type;
    row[i] = DmlWriter::coerce(values[i]->eval(env), as_column, table);
    if (row[i].is_null() && var.not_null)
      throw Error(StatusCode::kConstraint,
                  "NOT NULL constraint failed: mutation context variable " + table.name + "." + var.name);
  }
  return row;
}

}  // namespace quereus
