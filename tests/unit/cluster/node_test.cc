// Cluster mode's node without PostgreSQL or Redis (issue 41 item 2): ClusterNode over fakes of
// its ports. The engines themselves are tested in tests/unit/store (PostgreSQL, Redis) and the
// whole cluster end to end in tests/integration/cluster_test.cc.

#include "cluster/node.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "support/wait.h"

namespace adserver::cluster {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using store::Id;
using testing::WaitUntil;

constexpr int64_t kCampaign = 7;
constexpr Micros kBudget = 10'000'000;  // 10 USD

// The cluster's counters: the other nodes' rows, dead nodes and queued budget takes, as
// PostgreSQL would hold them; `fail` makes every call Unavailable (PostgreSQL away).
class FakeCounters final : public store::NodeCountersStore {
 public:
  Result<std::vector<store::CampaignCountersRecord>> LoadOtherNodesCounters(int64_t day,
                                                                            int64_t hour) override {
    MutexLock lock(mu_);
    if (fail) return UnavailableError("postgresql is away");
    ++reads;
    std::vector<store::CampaignCountersRecord> out = others;
    for (store::CampaignCountersRecord& r : out) {
      r.day = day;
      r.hour = hour;
    }
    return out;
  }
  Result<store::DeadNodesReconciled> ReconcileDeadNodes(int64_t dead_seconds) override {
    MutexLock lock(mu_);
    if (fail) return UnavailableError("postgresql is away");
    reconciled_after.push_back(dead_seconds);
    return store::DeadNodesReconciled{};
  }
  Result<size_t> DrainBudgetTakes(const std::function<Status(Id, Micros)>& apply,
                                  int limit) override {
    MutexLock lock(mu_);
    if (fail) return UnavailableError("postgresql is away");
    size_t delivered = 0;
    while (!takes.empty() && delivered < static_cast<size_t>(limit)) {
      ADS_RETURN_IF_ERROR(apply(takes.front().first, takes.front().second));
      takes.erase(takes.begin());
      ++delivered;
    }
    return delivered;
  }

  Mutex mu_;
  bool fail ADS_GUARDED_BY(mu_) = false;
  int reads ADS_GUARDED_BY(mu_) = 0;
  std::vector<store::CampaignCountersRecord> others ADS_GUARDED_BY(mu_);
  std::vector<int64_t> reconciled_after ADS_GUARDED_BY(mu_);
  std::vector<std::pair<Id, Micros>> takes ADS_GUARDED_BY(mu_);
};

// The shared remaining budgets: an in-process authority that can be switched away (Redis down)
// and tells what it holds.
class FakeAuthority final : public decision::BudgetAuthority {
 public:
  Result<Micros> Take(int64_t id, Micros want) override {
    if (fail) return UnavailableError("redis is away");
    return local_.Take(id, want);
  }
  Status Give(int64_t id, Micros amount) override {
    if (fail) return UnavailableError("redis is away");
    return local_.Give(id, amount);
  }
  Result<bool> Seed(int64_t id, Micros remaining) override {
    if (fail) return UnavailableError("redis is away");
    seeded[id] = remaining;
    return local_.Seed(id, remaining);
  }
  Status Forget(int64_t id) override {
    if (fail) return UnavailableError("redis is away");
    return local_.Forget(id);
  }
  // What remains of `id`'s budget (takes it all and gives it back).
  Micros Remaining(int64_t id) {
    Result<Micros> all = local_.Take(id, INT64_MAX / 2);
    if (!all.ok()) return -1;
    EXPECT_TRUE(local_.Give(id, *all).ok());
    return *all;
  }

  std::atomic<bool> fail{false};
  std::map<int64_t, Micros> seeded;

 private:
  decision::LocalBudgetAuthority local_;
};

class FakeCaps final : public decision::CapCounterStore {
 public:
  Result<std::vector<uint32_t>> AddAndRead(
      std::span<const decision::CapIncrement> increments) override {
    return std::vector<uint32_t>(increments.size(), 0);
  }
};

// A change feed whose version the test sets; waits as PostgreSQL's does (returns at a change
// or after `timeout`).
class FakeFeed final : public store::ChangeFeed {
 public:
  explicit FakeFeed(std::atomic<int64_t>& version) : version_(version) {}
  Result<int64_t> WaitForChange(int64_t seen, milliseconds timeout, milliseconds) override {
    WaitUntil([&] { return version_.load() != seen; }, timeout, milliseconds(5));
    return version_.load();
  }

 private:
  std::atomic<int64_t>& version_;
};

class ClusterNodeTest : public ::testing::Test {
 protected:
  ClusterNodeTest() {
    auto catalog = std::make_shared<decision::Catalog>();
    decision::Campaign c;
    c.id = kCampaign;
    c.id_str = "7";
    c.pricing_model = PricingModel::kCpm;
    c.bid_micros = 2'000'000;  // 2 USD CPM
    c.value_micros = 2000;
    c.total_budget_micros = kBudget;
    catalog->campaigns.push_back(c);
    catalog->BuildIndexes();
    catalogs_.Publish(std::move(catalog));
    options_.caps_sync_interval = milliseconds(20);
    options_.lease_refill_interval = milliseconds(20);
    options_.change_poll_interval = milliseconds(20);
  }

