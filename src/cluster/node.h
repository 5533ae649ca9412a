#pragma once

// The cluster side of one `adserver serve` node (issue 17, docs/deploy.md). Works through ports
// (ClusterPorts: the cluster's counters, budget authority, cap counters, change feeds and
// per-placement rows), which ClusterNode::Open connects to PostgreSQL and Redis and tests fill
// with fakes (issue 41 item 2), and runs background threads; nothing here runs on the ad path,
// which reads only in-process state:
// - the change follower: LISTENs for inventory writes of any node (PgChangeFeed, with a version
//   poll behind it) and wakes the snapshot publisher, so a write anywhere is served everywhere
//   within about a second;
// - the sync loop: tops up budget leases from Redis (decision/budget_leases.h), sends queued
//   frequency-cap impressions to Redis and raises local counts to the cluster's
//   (decision/shared_caps.h), and reads the other nodes' counters from PostgreSQL into
//   `others` (budgets, pacing and learned rates see the cluster's spend).
// Degradations (PostgreSQL or Redis unreachable) are logged once when they start and end, and
// reported by Health() for /readyz; serving never waits on either.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "cluster/placements.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/status.h"
#include "decision/budget_leases.h"
#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/live_state.h"
#include "decision/shared_caps.h"
#include "store/change_feed.h"
#include "store/cluster_options.h"
#include "store/node_counters_store.h"
#include "store/placement_counters_store.h"

namespace adserver::store {
class PostgresStore;
}

namespace adserver::cluster {

// `host:port`-style default node id: the host name and the listen port.
std::string DefaultNodeId(const std::string& listen);

// The engines a node works through. Each must outlive the node.
struct ClusterPorts {
  // The other nodes' counters, dead nodes' reconciliation, the CLI's queued budget takes.
  store::NodeCountersStore* counters = nullptr;
  decision::BudgetAuthority* authority = nullptr;  // budget leases
  decision::CapCounterStore* caps = nullptr;       // shared frequency caps
  // Opens a feed of its own following `name` ("inventory", "activity").
  std::function<Result<std::unique_ptr<store::ChangeFeed>>(const std::string& name)> open_feed;
  // Opens this node's per-placement rows (SharePlacements).
  std::function<Result<std::unique_ptr<store::PlacementCountersStore>>()> open_placements;
};

class ClusterNode {
 public:
  // Connects to Redis (two connections: leases and caps) and PostgreSQL (the counters of this
  // node; change feeds and placement rows when asked for), owned by the node. Unavailable
  // naming the engine that cannot be reached.
  static Result<std::unique_ptr<ClusterNode>> Open(const store::ClusterOptions& options,
                                                   std::string node_id, const Clock& clock);
  // A node over `ports` (each must outlive it): tests with fakes.
  ClusterNode(ClusterPorts ports, const store::ClusterOptions& options, std::string node_id,
              const Clock& clock);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  const std::string& node_id() const { return node_id_; }
  // A node made by Open: this node's decision counters (CampaignCounterStore of
  // node_campaign_counters) for the counter flusher.
  store::PostgresStore& counters();

  // Puts leases, shared caps and the other nodes' counters into `live` (before serving);
  // `inventory_changed` is called when another node changed the inventory (the snapshot
  // publisher rebuilds). `live` and `catalogs` must outlive this object's Stop().
  void Attach(decision::LiveState& live, const Published<decision::Catalog>& catalogs,
              std::function<void()> inventory_changed);
  // One sync round now (start-up: leases are held before the first request).
  void SyncNow();
  // Issue 36 item 6: shares this node's per-placement counts with the other nodes (PostgreSQL,
  // node_placement_counters) and feeds theirs into the attached LiveState's placement feed every
  // second (cluster/placements.h). After Attach and the start-up's seeding from the
  // rollups, before Start. `max_pairs`: the pairs this node shares.
  Status SharePlacements(size_t max_pairs);
  // Null unless SharePlacements succeeded.
  ClusterPlacements* placements() { return placements_.get(); }
  // The replica of wallet activity: `step` brings it up to PostgreSQL (cluster/activity_replica.h),
  // called on a thread of its own once started: at once when an activity change is notified,
  // and at least every `interval`. Set before Start().
  void FollowActivity(std::function<Status()> step, std::chrono::milliseconds interval);
  // Prunes PostgreSQL's activity change log: `prune(cutoff)` deletes entries logged before
  // `cutoff` (Unix seconds) and returns how many; called hourly by the sync thread with now -
  // activity_log_retention_hours. Set before Start().
  void PruneActivityLog(std::function<Result<int64_t>(int64_t cutoff)> prune);
  // Runs `deliver` at every sync tick (events buffered while PostgreSQL was away). Set before
  // Start().
  void DeliverBuffered(std::function<void()> deliver);
  void Start();
  // Stops both threads, sends the queued cap impressions and gives every lease back. Idempotent.
  void Stop();

