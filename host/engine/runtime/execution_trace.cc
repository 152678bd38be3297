// Runtime: the debug traces' instrumentation (execution_trace.h): the TraceNode operator
// and the plan copy that places one above every node.
#include "runtime/execution_trace.h"

#include <exception>

#include "common/status.h"
#include "io/result_json.h"

namespace quereus {

int ExecutionTracer::add_operator(const RelNode* node, int parent, int depth) {
  TracedOperator t;
  t.node = node;
  t.parent = parent;
  t.depth = depth;
  operators_.push_back(t);
  return static_cast<int>(operators_.size()) - 1;
}

void ExecutionTracer::enter(int op) {
  stack_.push_back(op);
  if (static_cast<int>(stack_.size()) > max_depth_) max_depth_ = static_cast<int>(stack_.size());
}

void ExecutionTracer::leave(int op, std::chrono::nanoseconds elapsed, bool unwinding) {
  operators_[op].inclusive += elapsed;
  // The innermost frame an error leaves first holds the whole stack of that moment.
  if (unwinding && error_stack_.empty()) error_stack_ = stack_;
  if (!stack_.empty()) stack_.pop_back();
}

void ExecutionTracer::produced(int op, const Row& row) {
  const uint64_t index = operators_[op].rows++;
  if (!capture_rows_) return;
  const uint64_t seq = seq_++;
  if (rows_.size() >= max_rows_ || bytes_ >= max_bytes_) {
    ++rows_dropped_;
    return;
  }
  std::string data = "[";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) data += ',';
    data += json_value_text(row[i]);
  }
  data += ']';
  bytes_ += data.size();
  rows_.push_back({seq, op, index, std::move(data)});
}

namespace {

using Clock = std::chrono::steady_clock;

// One call into the instrumented operator: the frame is live for its duration.
class Frame {
 public:
  Frame(ExecutionTracer& t, int op) : t_(t), op_(op), exceptions_(std::uncaught_exceptions()), start_(Clock::now()) {
    t_.enter(op_);
  }
  ~Frame() {
    t_.leave(op_, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_),
             std::uncaught_exceptions() > exceptions_);
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

 private:
  ExecutionTracer& t_;
  int op_;
  int exceptions_;
  Clock::time_point start_;
};

class TraceOp : public Operator {
 public:
  explicit TraceOp(const TraceNode& n) : tracer_(*n.tracer), op_(n.op), input_(n.input->instantiate()) {}
  void open(const EvalEnv& outer) override {
    Frame frame(tracer_, op_);
    tracer_.opened(op_);
    input_->open(outer);
  }
  bool next(Row& out) override {
    Frame frame(tracer_, op_);
    tracer_.called(op_);
    if (!input_->next(out)) return false;
    tracer_.produced(op_, out);
    return true;
  }

 private:
  ExecutionTracer& tracer_;
  int op_;
  std::unique_ptr<Operator> input_;
};

class Instrumenter {
 public:
  explicit Instrumenter(ExecutionTracer& t) : t_(t) {}

  RelPtr wrap(const RelPtr& n, int parent, int depth) {
    if (!n) return n;
    const int op = t_.add_operator(n.get(), parent, depth);
    auto trace = std::make_shared<TraceNode>();
    trace->columns = n->columns;
    trace->keys = n->keys;
    trace->tracer = &t_;
    trace->op = op;
    trace->input = copy(n, op, depth + 1);
    return trace;
  }

 private:
  // A copy of node `n` (registered as `op`) whose inputs are instrumented, in children()
  // order; a leaf is used as it is.
  RelPtr copy(const RelPtr& n, int op, int depth) {
    switch (n->kind) {
      case RelKind::kFilter: return with<FilterNode>(n, op, depth, &FilterNode::input);
      case RelKind::kProject: return with<ProjectNode>(n, op, depth, &ProjectNode::input);
      case RelKind::kAggregate: return with<AggregateNode>(n, op, depth, &AggregateNode::input);
      case RelKind::kSort: return with<SortNode>(n, op, depth, &SortNode::input);
      case RelKind::kLimit: return with<LimitNode>(n, op, depth, &LimitNode::input);
      case RelKind::kDistinct: return with<DistinctNode>(n, op, depth, &DistinctNode::input);
      case RelKind::kWindow: return with<WindowNode>(n, op, depth, &WindowNode::input);
      case RelKind::kCache: return with<CacheNode>(n, op, depth, &CacheNode::input);
      case RelKind::kJoin: return with<JoinNode>(n, op, depth, &JoinNode::left, &JoinNode::right);
      case RelKind::kSemiJoin: return with<SemiJoinNode>(n, op, depth, &SemiJoinNode::left, &SemiJoinNode::right);
      case RelKind::kSetOp: return with<SetOpNode>(n, op, depth, &SetOpNode::left, &SetOpNode::right);
      case RelKind::kRecursiveCte:
        return with<RecursiveCteNode>(n, op, depth, &RecursiveCteNode::initial, &RecursiveCteNode::recursive);
      case RelKind::kTableScan:
      case RelKind::kValues:
      case RelKind::kSingleRow:
      case RelKind::kWorkingTable:
      case RelKind::kTableFunction:
      case RelKind::kDml: break;
      case RelKind::kTrace: throw Error(StatusCode::kInternal, "a plan is instrumented twice");
    }
    if (!n->children().empty())
      throw Error(StatusCode::kInternal, "instrument_plan: no copy for a plan node with inputs: " + n->describe());
    return n;
  }

  template <class N, class... Inputs>
  RelPtr with(const RelPtr& n, int op, int depth, Inputs N::*... inputs) {
    auto c = std::make_shared<N>(static_cast<const N&>(*n));
    (((*c).*inputs = wrap((*c).*inputs, op, depth)), ...);  // left to right: preorder
    return c;
  }

  ExecutionTracer& t_;
};

}  // namespace

std::unique_ptr<Operator> TraceNode::instantiate() const { return std::make_unique<TraceOp>(*this); }

RelPtr instrument_plan(const RelPtr& root, ExecutionTracer& tracer) { return Instrumenter(tracer).wrap(root, -1, 0); }

}  // namespace quereus
