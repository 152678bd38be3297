// Runtime: the instrumentation behind the debug traces (stack_trace(), execution_trace(),
// row_trace(); main/debug_traces.cc). instrument_plan() copies an optimized plan with a
// TraceNode above every relational node; a TraceNode's operator forwards open() and
// next() to the operator it wraps and reports each call to one ExecutionTracer: calls,
// rows, inclusive wall time, the live frame stack and, when asked, every row.
//
// Only an instrumented copy pays for any of it. A statement's own plan is never
// instrumented, and no operator carries a hook or a flag: the normal path is unchanged.
// Subquery bodies evaluated inside expressions are not instrumented; their work counts in
// the time of the operator whose expression runs them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/rel_node.h"

namespace quereus {

// One instrumented plan node.
struct TracedOperator {
  const RelNode* node = nullptr;  // the node of the plan given to instrument_plan
  int parent = -1;                // the operator reading this one's rows (-1: the root)
  int depth = 0;                  // 0: the root
  uint64_t opens = 0;             // open() calls (a re-opened inner side counts each)
  uint64_t next_calls = 0;        // next() calls
  uint64_t rows = 0;              // rows produced (next() returning true)
  std::chrono::nanoseconds inclusive{0};  // time in open()/next(), its inputs included
};

// One row that left an operator (row_trace).
struct TracedRow {
  uint64_t seq = 0;        // 0-based, in the order rows flowed, across all operators
  int op = 0;              // index into ExecutionTracer::operators()
  uint64_t row_index = 0;  // 0-based ordinal among that operator's rows
  std::string data;        // the row as a JSON array of its values
};

// Collects what the TraceNodes of one instrumented plan report. Not thread-safe: one
// statement run at a time.
class ExecutionTracer {
 public:
  // Defaults of the row_trace bound: rows recorded, and bytes of their JSON text.
  static constexpr size_t kDefaultMaxRows = 10000;
  static constexpr size_t kDefaultMaxRowBytes = 4u << 20;

  // `capture_rows`: record each row (row_trace), up to `max_rows` rows and `max_bytes` of
  // row text; the rows past either bound are counted in rows_dropped(), not kept.
  explicit ExecutionTracer(bool capture_rows = false, size_t max_rows = kDefaultMaxRows,
                           size_t max_bytes = kDefaultMaxRowBytes)
      : capture_rows_(capture_rows), max_rows_(max_rows), max_bytes_(max_bytes) {}
  ExecutionTracer(const ExecutionTracer&) = delete;
  ExecutionTracer& operator=(const ExecutionTracer&) = delete;

  const std::vector<TracedOperator>& operators() const { return operators_; }
  const std::vector<TracedRow>& rows() const { return rows_; }
  uint64_t rows_dropped() const { return rows_dropped_; }
  // The frames (operator indexes, outermost first) live when an error first unwound
  // through an instrumented operator; empty when none did.
  const std::vector<int>& error_stack() const { return error_stack_; }
  // The deepest frame stack seen (number of nested operator calls).
  int max_depth() const { return max_depth_; }

  // Called by instrument_plan and the TraceNode operators.
  int add_operator(const RelNode* node, int parent, int depth);
  void enter(int op);
  // `unwinding`: an exception is leaving the frame.
  void leave(int op, std::chrono::nanoseconds elapsed, bool unwinding);
  void opened(int op) { ++operators_[op].opens; }
  void called(int op) { ++operators_[op].next_calls; }
  void produced(int op, const Row& row);

 private:
  bool capture_rows_;
  size_t max_rows_, max_bytes_;
  size_t bytes_ = 0;
  uint64_t seq_ = 0;
  uint64_t rows_dropped_ = 0;
  int max_depth_ = 0;
  std::vector<TracedOperator> operators_;
  std::vector<TracedRow> rows_;
  std::vector<int> stack_;
  std::vector<int> error_stack_;
};

// The kind of a TraceNode (planner/rel_node.h): only the runtime ever sees an instrumented plan.
inline constexpr RelKind kTraceKind = RelKind::kTrace;

// Sits above one node of an instrumented plan and reports its operator's calls.
struct TraceNode : RelNode {
  TraceNode() : RelNode(kTraceKind) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return input->describe(); }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;  // the node it instruments (a copy whose own inputs are TraceNodes)
  ExecutionTracer* tracer = nullptr;  // outlives every operator instantiated from this plan
  int op = 0;                          // index into tracer->operators()
};

// A copy of `root` with a TraceNode above every relational node, each registered with
// `tracer` in preorder (a node, then its inputs in children() order). `root` and `tracer`
// must outlive the copy and its operators. The copy shares `root`'s expressions.
RelPtr instrument_plan(const RelPtr& root, ExecutionTracer& tracer);

}  // namespace quereus
