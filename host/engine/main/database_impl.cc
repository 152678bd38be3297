// Core: the Database and Statement implementations and the transaction coordinator.
#include "main/database_impl.h"
#include "main/lenses.h"
#include "main/materialized_views.h"

#include "maintained/maintenance.h"

#include "catalog/ddl_names.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <new>
#include <set>
#include <stdexcept>

#include "runtime/executable.h"
#include "functions/builtins.h"
#include "main/introspection.h"
#include "main/pragmas.h"
#include "optimizer/plan_validator.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "types/logical_type.h"
#include "write/dml_relation.h"

namespace quereus {

namespace {

class StatementImpl : public Statement {
 public:
  StatementImpl(DatabaseImpl& db, std::shared_ptr<const std::string> sql, std::shared_ptr<ast::Statement> ast)
      : db_(db), sql_(std::move(sql)), ast_(std::move(ast)) {}
  ~StatementImpl() override { finish(true); }

  const std::vector<std::string>& column_names() override {
    static const std::vector<std::string> kEmpty;
    try {
      ensure_planned();
      return exec_->names();
    } catch (const std::exception&) {
      return kEmpty;
    }
  }

  Status set_parameter_types(const ParamTypes& types) override {
    if (running_) return Status(StatusCode::kMisuse, "cannot change parameter types while the statement runs");
    for (auto& [i, t] : types.positional)
      if (i < 1) return Status(StatusCode::kRange, "parameter index out of range: " + std::to_string(i));
    param_types_ = types;
    typed_ = !types.positional.empty() || !types.named.empty();
    exec_.reset();  // re-plan with the new types
    return Status::Ok();
  }

  Status bind(int index, const Value& value) override {
    if (index < 1) return Status(StatusCode::kRange, "parameter index out of range: " + std::to_string(index));
    if (params_.size() < static_cast<size_t>(index)) params_.resize(index);
    params_[index - 1] = value;
    return Status::Ok();
  }
  Status bind(std::string_view name, const Value& value) override {
    std::string n(name);
    if (!n.empty() && (n[0] == ':' || n[0] == '$' || n[0] == '@')) n.erase(0, 1);
    named_[n] = value;
    // Numeric names also serve positional parameters (`?1`, `:1`).
    if (!n.empty() && std::all_of(n.begin(), n.end(), ::isdigit)) return bind(std::stoi(n), value);
    return Status::Ok();
  }

  Status step(bool* has_row) override {
    *has_row = false;
    try {
      if (!running_) {
        // Cleared before planning, so an interrupt that stops constant folding still
        // ends the statement.
        db_.interrupt_flag().store(false, std::memory_order_relaxed);
        ensure_planned();
        if (typed_) check_parameters();
        ctx_.db = &db_;
        ctx_.params = &params_;
        ctx_.named_params = &named_;
        ctx_.generation = db_.next_generation();
        ctx_.failed_action = QRS_CONFLICT_ABORT;
        ctx_.max_length = db_.options().limits.max_length;
        ctx_.interrupt.arm(&db_.interrupt_flag(), db_.options().statement_timeout_ms);
        ctx_.memory.arm(db_.options().limits.max_statement_memory);
        owns_txn_ = !exec_->controls_transaction();
        if (owns_txn_) db_.statement_begin();
        running_ = true;
        exec_->start(ctx_);
      }
      if (exec_->next(row_)) {
        *has_row = true;
        return Status::Ok();
      }
      finish(false);
      return Status::Ok();
    } catch (const std::exception& e) {
      Status st = status_of(e);
      if (ctx_.failed_action == QRS_CONFLICT_FAIL) {
        // OR FAIL: the rows written before the violation stay. Should keeping them fail
        // too, that failure is the statement's.
        // (statement_commit undoes what it cannot keep before it throws.)
        try {
          finish(false);
        } catch (const std::exception& ce) {
          return status_of(ce);
        }
      } else {
        abort();
        if (ctx_.failed_action == QRS_CONFLICT_ROLLBACK) {
          try {
            db_.transaction().rollback_explicit();
          } catch (const std::exception& re) {
            spdlog::error("transaction rollback failed: {}", re.what());
          }
        }
      }
      return st;
    }
  }

  const Row& row() const override { return row_; }

  Status reset() override {
    try {
      finish(false);
    } catch (const std::exception& e) {
      return status_of(e);
    }
    return Status::Ok();
  }

  std::string_view sql() const override {
    return std::string_view(*sql_).substr(ast_->text_begin, ast_->text_end - ast_->text_begin);
  }

