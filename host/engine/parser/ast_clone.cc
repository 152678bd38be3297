// Deep copy of AST nodes (see ast_clone.h). One function per node family; the switches
// over ExprKind and StmtKind have no default, so -Wswitch flags a kind added to ast.h
// and not copied here.
#include "parser/ast_clone.h"

#include <string>

namespace quereus::ast {

namespace {

template <class T>
const T& as(const Expr& e) {
  return static_cast<const T&>(e);
}

template <class T>
const T& as(const Statement& s) {
  return static_cast<const T&>(s);
}

// A new node of type T with the base fields of `from`.
template <class T>
std::unique_ptr<T> fresh(const Expr& from) {
  auto out = std::make_unique<T>();
  out->site = from.site;
  return out;
}

template <class T>
std::unique_ptr<T> fresh(const Statement& from) {
  auto out = std::make_unique<T>();
  out->site = from.site;
  out->text_begin = from.text_begin;
  out->text_end = from.text_end;
  return out;
}

// Element copies for clone_each: owning pointers may be null, nodes held by value are
// cloned.
ExprPtr copy_item(const ExprPtr& e) { return clone_or_null(e); }
StatementPtr copy_item(const StatementPtr& s) { return clone_or_null(s); }
template <class T>
T copy_item(const T& item) {
  return clone(item);
}

template <class T>
std::vector<T> clone_each(const std::vector<T>& items) {
  std::vector<T> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(copy_item(item));
  return out;
}

std::vector<std::vector<ExprPtr>> clone_rows(const std::vector<std::vector<ExprPtr>>& rows) {
  std::vector<std::vector<ExprPtr>> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(clone_each(row));
  return out;
}

// A value-held node that one statement keeps behind a unique_ptr (ALTER TABLE's column
// and constraint).
template <class T>
std::unique_ptr<T> boxed_or_null(const std::unique_ptr<T>& p) {
  return p ? std::make_unique<T>(clone(*p)) : nullptr;
}

[[noreturn]] void unknown_kind(const char* what, int kind) {
  throw Error(StatusCode::kInternal,
              std::string("ast::clone: unknown ") + what + " kind " + std::to_string(kind));
}

// ---------------------------------------------------------------- expressions

ExprPtr clone_function(const FunctionCall& f) {
  auto out = fresh<FunctionCall>(f);
  out->name = f.name;
  out->distinct = f.distinct;
  out->star = f.star;
  out->args = clone_each(f.args);
  if (f.over) out->over = clone(*f.over);
  return out;
}

ExprPtr clone_case(const CaseExpr& c) {
  auto out = fresh<CaseExpr>(c);
  out->base = clone_or_null(c.base);
  out->whens.reserve(c.whens.size());
  for (const auto& [when, then] : c.whens)
    out->whens.emplace_back(clone_or_null(when), clone_or_null(then));
  out->else_expr = clone_or_null(c.else_expr);
  return out;
}

ExprPtr clone_in(const InExpr& in) {
  auto out = fresh<InExpr>(in);
  out->negated = in.negated;
  out->operand = clone_or_null(in.operand);
  out->list = clone_each(in.list);
  out->subquery = clone_or_null(in.subquery);
  return out;
}

}  // namespace

ExprPtr clone(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral: {
      const auto& x = as<Literal>(e);
      auto out = fresh<Literal>(x);
      out->literal_kind = x.literal_kind;
      out->text = x.text;
      return out;
    }
    case ExprKind::kColumn: {
      const auto& x = as<ColumnRef>(e);
      auto out = fresh<ColumnRef>(x);
      out->schema = x.schema;
      out->table = x.table;
      out->column = x.column;
      return out;
    }
    case ExprKind::kParameter: {
      const auto& x = as<Parameter>(e);
      auto out = fresh<Parameter>(x);
      out->spelling = x.spelling;
      out->index = x.index;
      out->name = x.name;
      return out;
    }
    case ExprKind::kUnary: {
      const auto& x = as<UnaryExpr>(e);
      auto out = fresh<UnaryExpr>(x);
      out->op = x.op;
      out->operand = clone_or_null(x.operand);
      return out;
    }
    case ExprKind::kBinary: {
      const auto& x = as<BinaryExpr>(e);
      auto out = fresh<BinaryExpr>(x);
      out->op = x.op;
      out->left = clone_or_null(x.left);
      out->right = clone_or_null(x.right);
      out->escape = clone_or_null(x.escape);
      return out;
    }
    case ExprKind::kFunction: return clone_function(as<FunctionCall>(e));
    case ExprKind::kCast: {
      const auto& x = as<CastExpr>(e);
      auto out = fresh<CastExpr>(x);
      out->operand = clone_or_null(x.operand);
      out->type_name = x.type_name;
      return out;
    }
    case ExprKind::kCollate: {
      const auto& x = as<CollateExpr>(e);
      auto out = fresh<CollateExpr>(x);
      out->operand = clone_or_null(x.operand);
      out->collation = x.collation;
      return out;
    }
    case ExprKind::kCase: return clone_case(as<CaseExpr>(e));
    case ExprKind::kBetween: {
      const auto& x = as<BetweenExpr>(e);
      auto out = fresh<BetweenExpr>(x);
      out->negated = x.negated;
      out->operand = clone_or_null(x.operand);
      out->low = clone_or_null(x.low);
      out->high = clone_or_null(x.high);
      return out;
    }
    case ExprKind::kIn: return clone_in(as<InExpr>(e));
    case ExprKind::kExists: {
      const auto& x = as<ExistsExpr>(e);
      auto out = fresh<ExistsExpr>(x);
      out->negated = x.negated;
      out->subquery = clone_or_null(x.subquery);
      return out;
    }
    case ExprKind::kSubquery: {
      const auto& x = as<SubqueryExpr>(e);
      auto out = fresh<SubqueryExpr>(x);
      out->subquery = clone_or_null(x.subquery);
      return out;
    }
    case ExprKind::kIsNull: {
      const auto& x = as<IsNullExpr>(e);
      auto out = fresh<IsNullExpr>(x);
      out->negated = x.negated;
      out->operand = clone_or_null(x.operand);
      return out;
    }
  }
  unknown_kind("expression", static_cast<int>(e.kind));
}

