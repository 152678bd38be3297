// The debug traces' instrumentation (runtime/execution_trace.h) and the bounds of the
// functions over it (main/debug_traces.cc, docs/debug-traces.md).
#include <gtest/gtest.h>

#include <stdexcept>

#include "mem_db_test.h"

#include "runtime/execution_trace.h"

namespace quereus {
namespace {

// A leaf that yields `n` one-column rows, or throws at row `fail_at`.
class CountOp : public Operator {
 public:
  CountOp(int n, int fail_at) : n_(n), fail_at_(fail_at) {}
  void open(const EvalEnv&) override { i_ = 0; }
  bool next(Row& out) override {
    if (i_ == fail_at_) throw std::runtime_error("boom");
    if (i_ >= n_) return false;
    out = {Value::Integer(i_++)};
    return true;
  }

 private:
  int n_, fail_at_, i_ = 0;
};

struct CountNode : RelNode {
  CountNode(int n, int fail_at = -1) : RelNode(RelKind::kValues), n(n), fail_at(fail_at) {}
  std::unique_ptr<Operator> instantiate() const override { return std::make_unique<CountOp>(n, fail_at); }
  std::string describe() const override { return "COUNT"; }
  int n, fail_at;
};

RelPtr filter_over(RelPtr input) {
  auto f = std::make_shared<FilterNode>();
  f->input = std::move(input);
  f->predicate = std::make_shared<LiteralScalar>(Value::Boolean(true));
  return f;
}

int64_t drain(const RelPtr& plan) {
  auto op = plan->instantiate();
  op->open(EvalEnv{});
  Row r;
  int64_t n = 0;
  while (op->next(r)) ++n;
  return n;
}

TEST(ExecutionTracer, CountsCallsAndRowsPerOperatorInPreorder) {
  RelPtr leaf = std::make_shared<CountNode>(3);
  RelPtr plan = filter_over(leaf);
  ExecutionTracer tracer;
  RelPtr traced = instrument_plan(plan, tracer);
  EXPECT_EQ(drain(traced), 3);
  ASSERT_EQ(tracer.operators().size(), 2u);
  const TracedOperator& root = tracer.operators()[0];
  const TracedOperator& scan = tracer.operators()[1];
  EXPECT_EQ(root.node, plan.get());
  EXPECT_EQ(root.parent, -1);
  EXPECT_EQ(scan.node, leaf.get());
  EXPECT_EQ(scan.parent, 0);
  EXPECT_EQ(scan.depth, 1);
  EXPECT_EQ(root.opens, 1u);
  EXPECT_EQ(root.next_calls, 4u);
  EXPECT_EQ(root.rows, 3u);
  EXPECT_EQ(scan.rows, 3u);
  EXPECT_GE(root.inclusive, scan.inclusive);
  EXPECT_EQ(tracer.max_depth(), 2);
  EXPECT_TRUE(tracer.rows().empty());  // rows are kept only when asked
  EXPECT_TRUE(tracer.error_stack().empty());
}

TEST(ExecutionTracer, LeavesTheOriginalPlanUninstrumented) {
  RelPtr plan = filter_over(std::make_shared<CountNode>(2));
  ExecutionTracer tracer;
  RelPtr traced = instrument_plan(plan, tracer);
  EXPECT_EQ(static_cast<const FilterNode&>(*plan).input->kind, RelKind::kValues);
  EXPECT_EQ(drain(plan), 2);
  EXPECT_EQ(tracer.operators()[0].rows, 0u);  // the plain run reported nothing
  EXPECT_THROW(instrument_plan(traced, tracer), Error);
}

TEST(ExecutionTracer, KeepsRowsUpToItsBoundsAndCountsTheRest) {
  ExecutionTracer by_rows(true, 4, 1 << 20);
  EXPECT_EQ(drain(instrument_plan(filter_over(std::make_shared<CountNode>(5)), by_rows)), 5);
  EXPECT_EQ(by_rows.rows().size(), 4u);
  EXPECT_EQ(by_rows.rows_dropped(), 6u);  // 10 rows flowed (5 per operator)
  EXPECT_EQ(by_rows.rows()[0].data, "[0]");
  EXPECT_EQ(by_rows.rows()[0].op, 1);  // the leaf's row flows first
  EXPECT_EQ(by_rows.rows()[1].op, 0);

  ExecutionTracer by_bytes(true, 1000, 7);  // "[0]" and "[0]" reach 6 bytes, "[1]" 9
  drain(instrument_plan(filter_over(std::make_shared<CountNode>(5)), by_bytes));
  EXPECT_EQ(by_bytes.rows().size(), 3u);
  EXPECT_EQ(by_bytes.rows_dropped(), 7u);
}

TEST(ExecutionTracer, RecordsTheFramesLiveWhenAnErrorUnwinds) {
  ExecutionTracer tracer;
  RelPtr traced = instrument_plan(filter_over(std::make_shared<CountNode>(5, 2)), tracer);
  EXPECT_THROW(drain(traced), std::runtime_error);
  EXPECT_EQ(tracer.error_stack(), (std::vector<int>{0, 1}));
  EXPECT_EQ(tracer.operators()[1].rows, 2u);
}

class DebugTraceSqlTest : public MemDbTest {};

TEST_F(DebugTraceSqlTest, RowTraceStopsKeepingRowsPastItsByteBound) {
  // A 40,000-byte blob renders as ~300 KB of JSON: 50 of them pass 4 MiB of row text
  // long before 10,000 rows.
  auto rows = query("select count(*), sum(case when operation = 'truncated' then 1 else 0 end) from row_trace("
                    "'select value, zeroblob(40000) from generate_series(1, 50)')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_LT(rows[0][0].as_int(), 100);
  EXPECT_EQ(rows[0][1].as_int(), 1);
}

TEST_F(DebugTraceSqlTest, TracesRunInsideTheCallingTransaction) {
  exec("create table t (id integer primary key)");
  exec("begin; insert into t values (1), (2)");
  auto rows = query("select output_rows from execution_trace('select id from t') where parent_index is null");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 2);
  exec("rollback");
}

}  // namespace
}  // namespace quereus