 private:
  // Without declared types, a statement is planned with the types of the values bound
  // when it runs (types-parameters.md "Type Inference Rules": a string is TEXT, a safe
  // integer INTEGER, …), so a TEXT parameter compared with an INTEGER column is converted
  // as a TEXT literal would be; it is planned again only when a bound value's type changes.
  void ensure_planned() {
    if (!typed_ && !inferred_matches()) {
      inferred_ = ParamTypes::from_values(params_, named_);
      inferred_sig_ = signature();
      exec_.reset();
    }
    if (!exec_ || planned_version_ != db_.schema_version()) {
      const ParamTypes* types = typed_ ? &param_types_ : (inferred_sig_.empty() ? nullptr : &inferred_);
      exec_ = plan_statement(db_, *ast_, types);
      planned_version_ = db_.schema_version();
    }
  }
  static qrs_logical_type value_type_of(const Value& v) {
    switch (v.type()) {
      case ValueType::kInteger:
      case ValueType::kBigInt: return QRS_LT_INTEGER;
      case ValueType::kReal: return QRS_LT_REAL;
      case ValueType::kText: return QRS_LT_TEXT;
      case ValueType::kBlob: return QRS_LT_BLOB;
      case ValueType::kBoolean: return QRS_LT_BOOLEAN;
      case ValueType::kJson: return QRS_LT_JSON;
      default: return QRS_LT_ANY;
    }
  }
  // The bound values' types, positional then named (in name order).
  std::vector<qrs_logical_type> signature() const {
    std::vector<qrs_logical_type> sig;
    sig.reserve(params_.size() + named_.size());
    for (const Value& v : params_) sig.push_back(value_type_of(v));
    for (const auto& [n, v] : named_) sig.push_back(value_type_of(v));
    return sig;
  }
  bool inferred_matches() const {
    if (inferred_sig_.size() != params_.size() + named_.size()) return false;
    size_t i = 0;
    for (const Value& v : params_)
      if (inferred_sig_[i++] != value_type_of(v)) return false;
    for (const auto& [n, v] : named_)
      if (inferred_sig_[i++] != value_type_of(v)) return false;
    return true;
  }
  // Every declared parameter's bound value (NULL when unbound) must fit its type.
  void check_parameters() const {
    std::string why;
    for (auto& [i, t] : param_types_.positional) {
      const Value& v = static_cast<size_t>(i) <= params_.size() ? params_[i - 1] : kNull;
      if (!value_fits_param(v, t, &why))
        throw Error(StatusCode::kMismatch, "Parameter type mismatch for parameter " + std::to_string(i) + ": " + why);
    }
    for (auto& [n, t] : param_types_.named) {
      auto it = named_.find(n);
      if (!value_fits_param(it == named_.end() ? kNull : it->second, t, &why))
        throw Error(StatusCode::kMismatch, "Parameter type mismatch for parameter :" + n + ": " + why);
    }
  }
  inline static const Value kNull{};

  // Ends the run, keeping its writes. `quiet` (the destructor, which cannot throw) logs a
  // failing commit instead of throwing it.
  void finish(bool quiet) {
    if (!running_) return;
    running_ = false;
    if (!owns_txn_) return;
    if (!quiet) {
      db_.statement_commit();
      return;
    }
    try {
      db_.statement_commit();
    } catch (const std::exception& e) {
      spdlog::error("statement commit failed while the statement was closed: {}", e.what());
    }
  }
  void abort() {
    if (!running_) {
      return;
    }
    running_ = false;
    if (owns_txn_) {
      try {
        db_.statement_rollback();
      } catch (const std::exception& e) {
        spdlog::error("statement rollback failed: {}", e.what());
      }
    }
  }

