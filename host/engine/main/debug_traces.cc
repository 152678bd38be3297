// The debug table-valued functions that run a query and report how it ran
// (functions.md "Debug/Explain Functions", usage.md "Debug Table-Valued Functions"):
// execution_trace(sql), row_trace(sql) and stack_trace(sql). Each plans the query as
// query_plan() does, runs an instrumented copy of that plan (runtime/execution_trace.h)
// inside the calling statement, discards its result rows and reports per operator.
// Operators are numbered as scheduler_program(sql) numbers its steps (`addr`), so the
// traces join against that listing. They are never deterministic (timings, and the
// data they read), and they run only a read-only SELECT.
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "catalog/registry.h"
#include "common/status.h"
#include "main/database_impl.h"
#include "main/introspection.h"
#include "optimizer/optimizer.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "runtime/execution_trace.h"
#include "transaction/assertion_explain.h"

namespace quereus {

namespace {

using Clock = std::chrono::steady_clock;

double ms(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }
double ms_since(Clock::time_point t) { return ms(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t)); }

// The kind of a statement, with its article, for the refusal of one that is not a SELECT.
const char* statement_name(ast::StmtKind k) {
  using K = ast::StmtKind;
  switch (k) {
    case K::kInsert: return "an INSERT";
    case K::kUpdate: return "an UPDATE";
    case K::kDelete: return "a DELETE";
    case K::kCreateTable: case K::kCreateIndex: case K::kCreateView: case K::kCreateMaterializedView:
    case K::kCreateAssertion: return "a CREATE";
    case K::kDrop: return "a DROP";
    case K::kAlterTable: case K::kAlterTags: return "an ALTER";
    case K::kRefreshMaterializedView: return "a REFRESH";
    case K::kBegin: case K::kCommit: case K::kRollback: case K::kSavepoint: case K::kRelease:
      return "a transaction-control";
    case K::kPragma: return "a PRAGMA";
    case K::kAnalyze: return "an ANALYZE";
    case K::kCopy: return "a COPY";
    default: return "a schema";
  }
}

// One query to trace: planned and optimized as query_plan() plans it, with the listing
// scheduler_program() shows for it.
struct TracedQuery {
  std::string fn;
  RelPtr plan;
  std::map<const RelNode*, int64_t> addr;  // plan node -> its instruction_index
  std::map<const RelNode*, std::string> operation;  // plan node -> query_plan's node_type
  double parse_ms = 0, plan_ms = 0, optimize_ms = 0;
};

TracedQuery prepare(DatabaseImpl& db, const std::string& fn, const Value& sql) {
  TracedQuery q;
  q.fn = fn;
  if (sql.is_null()) throw Error(StatusCode::kError, fn + "() needs the text of a SELECT statement, not NULL");
  const auto t0 = Clock::now();
  auto stmts = Parser::parse(sql.to_text());
  q.parse_ms = ms_since(t0);
  if (stmts.size() != 1) throw Error(StatusCode::kError, fn + "() takes exactly one SELECT statement");
  if (stmts[0]->kind != ast::StmtKind::kSelect)
    throw Error(StatusCode::kError, fn + "() runs the statement it traces, so it takes a read-only SELECT only; " +
                                        "this is " + statement_name(stmts[0]->kind) + " statement");
  const ast::Select& select = *static_cast<const ast::SelectStmt&>(*stmts[0]).select;
  auto refuse_write = [&fn]() {
    throw Error(StatusCode::kError, fn + "() runs the statement it traces, so it takes a read-only SELECT only; " +
                                        "this query writes (a data-modifying WITH member or subquery)");
  };
  if (select.with)
    for (const auto& cte : select.with->ctes)
      if (cte.select && cte.select->dml) refuse_write();
  const auto t1 = Clock::now();
  Planner planner(db);
  QueryPlan plan = planner.plan_select(select, nullptr);
  q.plan_ms = ms_since(t1);
  if (!planner.take_dml_prelude().empty() || plan_writes(*plan.root)) refuse_write();
  const auto t2 = Clock::now();
  Optimizer optimizer(db.options().optimizer);
  q.plan = optimizer.finish_query(optimizer.optimize(plan.root));
  q.optimize_ms = ms_since(t2);
  std::vector<const RelNode*> nodes;
  std::vector<Row> listing = plan_listing(*q.plan, &nodes);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i]) {
      q.addr[nodes[i]] = static_cast<int64_t>(nodes.size() - 1 - i);
      q.operation[nodes[i]] = listing[i][2].to_text();
    }
  return q;
}

