#include "common/rate_limiter.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "common/log.h"

namespace adserver {

RateLimiter::RateLimiter(size_t capacity)
    : mask_(std::bit_ceil(std::max<size_t>(capacity, 1)) - 1),
      slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

RateLimiter::Slot* RateLimiter::Find(int64_t publisher_id) {
  uint64_t h = static_cast<uint64_t>(publisher_id) * 0x9E3779B97F4A7C15ull;
  for (size_t probe = 0; probe <= mask_; ++probe) {
    Slot& slot = slots_[(h + probe) & mask_];
    int64_t owner = slot.publisher.load(std::memory_order_acquire);
    if (owner == publisher_id) return &slot;
    if (owner == 0) {
      int64_t expected = 0;
      if (slot.publisher.compare_exchange_strong(expected, publisher_id,
                                                 std::memory_order_acq_rel) ||
          expected == publisher_id) {
        return &slot;
      }
    }
  }
  return nullptr;
}

int64_t RateLimiter::Admit(int64_t publisher_id, double per_second, int64_t burst,
                           int64_t now_micros) {
  Slot* slot = Find(publisher_id);
  if (slot == nullptr) {
    if (!full_logged_.exchange(true)) {
      ADS_LOG(warn, "rate limiter table full: further keys are not limited", "capacity",
              mask_ + 1);
    }
    return 0;
  }
  const int64_t interval = std::max<int64_t>(1, std::llround(1e6 / per_second));
  const int64_t tolerance = interval * std::max<int64_t>(burst, 1);
  int64_t arrival = slot->arrival.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t next = std::max(arrival, now_micros) + interval;
    if (next - now_micros > tolerance) return next - tolerance - now_micros;
    if (slot->arrival.compare_exchange_weak(arrival, next, std::memory_order_relaxed)) return 0;
  }
}

}  // namespace adserver
