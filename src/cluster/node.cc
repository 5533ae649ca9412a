#include "cluster/node.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cluster/budget_takes.h"
#include "common/check.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"
#include "ingest/counter_flusher.h"
#include "store/postgres/pg_change_feed.h"
#include "store/postgres/postgres_placement_counters.h"
#include "store/postgres/postgres_store.h"
#include "store/redis/redis_budget_authority.h"
#include "store/redis/redis_cap_counters.h"

namespace adserver::cluster {
namespace {
// The other nodes' counters are read this often (they flush theirs every second).
constexpr int64_t kOthersEverySeconds = 1;
// The CLI's queued budget takes (cluster/budget_takes.h) are delivered this often: one indexed read
// of an (almost always) empty table per node.
constexpr int64_t kTakesEverySeconds = 5;
}  // namespace

std::string DefaultNodeId(const std::string& listen) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "node");
  }
  size_t colon = listen.rfind(':');
  return std::string(host) + ":" + (colon == std::string::npos ? listen : listen.substr(colon + 1));
}

struct ClusterNode::Engines {
  std::unique_ptr<store::PostgresStore> counters;
  std::unique_ptr<store::RedisBudgetAuthority> authority;
  std::unique_ptr<store::RedisCapCounters> caps;
};

Result<std::unique_ptr<ClusterNode>> ClusterNode::Open(const store::ClusterOptions& options,
                                                       std::string node_id, const Clock& clock) {
  auto engines = std::make_unique<Engines>();
  ADS_ASSIGN_OR_RETURN(engines->counters, store::PostgresStore::Open(options.database_url));
  engines->counters->SetNodeId(node_id);
  // A node may start while Redis is away: it serves, budgeted campaigns wait for their leases.
  ADS_ASSIGN_OR_RETURN(engines->authority, store::RedisBudgetAuthority::Open(
                                               options.redis_url, options.redis_key_prefix,
                                               /*wait_for_redis=*/true));
  ADS_ASSIGN_OR_RETURN(engines->caps,
                       store::RedisCapCounters::Open(options.redis_url, options.redis_key_prefix,
                                                     /*wait_for_redis=*/true));
  const std::string url = options.database_url;
  ClusterPorts ports{
      .counters = engines->counters.get(),
      .authority = engines->authority.get(),
      .caps = engines->caps.get(),
      .open_feed = [url](const std::string& name) -> Result<std::unique_ptr<store::ChangeFeed>> {
        ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PgChangeFeed> feed,
                             store::PgChangeFeed::Open(url, name));
        return std::unique_ptr<store::ChangeFeed>(std::move(feed));
      },
      .open_placements = [url,
                          node_id]() -> Result<std::unique_ptr<store::PlacementCountersStore>> {
        ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PostgresPlacementCounters> rows,
                             store::PostgresPlacementCounters::Open(url, node_id));
        return std::unique_ptr<store::PlacementCountersStore>(std::move(rows));
      }};
  auto node = std::make_unique<ClusterNode>(std::move(ports), options, std::move(node_id), clock);
  node->engines_ = std::move(engines);
  return node;
}

ClusterNode::ClusterNode(ClusterPorts ports, const store::ClusterOptions& options,
                         std::string node_id, const Clock& clock)
    : ports_(std::move(ports)), options_(options), node_id_(std::move(node_id)), clock_(clock) {
  ADS_CHECK(ports_.counters != nullptr && ports_.authority != nullptr && ports_.caps != nullptr &&
            ports_.open_feed && ports_.open_placements);
  leases_ = std::make_unique<decision::BudgetLeases>(
      *ports_.authority, decision::LeaseOptions{.slice_share = options.lease_slice_share});
}

ClusterNode::~ClusterNode() { Stop(); }

store::PostgresStore& ClusterNode::counters() {
  ADS_CHECK(engines_ != nullptr);
  return *engines_->counters;
}

void ClusterNode::Attach(decision::LiveState& live, const Published<decision::Catalog>& catalogs,
                         std::function<void()> inventory_changed) {
  live_ = &live;
  catalogs_ = &catalogs;
  inventory_changed_ = std::move(inventory_changed);
  caps_ = std::make_unique<decision::SharedFrequencyCaps>(live.caps, *ports_.caps);
  live.leases = leases_.get();
  live.shared_caps = caps_.get();
  live.others = &others_;
}

void ClusterNode::Note(std::atomic<bool>& ok, const char* engine, const char* what,
                       const Status& status) {
  bool was = ok.exchange(status.ok(), std::memory_order_relaxed);
  if (was && !status.ok()) {
    ADS_LOG(warn, "cluster degraded", "engine", engine, "what", what, "status", status);
  } else if (!was && status.ok()) {
    ADS_LOG(info, "cluster recovered", "engine", engine, "what", what);
  }
}

