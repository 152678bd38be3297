// Planner: INSERT / UPDATE / DELETE … RETURNING used as a relation (a FROM source, a CTE
// body, a scalar / IN / EXISTS subquery). The statement is planned as its own Executable
// (core/statement_planner.cc) and appears in the plan as a table-function node whose rows
// are the RETURNING rows. The write runs once per execution of the enclosing statement,
// inside its transaction, however often the node is re-opened.
#include "common/status.h"
#include "core/executable.h"
#include "planner/planner.h"

namespace quereus {

namespace {

const std::vector<ast::ResultColumn>& returning_of(const ast::Statement& dml) {
  switch (dml.kind) {
    case ast::StmtKind::kInsert: return static_cast<const ast::InsertStmt&>(dml).returning;
    case ast::StmtKind::kUpdate: return static_cast<const ast::UpdateStmt&>(dml).returning;
    default: return static_cast<const ast::DeleteStmt&>(dml).returning;
  }
}

const char* verb_of(const ast::Statement& dml) {
  return dml.kind == ast::StmtKind::kInsert ? "insert" : dml.kind == ast::StmtKind::kUpdate ? "update" : "delete";
}

// The write's state across re-opens: the rows of the execution (by generation) that ran it.
struct DmlRun {
  std::unique_ptr<Executable> exec;
  uint64_t generation = 0;
  bool ran = false;
  std::vector<Row> rows;
};

}  // namespace

QueryPlan Planner::plan_dml_relation(const ast::Statement& dml) {
  if (returning_of(dml).empty())
    throw Error(StatusCode::kError,
                std::string("A ") + verb_of(dml) + " statement used as a relation must have a RETURNING clause",
                dml.site);
  auto run = std::make_shared<DmlRun>();
  run->exec = plan_statement(db_, dml);
  auto fn = std::make_shared<TableFunction>();
  fn->name = verb_of(dml);
  fn->flags = 0;  // writes: never folded, cached or reordered as a pure source
  const std::vector<std::string>& names = run->exec->names();
  std::vector<qrs_logical_type> types = run->exec->types();
  types.resize(names.size(), QRS_LT_ANY);
  for (size_t i = 0; i < names.size(); ++i) fn->columns.push_back({names[i], types[i], true});
  fn->rows_in_context = [run](ExecContext& ctx, std::span<const Value>) {
    if (!run->ran || run->generation != ctx.generation) {
      run->rows.clear();
      run->exec->start(ctx);
      Row r;
      while (run->exec->next(r)) run->rows.push_back(r);
      run->ran = true;
      run->generation = ctx.generation;
    }
    return run->rows;
  };
  auto node = std::make_shared<TableFunctionNode>();
  node->fn = fn.get();
  node->owned_fn = fn;
  QueryPlan out;
  for (size_t i = 0; i < names.size(); ++i) {
    Attribute a;
    a.id = mint_attr();
    a.name = names[i];
    a.type = types[i];
    a.nullable = true;
    node->columns.push_back(a);
    out.names.push_back(names[i]);
  }
  out.root = node;
  return out;
}

}  // namespace quereus
