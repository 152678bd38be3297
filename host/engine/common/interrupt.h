// InterruptCheck: how a running statement notices Database::interrupt() and its timeout.
//
// Long-running loops (scans, joins, sorts, aggregation, recursive CTEs, windows) call
// poll() once per row or step; every kInterval calls it reads the atomic flag and the
// clock and throws Error(INTERRUPT) when the flag is set or the deadline has passed.
// An unarmed check (the default) never throws.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace quereus {

class InterruptCheck {
 public:
  // Arms the check for one statement run: `flag` (may be null) is read on every slow
  // poll; `timeout_ms` > 0 sets a deadline that long from now.
  void arm(const std::atomic<bool>* flag, int64_t timeout_ms);
  void disarm() { armed_ = false; }

  void poll() {
    if (armed_ && ++count_ >= kInterval) poll_now();
  }
  // Checks at once (e.g. before an expensive step). Throws Error(kInterrupt).
  void poll_now();

 private:
  static constexpr uint32_t kInterval = 256;
  bool armed_ = false;
  uint32_t count_ = 0;
  const std::atomic<bool>* flag_ = nullptr;
  int64_t timeout_ms_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
};

}  // namespace quereus