ExprPtr clone_or_null(const ExprPtr& e) { return e ? clone(*e) : nullptr; }

std::vector<ExprPtr> clone(const std::vector<ExprPtr>& exprs) { return clone_each(exprs); }

// ---------------------------------------------------------------- queries

NamedExpr clone(const NamedExpr& named) {
  NamedExpr out;
  out.name = named.name;
  out.value = clone_or_null(named.value);
  out.site = named.site;
  return out;
}

std::vector<NamedExpr> clone(const std::vector<NamedExpr>& named) { return clone_each(named); }

ResultColumn clone(const ResultColumn& column) {
  ResultColumn out;
  out.kind = column.kind;
  out.expr = clone_or_null(column.expr);
  out.alias = column.alias;
  out.table = column.table;
  out.site = column.site;
  out.inverse = clone_each(column.inverse);
  return out;
}

std::vector<ResultColumn> clone(const std::vector<ResultColumn>& columns) {
  return clone_each(columns);
}

OrderingTerm clone(const OrderingTerm& term) {
  OrderingTerm out;
  out.expr = clone_or_null(term.expr);
  out.desc = term.desc;
  out.nulls = term.nulls;
  return out;
}

std::vector<OrderingTerm> clone(const std::vector<OrderingTerm>& terms) {
  return clone_each(terms);
}

FrameBound clone(const FrameBound& bound) {
  FrameBound out;
  out.kind = bound.kind;
  out.offset = clone_or_null(bound.offset);
  return out;
}

std::unique_ptr<WindowFrame> clone(const WindowFrame& frame) {
  auto out = std::make_unique<WindowFrame>();
  out->unit = frame.unit;
  out->start = clone(frame.start);
  out->has_end = frame.has_end;
  out->end = clone(frame.end);
  out->exclude = frame.exclude;
  return out;
}