  std::unique_ptr<ClusterNode> NewNode() {
    ClusterPorts ports{
        .counters = &counters_,
        .authority = &authority_,
        .caps = &caps_,
        .open_feed = [this](const std::string& name) -> Result<std::unique_ptr<store::ChangeFeed>> {
          opened_feeds_.fetch_add(1);
          if (name != "inventory") return UnavailableError("no " + name + " feed here");
          return std::unique_ptr<store::ChangeFeed>(std::make_unique<FakeFeed>(version_));
        },
        .open_placements = []() -> Result<std::unique_ptr<store::PlacementCountersStore>> {
          return UnavailableError("not in this test");
        }};
    auto node = std::make_unique<ClusterNode>(std::move(ports), options_, "node-a", clock_);
    node->Attach(live_, catalogs_, [this] { changes_.fetch_add(1); });
    return node;
  }

  FakeCounters counters_;
  FakeAuthority authority_;
  FakeCaps caps_;
  std::atomic<int64_t> version_{3};
  std::atomic<int> opened_feeds_{0};
  std::atomic<int> changes_{0};
  store::ClusterOptions options_;
  FakeClock clock_;
  decision::LiveState live_;
  Published<decision::Catalog> catalogs_;
};

// Start-up's round: the other nodes' spend joins this node's counters, and the campaign's
// shared budget is seeded from the cluster's spend, a slice of it leased to this node.
TEST_F(ClusterNodeTest, SyncNowReadsTheOtherNodesAndLeasesFromWhatTheyLeft) {
  {
    MutexLock lock(counters_.mu_);
    counters_.others.push_back(
        {.campaign_id = kCampaign, .total_spend = 3'000'000, .impressions = 1500});
  }
  std::unique_ptr<ClusterNode> node = NewNode();
  ASSERT_NE(live_.leases, nullptr);
  ASSERT_NE(live_.others, nullptr);
  node->SyncNow();
  const decision::BudgetLedger::View seen = live_.Read(kCampaign, clock_.NowSeconds());
  EXPECT_EQ(seen.total_spend, 3'000'000);
  EXPECT_EQ(seen.impressions, 1500);
  EXPECT_EQ(authority_.seeded.at(kCampaign), kBudget - 3'000'000);
  const Micros held = live_.leases->Held(kCampaign);
  EXPECT_GT(held, 0);
  EXPECT_EQ(authority_.Remaining(kCampaign) + held, kBudget - 3'000'000);
  EXPECT_TRUE(node->health().postgres);
  EXPECT_TRUE(node->health().redis);

  // Stop gives the lease back: the cluster's remainder is whole again.
  node->Stop();
  EXPECT_EQ(live_.leases->Held(kCampaign), 0);
  EXPECT_EQ(authority_.Remaining(kCampaign), kBudget - 3'000'000);
}

// Either engine away is reported for /readyz and recovers on its own; serving state is kept.
TEST_F(ClusterNodeTest, AnEngineAwayIsReportedAndItsReturnNoticed) {
  std::unique_ptr<ClusterNode> node = NewNode();
  {
    MutexLock lock(counters_.mu_);
    counters_.fail = true;
  }
  authority_.fail = true;
  node->SyncNow();
  EXPECT_FALSE(node->health().postgres);
  EXPECT_FALSE(node->health().redis);
  EXPECT_EQ(live_.leases->Held(kCampaign), 0);  // no lease while Redis is away
  {
    MutexLock lock(counters_.mu_);
    counters_.fail = false;
  }
  authority_.fail = false;
  clock_.Advance(seconds(1));  // the other nodes' counters are read once a second
  node->SyncNow();
  EXPECT_TRUE(node->health().postgres);
  EXPECT_TRUE(node->health().redis);
  EXPECT_GT(live_.leases->Held(kCampaign), 0);
}

// The background threads: another node's inventory write (the feed's version moves) reaches
// the snapshot publisher; the sync loop delivers the CLI's queued budget takes to the
// authority and reconciles dead nodes' counters.
TEST_F(ClusterNodeTest, TheLoopsFollowChangesDeliverTakesAndReconcileDeadNodes) {
  options_.dead_node_seconds = 45;
  std::unique_ptr<ClusterNode> node = NewNode();
  node->SyncNow();
  {
    MutexLock lock(counters_.mu_);
    counters_.takes = {{kCampaign, 250'000}, {kCampaign, -50'000}};  // a take, a revert
  }
  node->Start();
  // The first version read is where the node starts from: no change yet.
  ASSERT_TRUE(WaitUntil([&] { return opened_feeds_.load() >= 1; }, seconds(10), milliseconds(5)));
  EXPECT_EQ(changes_.load(), 0);
  version_.store(4);
  EXPECT_TRUE(WaitUntil([&] { return changes_.load() == 1; }, seconds(10), milliseconds(5)));
  EXPECT_TRUE(WaitUntil(
      [&] {
        MutexLock lock(counters_.mu_);
        return counters_.takes.empty() && !counters_.reconciled_after.empty();
      },
      seconds(10), milliseconds(5)));
  node->Stop();  // gives the lease back
  EXPECT_EQ(live_.leases->Held(kCampaign), 0);
  EXPECT_EQ(authority_.Remaining(kCampaign), kBudget - 250'000 + 50'000);
  MutexLock lock(counters_.mu_);
  EXPECT_EQ(counters_.reconciled_after.front(), 45);
  EXPECT_EQ(changes_.load(), 1);
}

}  // namespace
}  // namespace adserver::cluster
