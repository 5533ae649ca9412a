#pragma once

// Request rate limits per operator-created key (issue 18: publishers on the ad path, admin API
// callers): the generic cell rate algorithm, a token bucket kept as one "theoretical arrival
// time" per key, advanced by compare-and-swap. No lock, no allocation after a key's first
// request. The table holds at most `capacity` keys; keys must not be client-invented (a key
// beyond the table is not limited, and logged once).

#include <atomic>
#include <cstdint>
#include <memory>

namespace adserver {

class RateLimiter {
 public:
  // `capacity` is rounded up to a power of two.
  explicit RateLimiter(size_t capacity = 4096);

  // 0 when a request of `publisher_id` (any key > 0) may pass at `now_micros` (and counts it), else
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

}  // namespace adserver