std::unique_ptr<WindowSpec> clone(const WindowSpec& window) {
  auto out = std::make_unique<WindowSpec>();
  out->partition_by = clone_each(window.partition_by);
  out->order_by = clone_each(window.order_by);
  if (window.frame) out->frame = clone(*window.frame);
  return out;
}

TableSourcePtr clone(const TableSource& source) {
  // Every field, whatever the kind: the parser leaves the unused ones empty.
  auto out = std::make_unique<TableSource>();
  out->kind = source.kind;
  out->site = source.site;
  out->table = source.table;
  out->subquery = clone_or_null(source.subquery);
  out->function_name = source.function_name;
  out->function_args = clone_each(source.function_args);
  out->alias = source.alias;
  out->alias_columns = source.alias_columns;
  out->lateral = source.lateral;
  out->join = source.join;
  out->left = clone_or_null(source.left);
  out->right = clone_or_null(source.right);
  out->on = clone_or_null(source.on);
  out->using_columns = source.using_columns;
  out->exists_columns = source.exists_columns;
  return out;
}

TableSourcePtr clone_or_null(const TableSourcePtr& source) {
  return source ? clone(*source) : nullptr;
}

SelectCore clone(const SelectCore& core) {
  SelectCore out;
  out.distinct = core.distinct;
  out.columns = clone_each(core.columns);
  out.from = clone_or_null(core.from);
  out.where = clone_or_null(core.where);
  out.group_by = clone_each(core.group_by);
  out.having = clone_or_null(core.having);
  out.values = clone_rows(core.values);
  out.nested = clone_or_null(core.nested);
  return out;
}

CompoundLeg clone(const CompoundLeg& leg) {
  CompoundLeg out;
  out.op = leg.op;
  out.membership = leg.membership;
  out.core = clone(leg.core);
  return out;
}

CommonTableExpr clone(const CommonTableExpr& cte) {
  CommonTableExpr out;
  out.name = cte.name;
  out.columns = cte.columns;
  out.select = clone_or_null(cte.select);
  out.site = cte.site;
  out.materialization = cte.materialization;
  return out;
}

std::unique_ptr<WithClause> clone(const WithClause& with) {
  auto out = std::make_unique<WithClause>();
  out->recursive = with.recursive;
  out->ctes = clone_each(with.ctes);
  out->max_recursion = with.max_recursion;
  return out;
}

std::unique_ptr<WithClause> clone_or_null(const std::unique_ptr<WithClause>& with) {
  return with ? clone(*with) : nullptr;
}

std::unique_ptr<Select> clone(const Select& s) {
  auto out = std::make_unique<Select>();
  out->site = s.site;
  out->with = clone_or_null(s.with);
  out->core = clone(s.core);
  out->compounds = clone_each(s.compounds);
  out->order_by = clone_each(s.order_by);
  out->limit = clone_or_null(s.limit);
  out->offset = clone_or_null(s.offset);
  out->schema_path = s.schema_path;
  out->defaults = clone_each(s.defaults);
  out->dml = clone_or_null(s.dml);
  return out;
}

std::unique_ptr<Select> clone_or_null(const std::unique_ptr<Select>& s) {
  return s ? clone(*s) : nullptr;
}

// ---------------------------------------------------------------- statement parts

Assignment clone(const Assignment& assignment) {
  Assignment out;
  out.columns = assignment.columns;
  out.value = clone_or_null(assignment.value);
  return out;
}

UpsertClause clone(const UpsertClause& upsert) {
  UpsertClause out;
  out.target = upsert.target;
  out.target_where = clone_or_null(upsert.target_where);
  out.do_nothing = upsert.do_nothing;
  out.set = clone_each(upsert.set);
  out.where = clone_or_null(upsert.where);
  out.site = upsert.site;
  return out;
}

