#pragma once

// How a cluster node learns that something it follows changed (the inventory, wallet
// activity): a version that only grows. PostgreSQL's (PgChangeFeed: LISTEN/NOTIFY with a poll
// behind it) in production; cluster::ClusterNode opens feeds through this port, so its
// follower is tested with a fake.

#include <chrono>
#include <cstdint>

#include "common/status.h"

namespace adserver::store {

class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;
  // Waits until the version differs from `seen`, at most `timeout`, and returns the version
  // then (equal to `seen` after a quiet timeout); reads it at least every `poll`. Unavailable
  // while the engine cannot be reached. Not thread-safe.
  virtual Result<int64_t> WaitForChange(int64_t seen, std::chrono::milliseconds timeout,
                                        std::chrono::milliseconds poll) = 0;
};

}  // namespace adserver::store