// Runs the instrumented query to its end inside the calling statement, discarding its
// rows. The traced query sees no bound parameters (it is not the calling statement).
// Returns the time it took.
double run(const TracedQuery& q, ExecutionTracer& tracer, ExecContext& ctx) {
  RelPtr traced = instrument_plan(q.plan, tracer);
  const std::vector<Value> no_params;
  const std::map<std::string, Value> no_named;
  struct Restore {
    ExecContext& ctx;
    const std::vector<Value>* params;
    const std::map<std::string, Value>* named;
    ~Restore() {
      ctx.params = params;
      ctx.named_params = named;
    }
  } restore{ctx, ctx.params, ctx.named_params};
  ctx.params = &no_params;
  ctx.named_params = &no_named;
  const auto t0 = Clock::now();
  auto op = traced->instantiate();
  EvalEnv env{nullptr, nullptr, &ctx};
  op->open(env);
  Row r;
  while (op->next(r)) {
  }
  return ms_since(t0);
}

Value index_of(const TracedQuery& q, const ExecutionTracer& t, int op) {
  if (op < 0) return Value();
  auto it = q.addr.find(t.operators()[op].node);
  return it == q.addr.end() ? Value() : Value::Integer(it->second);
}

// The node type query_plan() shows for an operator (its node_type column).
Value operation_of(const TracedQuery& q, const TracedOperator& o) {
  auto it = q.operation.find(o.node);
  return Value::Text(it == q.operation.end() ? o.node->describe() : it->second);
}

class RowsCursor : public TableFunctionCursor {
 public:
  explicit RowsCursor(std::vector<Row> rows) : rows_(std::move(rows)) {}
  bool next(Row& out) override {
    if (i_ >= rows_.size()) return false;
    out = std::move(rows_[i_++]);
    return true;
  }

 private:
  std::vector<Row> rows_;
  size_t i_ = 0;
};

TableFunction trace_function(std::string name, std::vector<TableFunctionColumn> columns) {
  TableFunction f;
  f.name = std::move(name);
  f.num_args = 1;
  f.min_args = 1;
  f.flags = 0;  // never deterministic: timings, and the rows the query reads
  f.columns = std::move(columns);
  return f;
}

// execution_trace(sql): one row per operator, in instruction order.
std::vector<Row> execution_trace_rows(DatabaseImpl& db, ExecContext& ctx, const Value& sql) {
  TracedQuery q = prepare(db, "execution_trace", sql);
  ExecutionTracer tracer;
  run(q, tracer, ctx);
  const auto& ops = tracer.operators();
  std::vector<uint64_t> input_rows(ops.size(), 0);
  std::vector<std::chrono::nanoseconds> child_time(ops.size(), std::chrono::nanoseconds{0});
  std::vector<bool> leaf(ops.size(), true);
  for (const TracedOperator& o : ops)
    if (o.parent >= 0) {
      input_rows[o.parent] += o.rows;
      child_time[o.parent] += o.inclusive;
      leaf[o.parent] = false;
    }
  std::vector<Row> rows;
  for (size_t i = 0; i < ops.size(); ++i) {
    const TracedOperator& o = ops[i];
    auto self = o.inclusive - child_time[i];
    if (self.count() < 0) self = std::chrono::nanoseconds{0};
    rows.push_back({index_of(q, tracer, static_cast<int>(i)), index_of(q, tracer, o.parent),
                    operation_of(q, o), Value::Text(o.node->describe()),
                    Value::Integer(static_cast<int64_t>(o.opens)), Value::Integer(static_cast<int64_t>(o.next_calls)),
                    leaf[i] ? Value() : Value::Integer(static_cast<int64_t>(input_rows[i])),
                    Value::Integer(static_cast<int64_t>(o.rows)), Value::Real(ms(o.inclusive)), Value::Real(ms(self))});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a[0].as_int() < b[0].as_int(); });
  return rows;
}

// row_trace(sql): each row each operator produced, in the order they flowed; bounded.
std::vector<Row> row_trace_rows(DatabaseImpl& db, ExecContext& ctx, const Value& sql) {
  TracedQuery q = prepare(db, "row_trace", sql);
  ExecutionTracer tracer(true);
  run(q, tracer, ctx);
  std::vector<Value> names;
  for (const TracedOperator& o : tracer.operators()) names.push_back(operation_of(q, o));
  std::vector<Row> rows;
  for (const TracedRow& r : tracer.rows())
    rows.push_back({Value::Integer(static_cast<int64_t>(r.seq)), index_of(q, tracer, r.op), names[r.op],
                    Value::Integer(static_cast<int64_t>(r.row_index)), Value::Text(r.data)});
  if (tracer.rows_dropped())
    rows.push_back({Value::Integer(static_cast<int64_t>(rows.size())), Value(), Value::Text("truncated"), Value(),
                    Value::Text("{\"rows_not_recorded\":" + std::to_string(tracer.rows_dropped()) +
                                ",\"max_rows\":" + std::to_string(ExecutionTracer::kDefaultMaxRows) +
                                ",\"max_bytes\":" + std::to_string(ExecutionTracer::kDefaultMaxRowBytes) + "}")});
  return rows;
}

