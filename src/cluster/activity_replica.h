#pragma once

// A node's replica of the cluster's wallet activity (issue 17 item 4): keeps the local LMDB
// index, which serves every lookup without leaving the process, equal to PostgreSQL's
// wallet_activity (store/postgres/postgres_activity_store.h), the source of truth.
//
// The index records the change log position it reflects in the same LMDB transaction as the
// changes. Without one (a new node, a bootstrap cut short) or when the log was pruned past it
// (a node down longer than the log's retention), the replica bootstraps from a PostgreSQL
// snapshot: an empty index is loaded with LoadSorted (packed appends), a non-empty one gets
// only the wallets that differ (ReplaceSorted, lookups go on). It then follows the log; every
// applied batch moves the index's change counter, so the read cache refresh sees it.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "store/lmdb/lmdb_activity_index.h"
#include "store/postgres/postgres_activity_store.h"

namespace adserver::cluster {

struct ActivityReplicaOptions {
  // Log entries read per ChangesAfter and applied per LMDB write transaction.
  size_t changes_per_batch = 10'000;
  // Rows fetched per round trip while bootstrapping.
  size_t snapshot_rows_per_fetch = 50'000;
};

// Not thread-safe: one thread calls Step(); position() and stats() may be read from any thread.
class ActivityReplica {
 public:
  // `source` and `index` must outlive this.
  ActivityReplica(store::PostgresActivityStore& source, store::LmdbActivityIndex& index,
                  const ActivityReplicaOptions& options = {});

  // Brings the index up to PostgreSQL: bootstraps when needed (see above; blocks for as long
  // as the bootstrap takes), then applies every change logged since the index's position.
  // Unavailable while PostgreSQL cannot be reached; the index keeps what it applied (and its
  // position) and the next Step goes on from there.
  Status Step();

  // The change log seq the index reflects (0 before the first Step).
  int64_t position() const { return position_.load(std::memory_order_relaxed); }
  struct Stats {
    uint64_t bootstraps = 0;       // snapshots loaded (a first start included)
    uint64_t changes_applied = 0;  // log entries applied since construction
  };
  Stats stats() const;

 private:
  Status Bootstrap();
  // Applies the log after position_; NotFound if it was pruned past it.
  Status FollowLog();

  store::PostgresActivityStore& source_;
  store::LmdbActivityIndex& index_;
  const ActivityReplicaOptions options_;
  bool started_ = false;  // the index's stored position was read
  std::atomic<int64_t> position_{0};
  std::atomic<uint64_t> bootstraps_{0};
  std::atomic<uint64_t> changes_applied_{0};
};

}  // namespace adserver::cluster