ColumnConstraint clone(const ColumnConstraint& constraint) {
  ColumnConstraint out;
  out.kind = constraint.kind;
  out.name = constraint.name;
  out.desc = constraint.desc;
  out.on_conflict = constraint.on_conflict;
  out.expr = clone_or_null(constraint.expr);
  out.collation = constraint.collation;
  out.fk_table = constraint.fk_table;
  out.fk_columns = constraint.fk_columns;
  out.generated_stored = constraint.generated_stored;
  out.site = constraint.site;
  out.fk_on_delete = constraint.fk_on_delete;
  out.fk_on_update = constraint.fk_on_update;
  out.fk_deferral = constraint.fk_deferral;
  out.check_on = constraint.check_on;
  out.tags = clone_each(constraint.tags);
  return out;
}

ColumnDef clone(const ColumnDef& column) {
  ColumnDef out;
  out.name = column.name;
  out.type_name = column.type_name;
  out.constraints = clone_each(column.constraints);
  out.tags = clone_each(column.tags);
  out.site = column.site;
  return out;
}

TableConstraint clone(const TableConstraint& constraint) {
  TableConstraint out;
  out.kind = constraint.kind;
  out.name = constraint.name;
  out.columns = constraint.columns;
  out.on_conflict = constraint.on_conflict;
  out.expr = clone_or_null(constraint.expr);
  out.fk_table = constraint.fk_table;
  out.fk_columns = constraint.fk_columns;
  out.site = constraint.site;
  out.fk_on_delete = constraint.fk_on_delete;
  out.fk_on_update = constraint.fk_on_update;
  out.fk_deferral = constraint.fk_deferral;
  out.check_on = constraint.check_on;
  out.tags = clone_each(constraint.tags);
  return out;
}

ModuleArg clone(const ModuleArg& arg) {
  ModuleArg out;
  out.key = arg.key;
  out.value = clone_or_null(arg.value);
  return out;
}

// ---------------------------------------------------------------- statements

