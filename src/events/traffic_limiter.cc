#include "events/traffic_limiter.h"

#include <bit>

#include "common/check.h"
#include "common/mutex.h"

namespace adserver::events {

TrafficLimiter::TrafficLimiter(size_t entries)
    : entries_(std::bit_ceil(std::max<size_t>(entries, 2))),
      stripes_(std::make_unique<Mutex[]>(kStripes)) {}

bool TrafficLimiter::Hit(uint64_t key, std::span<const RateWindow> windows, int64_t now) {
  ADS_CHECK(windows.size() <= kMaxWindows) << "at most " << kMaxWindows << " rate windows";
  if (key == 0) key = 1;  // 0 marks a free entry
  // The pair (2i, 2i + 1) shares a stripe.
  const size_t pair = (key % entries_.size()) & ~size_t{1};
  MutexLock lock(stripes_[(pair / 2) % kStripes]);
  Entry* entry = nullptr;
  for (size_t i = pair; i < pair + 2; ++i) {
    if (entries_[i].key == key) entry = &entries_[i];
  }
  if (entry == nullptr) {
    entry = entries_[pair].last_seen <= entries_[pair + 1].last_seen ? &entries_[pair]
                                                                     : &entries_[pair + 1];
    *entry = Entry{.key = key};
  }
  entry->last_seen = now;
  bool over = false;
  for (size_t w = 0; w < windows.size(); ++w) {
    const RateWindow& window = windows[w];
    if (window.max <= 0 || window.seconds <= 0) continue;
    int64_t start = now - ((now % window.seconds) + window.seconds) % window.seconds;
    if (entry->window_start[w] != start) {
      entry->window_start[w] = start;
      entry->count[w] = 0;
    }
    if (entry->count[w] < UINT32_MAX) ++entry->count[w];
    if (entry->count[w] > window.max) over = true;
  }
  return over;
}

}  // namespace adserver::events
