#pragma once

// Leadership of one job across the nodes of a cluster (the live indexer of a chain). PostgreSQL's
// session advisory lock (PgLeaderLock) in production; cluster::ClusterIndexer opens its lock
// through this port, so its terms are tested with a fake.

#include "common/status.h"

namespace adserver::store {

class LeaderLock {
 public:
  virtual ~LeaderLock() = default;
  // True while this node leads: takes the lock when free, or confirms it still holds it. False
  // when another node leads or leadership was just lost; Unavailable when the engine cannot be
  // reached (then this node does not lead). Not thread-safe.
  virtual Result<bool> TryLead() = 0;
  // Gives leadership up (graceful shutdown: another node takes over at its next TryLead).
  virtual void Release() = 0;
};

}  // namespace adserver::store
