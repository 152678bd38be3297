#include "common/interrupt.h"

#include <string>

#include "common/status.h"

namespace quereus {

void InterruptCheck::arm(const std::atomic<bool>* flag, int64_t timeout_ms) {
  flag_ = flag;
  timeout_ms_ = timeout_ms > 0 ? timeout_ms : 0;
  if (timeout_ms_ > 0) deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  count_ = 0;
  armed_ = flag_ != nullptr || timeout_ms_ > 0;
}

void InterruptCheck::poll_now() {
  count_ = 0;
  if (!armed_) return;
  if (flag_ && flag_->load(std::memory_order_relaxed)) throw Error(StatusCode::kInterrupt, "interrupted");
  if (timeout_ms_ > 0 && std::chrono::steady_clock::now() >= deadline_) {
    throw Error(StatusCode::kInterrupt,
                "interrupted: statement timeout of " + std::to_string(timeout_ms_) + " ms (statement_timeout_ms)");
  }
}

}  // namespace quereus