namespace {

void copy_dml_clauses(const DmlClauses& from, DmlClauses& to) {
  to.context = clone_each(from.context);
  to.tags = clone_each(from.tags);
  to.schema_path = from.schema_path;
  to.attached_checks = from.attached_checks;
}

StatementPtr clone_select(const SelectStmt& s) {
  auto out = fresh<SelectStmt>(s);
  out->select = clone_or_null(s.select);
  return out;
}

StatementPtr clone_insert(const InsertStmt& s) {
  auto out = fresh<InsertStmt>(s);
  copy_dml_clauses(s, *out);
  out->with = clone_or_null(s.with);
  out->or_action = s.or_action;
  out->replace = s.replace;
  out->table = s.table;
  out->alias = s.alias;
  out->columns = s.columns;
  out->source = clone_or_null(s.source);
  out->default_values = s.default_values;
  out->upserts = clone_each(s.upserts);
  out->returning = clone_each(s.returning);
  return out;
}

StatementPtr clone_update(const UpdateStmt& s) {
  auto out = fresh<UpdateStmt>(s);
  copy_dml_clauses(s, *out);
  out->with = clone_or_null(s.with);
  out->or_action = s.or_action;
  out->table = s.table;
  out->alias = s.alias;
  out->target_query = clone_or_null(s.target_query);
  out->target_columns = s.target_columns;
  out->assignments = clone_each(s.assignments);
  out->where = clone_or_null(s.where);
  out->returning = clone_each(s.returning);
  return out;
}

StatementPtr clone_delete(const DeleteStmt& s) {
  auto out = fresh<DeleteStmt>(s);
  copy_dml_clauses(s, *out);
  out->with = clone_or_null(s.with);
  out->table = s.table;
  out->alias = s.alias;
  out->target_query = clone_or_null(s.target_query);
  out->target_columns = s.target_columns;
  out->where = clone_or_null(s.where);
  out->returning = clone_each(s.returning);
  return out;
}

StatementPtr clone_create_table(const CreateTableStmt& s) {
  auto out = fresh<CreateTableStmt>(s);
  out->temporary = s.temporary;
  out->if_not_exists = s.if_not_exists;
  out->table = s.table;
  out->columns = clone_each(s.columns);
  out->constraints = clone_each(s.constraints);
  out->module_name = s.module_name;
  out->module_args = clone_each(s.module_args);
  out->context = clone_each(s.context);
  out->maintained = clone_or_null(s.maintained);
  out->maintained_columns = s.maintained_columns;
  out->tags = clone_each(s.tags);
  return out;
}

StatementPtr clone_create_index(const CreateIndexStmt& s) {
  auto out = fresh<CreateIndexStmt>(s);
  out->unique = s.unique;
  out->if_not_exists = s.if_not_exists;
  out->index = s.index;
  out->table = s.table;
  out->columns = s.columns;
  out->where = clone_or_null(s.where);
  out->tags = clone_each(s.tags);
  return out;
}

StatementPtr clone_create_view(const CreateViewStmt& s) {
  auto out = fresh<CreateViewStmt>(s);
  out->if_not_exists = s.if_not_exists;
  out->view = s.view;
  out->columns = s.columns;
  out->select = clone_or_null(s.select);
  out->tags = clone_each(s.tags);
  return out;
}

StatementPtr clone_create_materialized_view(const CreateMaterializedViewStmt& s) {
  auto out = fresh<CreateMaterializedViewStmt>(s);
  out->if_not_exists = s.if_not_exists;
  out->view = s.view;
  out->columns = s.columns;
  out->module_name = s.module_name;
  out->module_args = clone_each(s.module_args);
  out->select = clone_or_null(s.select);
  out->tags = clone_each(s.tags);
  return out;
}

StatementPtr clone_create_assertion(const CreateAssertionStmt& s) {
  auto out = fresh<CreateAssertionStmt>(s);
  out->name = s.name;
  out->check = clone_or_null(s.check);
  return out;
}

StatementPtr clone_drop(const DropStmt& s) {
  auto out = fresh<DropStmt>(s);
  out->object = s.object;
  out->if_exists = s.if_exists;
  out->name = s.name;
  return out;
}

StatementPtr clone_alter_table(const AlterTableStmt& s) {
  auto out = fresh<AlterTableStmt>(s);
  out->action = s.action;
  out->column_action = s.column_action;
  out->tag_target = s.tag_target;
  out->table = s.table;
  out->name = s.name;
  out->new_name = s.new_name;
  out->column = boxed_or_null(s.column);
  out->constraint = boxed_or_null(s.constraint);
  out->key = s.key;
  out->type_name = s.type_name;
  out->collation = s.collation;
  out->default_value = clone_or_null(s.default_value);
  out->tag_verb = s.tag_verb;
  out->tags = clone_each(s.tags);
  out->maintained = clone_or_null(s.maintained);
  out->maintained_columns = s.maintained_columns;
  return out;
}

StatementPtr clone_alter_tags(const AlterTagsStmt& s) {
  auto out = fresh<AlterTagsStmt>(s);
  out->object = s.object;
  out->name = s.name;
  out->verb = s.verb;
  out->tags = clone_each(s.tags);
  return out;
}

StatementPtr clone_refresh(const RefreshMaterializedViewStmt& s) {
  auto out = fresh<RefreshMaterializedViewStmt>(s);
  out->view = s.view;
  return out;
}

StatementPtr clone_pragma(const PragmaStmt& s) {
  auto out = fresh<PragmaStmt>(s);
  out->name = s.name;
  out->value = clone_or_null(s.value);
  return out;
}

StatementPtr clone_analyze(const AnalyzeStmt& s) {
  auto out = fresh<AnalyzeStmt>(s);
  out->schema = s.schema;
  out->table = s.table;
  out->all_in_schema = s.all_in_schema;
  return out;
}

StatementPtr clone_copy(const CopyStmt& s) {
  auto out = fresh<CopyStmt>(s);
  out->table = s.table;
  out->columns = s.columns;
  out->query = clone_or_null(s.query);
  out->to = s.to;
  out->path = s.path;
  out->options = s.options;
  return out;
}

StatementPtr clone_seed(const SeedStmt& s) {
  auto out = fresh<SeedStmt>(s);
  out->table = s.table;
  out->columns = s.columns;
  out->rows = clone_rows(s.rows);
  return out;
}

StatementPtr clone_declare_schema(const DeclareSchemaStmt& s) {
  auto out = fresh<DeclareSchemaStmt>(s);
  out->logical = s.logical;
  out->name = s.name;
  out->version = s.version;
  out->options = clone_each(s.options);
  out->items = clone_each(s.items);
  out->skipped_items = s.skipped_items;
  return out;
}

StatementPtr clone_declare_lens(const DeclareLensStmt& s) {
  auto out = fresh<DeclareLensStmt>(s);
  out->logical_schema = s.logical_schema;
  out->basis_schema = s.basis_schema;
  out->views.reserve(s.views.size());
  for (const auto& v : s.views) {
    DeclareLensStmt::View view;
    view.name = v.name;
    view.select = clone_or_null(v.select);
    view.site = v.site;
    out->views.push_back(std::move(view));
  }
  return out;
}

StatementPtr clone_apply_schema(const ApplySchemaStmt& s) {
  auto out = fresh<ApplySchemaStmt>(s);
  out->name = s.name;
  out->to_version = s.to_version;
  out->with_seed = s.with_seed;
  out->options = clone_each(s.options);
  return out;
}

// Statements with nothing but plain fields (transactions, DIFF / EXPLAIN SCHEMA).
template <class T>
StatementPtr copy_plain(const Statement& s) {
  return std::make_unique<T>(as<T>(s));
}

}  // namespace

