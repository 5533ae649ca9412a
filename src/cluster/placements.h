#pragma once

// Per-placement learning across a cluster (issue 36 item 6). A campaign's rate is the whole
// cluster's (the nodes' counters are summed), but its factor on a publisher
// (decision/placement_rates.h) came from the node's own traffic after start-up: with N nodes
// behind a balancer each learned from 1/N of the clicks and conversions, and a conversion is
// counted only by the node that recorded it. Here each node keeps its absolute counts per
// (campaign, publisher) in PostgreSQL (store::PlacementCountersStore) and feeds what the other
// nodes' rows gained into its PlacementFeed, where they join its own counts (and are forgotten
// with them).
//
// Reads follow the rows' seq (one PostgreSQL sequence): each sync reads the rows written since
// the sync before the previous one (not only since the previous one), so that a
// write whose seq was drawn before another's but committed after it is still read (a row is
// absolute: reading it twice feeds nothing twice, and a row missed for longer is caught up by
// its next write). Memory is bounded: at most `max_pairs` own pairs are shared (ad units at most
// half of them: further units' counts are shared under their publisher), and 4 x that of the
// other nodes' rows followed; the rest is counted as dropped.

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "decision/placement_rates.h"
#include "store/placement_counters_store.h"

namespace adserver::cluster {

class ClusterPlacements {
 public:
  ClusterPlacements(store::PlacementCountersStore& store, size_t max_pairs);

  // Before serving: this node's saved rows (its counts continue from them), and the other
  // nodes' rows as they are now, which the start-up's seeding from the hour rollups already
  // counted: only what they gain from now on is fed.
  Status Start();
  // This node counted `impressions` and `events` of `key` (thread-safe; off the request path).
  void Note(const decision::PlacementKey& key, int64_t impressions, int64_t events);
  // Saves this node's changed rows and feeds what the other nodes' rows gained into `feed`.
  // One thread at a time.
  Status Sync(decision::PlacementFeed& feed);

  // Pairs turned away by the bounds (own and others').
  int64_t dropped() const;
  size_t own_pairs() const;
  // The other nodes' rows followed.
  size_t followed_rows() const { return followed_.load(std::memory_order_relaxed); }

 private:
  struct Count {
    int64_t impressions = 0;
    int64_t events = 0;
    bool dirty = false;
  };
  struct SeenKey {
    uint32_t node = 0;
    decision::PlacementKey key;
    bool operator==(const SeenKey&) const = default;
  };
  struct SeenHash {
    size_t operator()(const SeenKey& k) const noexcept {
      return decision::PlacementKeyHash{}(k.key) * 31 + k.node;
    }
  };
  // Reads the other nodes' rows after `after`; feeds their gains unless `feed` is null.
  // Returns the highest seq read (`after` when none) and whether the read was cut at the limit.
  Result<std::pair<int64_t, bool>> ReadOthers(int64_t after, decision::PlacementFeed* feed);

  store::PlacementCountersStore& store_;
  const size_t max_pairs_;
  mutable Mutex mu_;
  std::unordered_map<decision::PlacementKey, Count, decision::PlacementKeyHash> own_
      ADS_GUARDED_BY(mu_);
  size_t own_units_ ADS_GUARDED_BY(mu_) = 0;  // keys of own_ with an ad unit
  int64_t dropped_own_ ADS_GUARDED_BY(mu_) = 0;
  // Sync thread only.
  std::unordered_map<std::string, uint32_t> nodes_;
  std::unordered_map<SeenKey, Count, SeenHash> seen_;
  std::atomic<int64_t> dropped_seen_{0};
  std::atomic<size_t> followed_{0};
  int64_t watermark_ = 0;  // the highest seq read
  int64_t read_from_ = 0;  // the next read starts after it (the sync before's watermark)
};

}  // namespace adserver::cluster
