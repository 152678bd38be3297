#include "write/dml_relation.h"

#include "common/status.h"

namespace quereus {

void DmlRun::ensure(ExecContext& ctx) {
  if (ran && generation == ctx.generation) return;
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