void ClusterNode::RefillLeases(int64_t now) {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_->Current();
  if (!catalog) return;
  std::vector<decision::LeasedCampaign> leased;
  Status status = OkStatus();
  for (const decision::Campaign& c : catalog->campaigns) {
    if (!c.total_budget_micros) continue;
    // A changed budget: the shared remainder is seeded again from the persisted spend. (Until
    // every node has seen the change, one slice per node may be leased twice.)
    auto [it, inserted] = leased_budgets_.try_emplace(c.id, *c.total_budget_micros);
    if (!inserted && it->second != *c.total_budget_micros) {
      Status forgot = ports_.authority->Forget(c.id);
      if (!forgot.ok()) {
        status = forgot;
        continue;
      }
      it->second = *c.total_budget_micros;
    }
    leased.push_back({.campaign_id = c.id,
                      .budget = *c.total_budget_micros,
                      .max_price = decision::LeaseNeed(c),
                      .spent = live_->Read(c.id, now).total_spend});
  }
  Status refilled = leases_->Refill(leased);
  Note(redis_ok_, "redis", "budget leases", status.ok() ? refilled : status);
}

void ClusterNode::SyncCaps(int64_t now) {
  if (!caps_) return;
  Note(redis_ok_, "redis", "frequency caps", caps_->Sync(now));
}

void ClusterNode::ReadOtherNodes(int64_t now) {
  if (now - others_read_at_ < kOthersEverySeconds) return;
  Result<std::vector<store::CampaignCountersRecord>> rows =
      ports_.counters->LoadOtherNodesCounters(now / 86400, now / 3600);
  Note(postgres_ok_, "postgresql", "other nodes' counters", rows.status());
  if (!rows.ok()) return;
  others_read_at_ = now;
  for (const store::CampaignCountersRecord& r : *rows) others_.Restore(ingest::FromRecord(r));
}

Status ClusterNode::SharePlacements(size_t max_pairs) {
  ADS_ASSIGN_OR_RETURN(placement_store_, ports_.open_placements());
  auto placements = std::make_unique<ClusterPlacements>(*placement_store_, max_pairs);
  ADS_RETURN_IF_ERROR(placements->Start());
  placements_ = std::move(placements);
  return OkStatus();
}

void ClusterNode::SyncPlacements(int64_t now) {
  if (!placements_ || now - placements_synced_at_ < kOthersEverySeconds) return;
  placements_synced_at_ = now;
  Note(postgres_ok_, "postgresql", "placement counters", placements_->Sync(live_->placement_feed));
}

void ClusterNode::DeliverQueuedTakes(int64_t now) {
  if (now - takes_delivered_at_ < kTakesEverySeconds) return;
  takes_delivered_at_ = now;
  Status delivered = DeliverBudgetTakes(*ports_.counters, *ports_.authority);
  if (delivered.ok() != takes_ok_) {
    takes_ok_ = delivered.ok();
    if (takes_ok_) {
      ADS_LOG(info, "the CLI's queued budget takes are delivered to Redis again");
    } else {
      ADS_LOG(warn, "the CLI's queued budget takes not delivered to Redis; retrying", "status",
              delivered);
    }
  }
}

void ClusterNode::SyncNow() {
  const int64_t now = clock_.NowSeconds();
  ReadOtherNodes(now);
  SyncCaps(now);
  RefillLeases(now);
}

void ClusterNode::RunSync() {
  NameThisThread("cluster-sync");
  // Each part at its own interval (a cap sync costs Redis one call per pair it sends or reads).
  using Steady = std::chrono::steady_clock;
  const auto interval = std::min(options_.lease_refill_interval, options_.caps_sync_interval);
  Steady::time_point last_leases = Steady::now(), last_caps = Steady::now();
  MutexLock lock(mu_);
  while (!stopping_) {
    wake_.WaitFor(mu_, interval, [this]() ADS_REQUIRES(mu_) { return stopping_; });
    if (stopping_) break;
    lock.Unlock();
    const int64_t now = clock_.NowSeconds();
    const Steady::time_point tick = Steady::now();
    ReadOtherNodes(now);
    SyncPlacements(now);
    if (tick - last_caps >= options_.caps_sync_interval) {
      SyncCaps(now);
      last_caps = tick;
    }
    if (tick - last_leases >= options_.lease_refill_interval) {
      RefillLeases(now);
      last_leases = tick;
    }
    DeliverQueuedTakes(now);
    ReconcileDeadNodes(now);
    if (deliver_buffered_) deliver_buffered_();
    if (activity_prune_ && now - pruned_at_ >= 3600) {
      pruned_at_ = now;
      Result<int64_t> pruned = activity_prune_(now - options_.activity_log_retention_hours * 3600);
      if (!pruned.ok()) {
        ADS_LOG(warn, "activity change log not pruned; next hour", "status", pruned.status());
      } else if (*pruned > 0) {
        ADS_LOG(info, "activity change log pruned", "entries", *pruned);
      }
    }
    lock.Lock();
  }
}