StatementPtr clone(const Statement& s) {
  switch (s.kind) {
    case StmtKind::kSelect: return clone_select(as<SelectStmt>(s));
    case StmtKind::kInsert: return clone_insert(as<InsertStmt>(s));
    case StmtKind::kUpdate: return clone_update(as<UpdateStmt>(s));
    case StmtKind::kDelete: return clone_delete(as<DeleteStmt>(s));
    case StmtKind::kCreateTable: return clone_create_table(as<CreateTableStmt>(s));
    case StmtKind::kCreateIndex: return clone_create_index(as<CreateIndexStmt>(s));
    case StmtKind::kCreateView: return clone_create_view(as<CreateViewStmt>(s));
    case StmtKind::kCreateMaterializedView:
      return clone_create_materialized_view(as<CreateMaterializedViewStmt>(s));
    case StmtKind::kCreateAssertion: return clone_create_assertion(as<CreateAssertionStmt>(s));
    case StmtKind::kDrop: return clone_drop(as<DropStmt>(s));
    case StmtKind::kAlterTable: return clone_alter_table(as<AlterTableStmt>(s));
    case StmtKind::kAlterTags: return clone_alter_tags(as<AlterTagsStmt>(s));
    case StmtKind::kRefreshMaterializedView:
      return clone_refresh(as<RefreshMaterializedViewStmt>(s));
    case StmtKind::kBegin: return copy_plain<BeginStmt>(s);
    case StmtKind::kCommit: return copy_plain<CommitStmt>(s);
    case StmtKind::kRollback: return copy_plain<RollbackStmt>(s);
    case StmtKind::kSavepoint: return copy_plain<SavepointStmt>(s);
    case StmtKind::kRelease: return copy_plain<ReleaseStmt>(s);
    case StmtKind::kPragma: return clone_pragma(as<PragmaStmt>(s));
    case StmtKind::kAnalyze: return clone_analyze(as<AnalyzeStmt>(s));
    case StmtKind::kCopy: return clone_copy(as<CopyStmt>(s));
    case StmtKind::kDeclareSchema: return clone_declare_schema(as<DeclareSchemaStmt>(s));
    case StmtKind::kDeclareLens: return clone_declare_lens(as<DeclareLensStmt>(s));
    case StmtKind::kSeed: return clone_seed(as<SeedStmt>(s));
    case StmtKind::kApplySchema: return clone_apply_schema(as<ApplySchemaStmt>(s));
    case StmtKind::kDiffSchema: return copy_plain<DiffSchemaStmt>(s);
    case StmtKind::kExplainSchema: return copy_plain<ExplainSchemaStmt>(s);
  }
  unknown_kind("statement", static_cast<int>(s.kind));
}

StatementPtr clone_or_null(const StatementPtr& s) { return s ? clone(*s) : nullptr; }

}  // namespace quereus::ast
