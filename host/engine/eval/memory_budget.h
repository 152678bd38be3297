// MemoryBudget: the bytes one statement run may hold in the rows its operators buffer
// (sorts, hash and nested-loop join sides, groups, DISTINCT and set-operation sets,
// recursive CTE queues, window partitions, materialized subqueries and table functions).
//
// The statement arms the budget with Limits::max_statement_memory; each buffering operator
// keeps a MemoryCharge and adds every row it retains. Going over the limit throws
// Error(kNoMem) naming the limit, before the row is kept, so the statement fails like any
// other (its writes are undone) and the process never reaches the allocator's end. The
// count is an estimate of what the rows hold (cells plus text and blob payloads), not of
// every allocation the engine makes: streaming work is not counted, buffering is.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "types/value.h"

namespace quereus {

class MemoryBudget {
 public:
  // The counters, shared with the charges taken against them, so that an operator that
  // outlives its statement's context can still give its charge back (to nothing).
  struct State {
    int64_t limit = 0;
    int64_t used = 0;
    uint64_t epoch = 0;  // unique per run in the process
  };

  MemoryBudget() : state_(std::make_shared<State>()) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Starts a run: nothing used, `limit` bytes allowed (<= 0: unbounded). Charges taken
  // during an earlier run no longer count against this one.
  void arm(int64_t limit) {
    static std::atomic<uint64_t> next_epoch{1};
    state_->limit = limit;
    state_->used = 0;
    state_->epoch = next_epoch.fetch_add(1, std::memory_order_relaxed);
  }
  int64_t used() const { return state_->used; }
  const std::shared_ptr<State>& state() const { return state_; }

  // Counts `bytes` more against `state`; throws Error(kNoMem) when that goes over the limit.
  static void charge(State& state, int64_t bytes) {
    state.used += bytes;
    if (state.limit > 0 && state.used > state.limit) {
      state.used -= bytes;
      throw Error(StatusCode::kNoMem, "statement memory limit exceeded: the rows this statement buffers need more than " +
                                          std::to_string(state.limit) + " bytes (the limit max_statement_memory)");
    }
  }

 private:
  std::shared_ptr<State> state_;
};

// The bytes a buffered row holds: its cells, and the payload of each text, blob, JSON or
// big integer beyond the string's inline buffer.
inline int64_t row_bytes(const Row& row) {
  int64_t n = static_cast<int64_t>(sizeof(Row) + row.size() * sizeof(Value));
  for (const Value& v : row)
    if (v.has_bytes() && v.str().size() > 15) n += static_cast<int64_t>(v.str().size());
  return n;
}

// What one operator has charged to the budget of the run it is open in. The operator
// calls reset() each time it starts filling its buffer again; what it charged is given
// back then, and when the operator is destroyed — unless the budget has since started
// another run (its epoch is unique per run in the process), whose count it never joined.
class MemoryCharge {
 public:
  MemoryCharge() = default;
  // A copy (of a plan node that holds a charge) starts uncharged: what was counted stays
  // with the original.
  MemoryCharge(const MemoryCharge&) {}
  MemoryCharge& operator=(const MemoryCharge& other) {
    if (this != &other) give_back();
    return *this;
  }
  ~MemoryCharge() { give_back(); }

  void reset(MemoryBudget* budget) {
    give_back();
    state_ = budget ? budget->state() : nullptr;
    epoch_ = state_ ? state_->epoch : 0;
  }
  void add(int64_t bytes) {
    if (!state_) return;
    MemoryBudget::charge(*state_, bytes);
    bytes_ += bytes;
  }
  void add_row(const Row& row) {
    if (state_) add(row_bytes(row));
  }

 private:
  void give_back() {
    if (state_ && bytes_ && state_->epoch == epoch_) state_->used -= bytes_;
    bytes_ = 0;
  }
  std::shared_ptr<MemoryBudget::State> state_;
  uint64_t epoch_ = 0;
  int64_t bytes_ = 0;
};

// A charge for a buffer that lives within one call: given back at the end of the scope.
class ScopedCharge {
 public:
  explicit ScopedCharge(MemoryBudget* budget) { charge_.reset(budget); }
  void add_row(const Row& row) { charge_.add_row(row); }

 private:
  MemoryCharge charge_;
};

}  // namespace quereus