// stack_trace(sql): the frames the statement ran through: its stages (parse, plan,
// optimize, execute), and below `execute` the operator frames — every one when the query
// ran to its end, only those live when it failed (the error on the innermost).
std::vector<Row> stack_trace_rows(DatabaseImpl& db, ExecContext& ctx, const Value& sql) {
  TracedQuery q = prepare(db, "stack_trace", sql);
  ExecutionTracer tracer;
  std::optional<std::string> error;
  double execute_ms = 0;
  const auto t0 = Clock::now();
  try {
    execute_ms = run(q, tracer, ctx);
  } catch (const Error& e) {
    if (e.code() == StatusCode::kInterrupt) throw;
    error = e.raw_message();
    execute_ms = ms_since(t0);
  }
  std::vector<Row> rows;
  auto stage = [&](const char* name, double d, std::optional<std::string> err = std::nullopt) {
    rows.push_back({Value::Integer(static_cast<int64_t>(rows.size())), Value(), Value::Integer(0), Value::Text("stage"),
                    Value::Text(name), Value(), Value(), Value::Integer(1), Value::Real(d),
                    err ? Value::Text(*err) : Value()});
  };
  stage("parse", q.parse_ms);
  stage("plan", q.plan_ms);
  stage("optimize", q.optimize_ms);
  const int64_t execute_id = static_cast<int64_t>(rows.size());
  stage("execute", execute_ms, error);
  const auto& ops = tracer.operators();
  std::vector<int> frames;
  if (error) {
    frames = tracer.error_stack();
  } else {
    for (size_t i = 0; i < ops.size(); ++i) frames.push_back(static_cast<int>(i));
  }
  std::map<int, int64_t> frame_id;
  for (size_t k = 0; k < frames.size(); ++k) {
    const int op = frames[k];
    const TracedOperator& o = ops[op];
    const int64_t id = static_cast<int64_t>(rows.size());
    frame_id[op] = id;
    auto parent = frame_id.find(o.parent);
    const bool innermost = error && k + 1 == frames.size();
    rows.push_back({Value::Integer(id), Value::Integer(parent == frame_id.end() ? execute_id : parent->second),
                    Value::Integer(o.depth + 1), Value::Text("operator"), operation_of(q, o),
                    Value::Text(o.node->describe()), index_of(q, tracer, op),
                    Value::Integer(static_cast<int64_t>(o.opens + o.next_calls)), Value::Real(ms(o.inclusive)),
                    innermost ? Value::Text(*error) : Value()});
  }
  return rows;
}

template <typename Rows>
decltype(TableFunction::open) opener(Rows rows) {
  return [rows](DatabaseImpl& db, ExecContext& ctx, std::span<const Value> args,
                std::span<const TableFunctionColumn>) -> std::unique_ptr<TableFunctionCursor> {
    return std::make_unique<RowsCursor>(rows(db, ctx, args[0]));
  };
}

}  // namespace

void register_debug_trace_functions(Registry& r) {
  if (r.find_table_function("execution_trace")) return;  // registered by an earlier Database::Open
  TableFunction exec = trace_function(
      "execution_trace",
      {{"instruction_index", QRS_LT_INTEGER, true}, {"parent_index", QRS_LT_INTEGER, true},
       {"operation", QRS_LT_TEXT, false},       {"detail", QRS_LT_TEXT, false},
       {"opens", QRS_LT_INTEGER, false},        {"next_calls", QRS_LT_INTEGER, false},
       {"input_rows", QRS_LT_INTEGER, true},    {"output_rows", QRS_LT_INTEGER, false},
       {"duration_ms", QRS_LT_REAL, false},     {"self_ms", QRS_LT_REAL, false}});
  exec.open = opener(execution_trace_rows);
  r.add_table_function(std::move(exec), "builtin");

  TableFunction rows = trace_function(
      "row_trace", {{"seq", QRS_LT_INTEGER, false},  {"instruction_index", QRS_LT_INTEGER, true},
                    {"operation", QRS_LT_TEXT, false}, {"row_index", QRS_LT_INTEGER, true},
                    {"row_data", QRS_LT_TEXT, false}});
  rows.open = opener(row_trace_rows);
  r.add_table_function(std::move(rows), "builtin");

  TableFunction stack = trace_function(
      "stack_trace",
      {{"frame_id", QRS_LT_INTEGER, false},  {"parent_id", QRS_LT_INTEGER, true},
       {"depth", QRS_LT_INTEGER, false},     {"kind", QRS_LT_TEXT, false},
       {"name", QRS_LT_TEXT, false},         {"detail", QRS_LT_TEXT, true},
       {"instruction_index", QRS_LT_INTEGER, true}, {"calls", QRS_LT_INTEGER, false},
       {"duration_ms", QRS_LT_REAL, false},  {"error", QRS_LT_TEXT, true}});
  stack.open = opener(stack_trace_rows);
  r.add_table_function(std::move(stack), "builtin");
}

}  // namespace quereus