void ClusterNode::ReconcileDeadNodes(int64_t now) {
  // Every few seconds: a dead node's counters are short by at most its last flush interval.
  constexpr int64_t kEvery = 5;
  if (now - dead_checked_at_ < kEvery) return;
  dead_checked_at_ = now;
  Result<store::DeadNodesReconciled> done =
      ports_.counters->ReconcileDeadNodes(options_.dead_node_seconds);
  if (!done.ok()) {
    ADS_LOG(warn, "dead nodes' counters not reconciled; next round", "status", done.status());
    return;
  }
  for (const std::string& node : done->nodes) {
    ADS_LOG(warn,
            "counters of a node that stopped flushing reconciled with the events it billed (it "
            "died, or lost PostgreSQL; a node that comes back saves its own over them)",
            "node", node, "clicks", done->clicks, "conversions", done->conversions, "reverts",
            done->reverts);
  }
}

void ClusterNode::RunFollower() {
  NameThisThread("cluster-feed");
  std::unique_ptr<store::ChangeFeed> feed;
  int64_t seen = -1;
  while (!follower_stop_.load(std::memory_order_relaxed)) {
    if (!feed) {
      Result<std::unique_ptr<store::ChangeFeed>> opened = ports_.open_feed("inventory");
      Note(postgres_ok_, "postgresql", "change feed", opened.status());
      if (!opened.ok()) {
        MutexLock lock(mu_);
        wake_.WaitFor(mu_, options_.change_poll_interval,
                      [this]() ADS_REQUIRES(mu_) { return stopping_; });
        continue;
      }
      feed = std::move(*opened);
    }
    // Short waits, so Stop is noticed within a quarter second.
    Result<int64_t> version =
        feed->WaitForChange(seen, std::chrono::milliseconds(250), options_.change_poll_interval);
    Note(postgres_ok_, "postgresql", "change feed", version.status());
    if (!version.ok()) {
      MutexLock lock(mu_);
      wake_.WaitFor(mu_, options_.change_poll_interval,
                    [this]() ADS_REQUIRES(mu_) { return stopping_; });
      continue;
    }
    if (*version != seen) {
      if (seen != -1 && inventory_changed_) inventory_changed_();
      seen = *version;
    }
  }
}

void ClusterNode::FollowActivity(std::function<Status()> step, std::chrono::milliseconds interval) {
  activity_step_ = std::move(step);
  activity_interval_ = interval;
}

void ClusterNode::PruneActivityLog(std::function<Result<int64_t>(int64_t cutoff)> prune) {
  activity_prune_ = std::move(prune);
}

void ClusterNode::DeliverBuffered(std::function<void()> deliver) {
  deliver_buffered_ = std::move(deliver);
}

void ClusterNode::RunReplica() {
  NameThisThread("cluster-replica");
  LowerThisThreadPriority();  // a bootstrap or a large import yields to the event loops
  // Woken by the activity change version's NOTIFY (every logged change bumps it), with a poll
  // behind it; a step also runs every activity_interval_ whatever the feed says.
  std::unique_ptr<store::ChangeFeed> feed;
  int64_t seen = -1;
  while (!follower_stop_.load(std::memory_order_relaxed)) {
    Note(postgres_ok_, "postgresql", "activity replica", activity_step_());
    if (!feed) {
      Result<std::unique_ptr<store::ChangeFeed>> opened = ports_.open_feed("activity");
      if (opened.ok()) feed = std::move(*opened);
    }
    Result<int64_t> version =
        feed ? feed->WaitForChange(seen, activity_interval_, options_.change_poll_interval)
             : Result<int64_t>(UnavailableError("no activity feed"));
    if (version.ok()) {
      seen = *version;
    } else {
      MutexLock lock(mu_);
      wake_.WaitFor(mu_, activity_interval_, [this]() ADS_REQUIRES(mu_) { return stopping_; });
    }
  }
}

void ClusterNode::Start() {
  sync_ = std::thread([this] { RunSync(); });
  follower_ = std::thread([this] { RunFollower(); });
  if (activity_step_) replica_ = std::thread([this] { RunReplica(); });
}

void ClusterNode::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  follower_stop_.store(true, std::memory_order_relaxed);
  wake_.NotifyAll();
  if (sync_.joinable()) sync_.join();
  if (follower_.joinable()) follower_.join();
  if (replica_.joinable()) replica_.join();
  if (caps_) {
    Status synced = caps_->Sync(clock_.NowSeconds());
    if (!synced.ok()) ADS_LOG(warn, "frequency caps not sent at shutdown", "status", synced);
  }
  if (placements_ && live_ != nullptr) {
    Status saved = placements_->Sync(live_->placement_feed);
    if (!saved.ok()) ADS_LOG(warn, "placement counts not saved at shutdown", "status", saved);
  }
  Status returned = leases_->ReturnAll();
  if (!returned.ok()) {
    ADS_LOG(warn, "budget leases not given back (lost to their campaigns until reseeded)", "status",
            returned);
  }
}

}  // namespace adserver::cluster
