#pragma once

// Per-key rate limits of clicks and advertiser events (issue 18): fixed windows (e.g. 1 a
// minute, 3 per 10 minutes, 10 an hour, 25 a day) counted in a table of fixed size, so that
// clients creating any number of keys (addresses, people) cannot grow memory. A key lives in
// one of two entries chosen by its hash; a new key takes the one used least recently, which
// forgets that key's counts (a forgotten key is under-counted, never wrongly limited).
// Thread-safe: entries are guarded by striped mutexes held for a few instructions.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/mutex.h"
#include "events/traffic_options.h"

namespace adserver::events {

class TrafficLimiter {
 public:
  static constexpr size_t kMaxWindows = 4;

  // `entries` is rounded up to a power of two (at least 2).
  explicit TrafficLimiter(size_t entries);

  // Counts one event of `key` (a well-mixed hash, never 0) at `now` (Unix seconds) in each of
  // `windows` (at most kMaxWindows; those with max 0 are off) and returns true when any window
  // now holds more than its max. The same key must always come with the same windows.
  bool Hit(uint64_t key, std::span<const RateWindow> windows, int64_t now);

  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t key = 0;  // 0 = free
    int64_t last_seen = 0;
    int64_t window_start[kMaxWindows] = {};
    uint32_t count[kMaxWindows] = {};
  };
  static constexpr size_t kStripes = 256;

  std::vector<Entry> entries_;  // guarded by stripes_[(index / 2) % kStripes]
  std::unique_ptr<Mutex[]> stripes_;
};

}  // namespace adserver::events