  DatabaseImpl& db_;
  std::shared_ptr<const std::string> sql_;
  std::shared_ptr<ast::Statement> ast_;
  std::unique_ptr<Executable> exec_;
  uint64_t planned_version_ = 0;
  std::vector<Value> params_;
  std::map<std::string, Value> named_;
  ParamTypes param_types_;
  bool typed_ = false;  // some parameter has a declared type
  ParamTypes inferred_;                         // without declared types: the bound values'
  std::vector<qrs_logical_type> inferred_sig_;  // … as planned (empty: planned untyped)
  ExecContext ctx_;
  Row row_;
  bool running_ = false;
  bool owns_txn_ = false;
};

}  // namespace

Status Database::Open(std::shared_ptr<Registry> registry, const DatabaseOptions& options, std::unique_ptr<Database>* out) {
  if (!registry) return Status(StatusCode::kMisuse, "Database::Open needs a registry");
  try {
    register_builtin_functions(*registry);
    register_introspection_functions(*registry);
    register_file_functions(*registry);
    register_debug_trace_functions(*registry);
    register_lens_functions(*registry);
  } catch (const std::exception& e) {
    return status_of(e);
  }
  if (!registry->find_module(options.default_module))
    return Status(StatusCode::kError, "default module '" + options.default_module + "' is not registered");
  auto db = std::make_unique<DatabaseImpl>(std::move(registry), options);
  try {
    db->open_modules();
    db->reconcile_structure();
  } catch (const std::exception& e) {
    return status_of(e);
  }
  *out = std::move(db);
  return Status::Ok();
}

DatabaseImpl::DatabaseImpl(std::shared_ptr<Registry> registry, const DatabaseOptions& options)
    : registry_(std::move(registry)), db_options_(options) {
  options_.default_vtab_module = options.default_module;
  options_.limits = options.limits;
  options_.optimizer.max_length = options.limits.max_length;
  options_.optimizer.interrupt = &interrupt_requested_;
  options_.optimizer.timeout_ms = options.statement_timeout_ms;
  options_.statement_timeout_ms = options.statement_timeout_ms;
  maintenance_ = std::make_unique<MaintenanceManager>(*this);
  maintenance_->set_write_plan_binder(
      [this](const std::shared_ptr<TableEntry>& view) { return bind_maintained_writes(*this, view); });
  add_row_observer(maintenance_.get());
}

DatabaseImpl::~DatabaseImpl() {
  // A destructor cannot fail: a rollback a module refuses is logged (its own journal
  // decides what survives the process).
  try {
    txn_.abort();
  } catch (const std::exception& e) {
    spdlog::error("database '{}': rolling back the open transaction at close failed: {}", db_options_.name, e.what());
  } catch (...) {
    spdlog::error("database '{}': rolling back the open transaction at close failed", db_options_.name);
  }
  // Release tables before their modules (and plugins) go away.
  for (auto& t : catalog_.tables()) {
    t->fk_links.reset();  // resolved keys point back at their tables
    t->connection.reset();
    t->table.reset();
  }
}

Status DatabaseImpl::prepare(std::string_view sql, std::vector<std::unique_ptr<Statement>>* out) {
  out->clear();
  try {
    if (static_cast<int64_t>(sql.size()) > options_.limits.max_sql_length) {
      return Status(StatusCode::kTooBig, "statement too long: " + std::to_string(sql.size()) + " bytes (max_sql_length " +
                                             std::to_string(options_.limits.max_sql_length) + ")");
    }
    auto text = std::make_shared<const std::string>(sql);
    auto stmts = Parser::parse(*text, options_.limits);
    for (auto& s : stmts)
      out->push_back(std::make_unique<StatementImpl>(*this, text, std::shared_ptr<ast::Statement>(std::move(s))));
    return Status::Ok();
  } catch (const std::exception& e) {
    out->clear();
    return status_of(e);
  }
}

Status DatabaseImpl::exec(std::string_view sql) {
  std::vector<std::unique_ptr<Statement>> stmts;
  Status st = prepare(sql, &stmts);
  if (!st.ok()) return st;
  for (auto& s : stmts) {
    bool row = true;
    while (row) {
      st = s->step(&row);
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

Status DatabaseImpl::set_option(std::string_view name, const Value& value) {
  return write_pragma(*this, name, value);
}

void DatabaseImpl::check_ddl_allowed(const std::string& statement) const {
  if (txn_.in_explicit() && options_.ddl_strict)
    throw Error(StatusCode::kError, statement + " inside a transaction is refused: ddl_transaction_policy = strict "
                                                "(no module here declares transactional DDL). Commit first, or set "
                                                "pragma ddl_transaction_policy = 'permissive'.");
}

std::unique_ptr<Executable> DatabaseImpl::plan(const ast::Statement& stmt) { return plan_statement(*this, stmt); }

void DatabaseImpl::require_file_access(bool write, const std::string& what) const {
  using A = DatabaseOptions::FileAccess;
  const A have = db_options_.file_access;
  if (have == A::kReadWrite || (!write && have == A::kRead)) return;
  throw Error(StatusCode::kError, what + " is refused: this database's file_access is " +
                                      (have == A::kNone ? "none" : "read") + " (databases." + db_options_.name +
                                      ".file_access in the deployment file allows " +
                                      (write ? "read_write" : "read or read_write") + ")");
}

std::shared_ptr<TableEntry> DatabaseImpl::require_table(const std::string& schema, const std::string& name) {
  if (!schema.empty()) {
    auto t = catalog_.has_schema(schema) ? catalog_.find(schema, name) : nullptr;
    if (!t) throw Error(StatusCode::kNotFound, "Table not found: " + schema + "." + name);
    return t;
  }
  for (const std::string& s : ddl_lookup_schemas(""))
    if (auto t = catalog_.find(s, name)) return t;
  throw Error(StatusCode::kNotFound, "Table '" + name + "' not found in schema path: main");
}

DatabaseImpl::Relation DatabaseImpl::find_relation(const std::string& schema, const std::string& name,
                                                  const std::vector<std::string>* path) {
  auto in_schema = [&](const std::string& s) -> Relation {
    if (auto t = catalog_.find(s, name)) return {t, nullptr};
    return {nullptr, catalog_.find_view(s, name)};
  };
  if (!schema.empty()) return catalog_.has_schema(schema) ? in_schema(to_lower(schema)) : Relation{};
  for (const auto& s : path ? *path : options_.schema_path) {
    Relation r = in_schema(s);
    if (r.table || r.view) return r;
  }
  return {};
}

DatabaseImpl::Relation DatabaseImpl::resolve_relation(const std::string& schema, const std::string& name,
                                                     const std::vector<std::string>* path) {
  Relation r = find_relation(schema, name, path);
  if (r.table || r.view) return r;
  throw Error(StatusCode::kNotFound, relation_not_found(schema, name, path));
}

void DatabaseImpl::open_execution(ExecContext& ctx) {
  ctx.db = this;
  ctx.generation = next_generation();
}

RelPtr DatabaseImpl::optimize_plan(RelPtr root) {
  RelPtr plan = Optimizer(options_.optimizer).optimize(std::move(root));
  if (options_.validate_plan && plan) validate_plan(*plan);  // pragma validate_plan
  return plan;
}

RelPtr DatabaseImpl::optimize_query(RelPtr root) {
  Optimizer optimizer(options_.optimizer);
  RelPtr plan = optimizer.finish_query(optimizer.optimize(std::move(root)));
  if (options_.validate_plan && plan) validate_plan(*plan);  // pragma validate_plan
  return plan;
}

PlannedDml DatabaseImpl::plan_dml_relation(const ast::Statement& stmt, const std::vector<std::string>& path,
                                           const PlanSeed* seed) {
  auto run = std::make_shared<DmlRun>();
  using K = ast::StmtKind;
  run->verb = stmt.kind == K::kUpdate ? "UPDATE" : stmt.kind == K::kDelete ? "DELETE" : "INSERT";
  // Planning a write binds its table's CHECKs and DEFAULTs, which may hold a write of the
  // same table (allowed under pragma nondeterministic_schema): bounded, not recursing
  // until the stack runs out.
  static thread_local int planning = 0;
  if (planning >= 32)
    throw Error(StatusCode::kError, std::string("data-changing statements nest too deeply (") + run->verb +
                                        " at depth 32): a CHECK, DEFAULT or view whose statement writes the table it "
                                        "is evaluated for?",
                stmt.site);
  struct Depth {
    Depth() { ++planning; }
    ~Depth() { --planning; }
  } depth;
  run->exec = plan_nested_dml(*this, stmt, path, seed);
  return {run, run->exec->names()};
}

std::string DatabaseImpl::relation_not_found(const std::string& schema, const std::string& name,
                                             const std::vector<std::string>* path) {
  if (!schema.empty()) return "Table not found: " + schema + "." + name;
  const std::vector<std::string>& walk = path ? *path : options_.schema_path;
  std::string listed;
  for (const auto& s : walk) listed += (listed.empty() ? "" : ", ") + s;
  std::string msg = "Table '" + name + "' not found in schema path: " + listed;
  for (const auto& s : catalog_.schemas()) {
    if (std::find(walk.begin(), walk.end(), s) != walk.end()) continue;
    if (catalog_.find(s, name) || catalog_.find_view(s, name)) {
      msg += "\n  Did you mean: " + s + "." + name + "?";
      break;
    }
  }
  return msg;
}

// ---------------------------------------------------------------- write context

std::shared_ptr<const ScalarExpr> DatabaseImpl::bind_row_expr(const TableEntry& table, const ast::Expr& expr) {
  Planner planner(*this);
  return planner.bind_expr(expr, planner.table_scope(table, ""));
}

}  // namespace quereus