  struct Health {
    bool postgres = true;  // the last change-feed read and counter read succeeded
    bool redis = true;     // the last lease refill and cap sync succeeded
  };
  Health health() const {
    return {postgres_ok_.load(std::memory_order_relaxed),
            redis_ok_.load(std::memory_order_relaxed)};
  }
  uint64_t caps_dropped() const { return caps_ ? caps_->dropped() : 0; }

 private:
  struct Engines;  // what Open connected (node.cc)
  void RunFollower();
  void RunSync();
  void RunReplica();
  // One round of each part; each logs and records its own degradation.
  void RefillLeases(int64_t now);
  void SyncCaps(int64_t now);
  void ReadOtherNodes(int64_t now);
  // Every second: saves this node's per-placement counts, feeds the other nodes' gains.
  void SyncPlacements(int64_t now);
  // Delivers the CLI's queued budget takes (cluster/budget_takes.h) every few seconds.
  void DeliverQueuedTakes(int64_t now);
  // Issue 37 item 3: every few seconds, the counters of nodes that stopped saving them for
  // cluster.dead_node_seconds get the events they billed past their marks (one node of the
  // cluster does it: PostgresStore::ReconcileDeadNodes).
  void ReconcileDeadNodes(int64_t now);
  void Note(std::atomic<bool>& ok, const char* engine, const char* what, const Status& status);

  std::unique_ptr<Engines> engines_;  // Open's; null for a node over given ports
  const ClusterPorts ports_;
  const store::ClusterOptions options_;
  const std::string node_id_;
  const Clock& clock_;
  std::unique_ptr<decision::BudgetLeases> leases_;
  std::unique_ptr<decision::SharedFrequencyCaps> caps_;
  std::unique_ptr<store::PlacementCountersStore> placement_store_;
  std::unique_ptr<ClusterPlacements> placements_;
  decision::BudgetLedger others_;
  decision::LiveState* live_ = nullptr;
  const Published<decision::Catalog>* catalogs_ = nullptr;
  std::function<void()> inventory_changed_;
  // Total budget each campaign was leased under: a changed budget is seeded again.
  std::unordered_map<int64_t, Micros> leased_budgets_;  // sync thread only
  int64_t others_read_at_ = 0;                          // sync thread only
  int64_t placements_synced_at_ = 0;                    // sync thread only
  int64_t takes_delivered_at_ = 0;                      // sync thread only
  int64_t dead_checked_at_ = 0;                         // sync thread only
  bool takes_ok_ = true;                                // sync thread only

  std::atomic<bool> postgres_ok_{true};
  std::atomic<bool> redis_ok_{true};
  Mutex mu_;
  CondVar wake_;
  bool stopping_ ADS_GUARDED_BY(mu_) = false;
  std::atomic<bool> follower_stop_{false};
  std::thread follower_;
  std::thread sync_;
  std::function<Status()> activity_step_;
  std::function<Result<int64_t>(int64_t)> activity_prune_;
  std::function<void()> deliver_buffered_;
  int64_t pruned_at_ = 0;  // sync thread only
  std::chrono::milliseconds activity_interval_{100};
  std::thread replica_;
};

}  // namespace adserver::cluster
