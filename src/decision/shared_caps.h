#pragma once

// Frequency caps shared by the nodes of a cluster (issue 17 item 6) without a round trip on the
// ad path. Each node keeps counting in its own FrequencyCaps (what Decide reads) and queues every
// capped impression; a background Sync() sends the queued increments, summed per (wallet,
// campaign), to a shared CapCounterStore (Redis in cluster mode) in one batch, reads back each
// pair's cluster-wide count in its current window, and raises the local counts to it. Pairs
// served here recently are read again at every sync even without new impressions, so what other
// nodes serve to a person active here arrives within one sync interval.
//
// Bound: a node learns of the other nodes' impressions at most one sync interval (plus one
// round trip) late. So with N nodes, a person can be served at most N x (the impressions one
// node serves them in one interval) over a cap; with people seeing a few ads a minute and a
// 250 ms interval that is usually nothing, and at most N - 1 more at the very moment they reach
// the cap on several nodes at once. When the store cannot be reached, caps stay local (each node
// enforces them on what it served); the queue is bounded and its oldest entries are dropped.

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/address.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_shards.h"
#include "decision/frequency_caps.h"

namespace adserver::decision {

struct CapIncrement {
  Address wallet;
  int64_t campaign_id = 0;
  int32_t hours = 0;  // the cap's window
  uint32_t add = 0;   // impressions to add; 0 only reads
};

// The shared counters. Implementations are thread-safe; calls block on I/O (Unavailable when
// the store cannot be reached).
class CapCounterStore {
 public:
  virtual ~CapCounterStore() = default;
  // Adds every increment (a pair's window opens at its first impression anywhere and lasts
  // `hours`) and returns each pair's count in its current window, in order: one batch.
  virtual Result<std::vector<uint32_t>> AddAndRead(std::span<const CapIncrement> increments) = 0;
};

class SharedFrequencyCaps {
 public:
  // `max_pending`: queued impressions kept per thread between syncs; `recent` and
  // `recent_seconds`: the pairs read again at every sync (served here within that time, at most
  // that many).
  SharedFrequencyCaps(FrequencyCaps& local, CapCounterStore& store, size_t max_pending = 65536,
                      size_t recent = 4096, int64_t recent_seconds = 60);

  // Serving path, after FrequencyCaps::Record of the same impression: queues it. Takes only the
  // calling thread's uncontended lock; no I/O.
  void Queue(std::span<const Address> wallets, int64_t campaign_id, int32_t hours);

  // Background: one batch to the store, then the local counts raised to the cluster's. On an
  // error the taken increments are queued again (bounded), so none is lost while the store is
  // briefly away.
  Status Sync(int64_t now);

  uint64_t dropped() const;

 private:
  struct Shard {
    Mutex mu;
    std::vector<CapIncrement> pending ADS_GUARDED_BY(mu);
    uint64_t dropped ADS_GUARDED_BY(mu) = 0;
  };
  struct PairKey {
    Address wallet;
    int64_t campaign_id;
    bool operator==(const PairKey&) const = default;
  };
  struct PairHash {
    size_t operator()(const PairKey& k) const {
      return static_cast<size_t>(HashAddress(k.wallet, static_cast<uint64_t>(k.campaign_id)));
    }
  };

  FrequencyCaps& local_;
  CapCounterStore& store_;
  const size_t max_pending_;
  const size_t recent_max_;
  const int64_t recent_seconds_;
  mutable ThreadShards<Shard> shards_;
  Mutex sync_mu_;  // one Sync at a time
  struct Recent {
    int32_t hours = 0;        // the cap's window
    int64_t last_served = 0;  // Unix seconds
  };
  // Pairs to read again at every sync.
  std::unordered_map<PairKey, Recent, PairHash> recent_ ADS_GUARDED_BY(sync_mu_);
};

}  // namespace adserver::decision
