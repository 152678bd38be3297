#include "write/dml_relation.h"

#include "common/status.h"

namespace quereus {

namespace {

// How many data-changing statements in expression position are running on this thread,
// one inside another. A CHECK or DEFAULT whose statement writes the table it guards
// (allowed under pragma nondeterministic_schema) would otherwise recurse until the stack
// ran out.
thread_local int nested_runs = 0;
constexpr int kMaxNestedRuns = 32;

}  // namespace

void DmlRun::ensure(ExecContext& ctx) {
  if (ran && generation == ctx.generation) return;
  if (nested_runs >= kMaxNestedRuns)
    throw Error(StatusCode::kError, std::string("data-changing statements nest too deeply (") + verb + " at depth " +
                                        std::to_string(kMaxNestedRuns) +
                                        "): a CHECK, DEFAULT or view whose statement writes the table it is evaluated for?");
  struct Depth {
    Depth() { ++nested_runs; }
    ~Depth() { --nested_runs; }
  } depth;
  rows.clear();
  ran = false;
  exec->start(ctx);
  Row r;
  while (exec->next(r)) rows.push_back(std::move(r));
  generation = ctx.generation;
  ran = true;
}

namespace {

class DmlRelOp : public Operator {
 public:
  explicit DmlRelOp(const DmlRelNode& n) : node_(n) {}
  void open(const EvalEnv& outer) override {
    if (!outer.ctx) throw Error(StatusCode::kInternal, "DML relation opened without an execution context");
    node_.run->ensure(*outer.ctx);
    i_ = 0;
  }
  bool next(Row& out) override {
    if (i_ >= node_.run->rows.size()) return false;
    out = node_.run->rows[i_++];
    return true;
  }

 private:
  const DmlRelNode& node_;
  size_t i_ = 0;
};

}  // namespace

std::unique_ptr<Operator> DmlRelNode::instantiate() const { return std::make_unique<DmlRelOp>(*this); }

std::string DmlRelNode::describe() const { return std::string("DML ") + run->verb + " RETURNING (run once)"; }

void run_dml_prelude(const std::vector<std::shared_ptr<DmlRun>>& runs, ExecContext& ctx) {
  for (const auto& r : runs) r->ensure(ctx);
}

}  // namespace quereus
