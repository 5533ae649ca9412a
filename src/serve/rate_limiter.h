#pragma once

// Per-publisher request rate limits (issue 18): the generic cell rate algorithm, a token bucket
// kept as one "theoretical arrival time" per publisher, advanced by compare-and-swap. No lock,
// no allocation after a publisher's first request; publishers without a limit never reach it.
// The table holds at most `capacity` publishers (operator-created, not client-triggered); a
// publisher beyond it is not limited (and logged once).

#include <atomic>
#include <cstdint>
#include <memory>

namespace adserver::serve {

class RateLimiter {
 public:
  // `capacity` is rounded up to a power of two.
  explicit RateLimiter(size_t capacity = 4096);

  // 0 when a request of `publisher_id` (> 0) may pass at `now_micros` (and counts it), else
  // how many microseconds until one may. `per_second` > 0 requests are let through on average,
  // at most `burst` (>= 1) at once.
  int64_t Admit(int64_t publisher_id, double per_second, int64_t burst, int64_t now_micros);

 private:
  struct Slot {
    std::atomic<int64_t> publisher{0};  // 0 = free
    std::atomic<int64_t> arrival{0};    // theoretical arrival time of the next request, µs
  };
  Slot* Find(int64_t publisher_id);

  size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<bool> full_logged_{false};
};

}  // namespace adserver::serve
