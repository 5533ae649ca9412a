// The CLI's conversion attribution over its ports (cluster/cli_attribution.h, issue 41 item 2):
// the data directory's real SQLite and LMDB stores, with the cluster's budget-take queue
// (PostgreSQL) and remaining budgets (Redis) as fakes. Attribution itself is tested in
// tests/unit/events/conversion_attributor_test.cc, against PostgreSQL and Redis in
// tests/integration/cluster_test.cc.

#include "cluster/cli_attribution.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "store/lmdb/lmdb_exposure_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::cluster {
namespace {

using store::Id;

// The queued budget takes; `fail` refuses that many drains (PostgreSQL away).
class FakeQueue final : public store::NodeCountersStore {
 public:
  explicit FakeQueue(std::vector<std::pair<Id, Micros>>& takes, int& fail)
      : takes_(takes), fail_(fail) {}
  Result<std::vector<store::CampaignCountersRecord>> LoadOtherNodesCounters(int64_t,
                                                                            int64_t) override {
    return std::vector<store::CampaignCountersRecord>{};
  }
  Result<store::DeadNodesReconciled> ReconcileDeadNodes(int64_t) override {
    return store::DeadNodesReconciled{};
  }
  Result<size_t> DrainBudgetTakes(const std::function<Status(Id, Micros)>& apply,
                                  int limit) override {
    if (fail_ > 0) {
      --fail_;
      return UnavailableError("postgresql is away");
    }
    size_t delivered = 0;
    while (!takes_.empty() && delivered < static_cast<size_t>(limit)) {
      ADS_RETURN_IF_ERROR(apply(takes_.front().first, takes_.front().second));
      takes_.erase(takes_.begin());
      ++delivered;
    }
    return delivered;
  }

 private:
  std::vector<std::pair<Id, Micros>>& takes_;
  int& fail_;
};

// The remaining budgets: what was taken and given back, per call.
class FakeBudgets final : public decision::BudgetAuthority {
 public:
  explicit FakeBudgets(std::vector<std::pair<int64_t, Micros>>& moved) : moved_(moved) {}
  Result<Micros> Take(int64_t id, Micros want) override {
    moved_.emplace_back(id, want);
    return want;
  }
  Status Give(int64_t id, Micros amount) override {
    moved_.emplace_back(id, -amount);
    return OkStatus();
  }
  Result<bool> Seed(int64_t, Micros) override { return true; }
  Status Forget(int64_t) override { return OkStatus(); }

 private:
  std::vector<std::pair<int64_t, Micros>>& moved_;
};

class CliAttributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto inventory = store::SqliteStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(inventory.ok()) << inventory.status().message();
    inventory_ = std::move(*inventory);
  }

  AttributionStores Stores(bool cluster) {
    AttributionStores stores{.inventory = inventory_};
    if (!cluster) stores.counters = inventory_;
    auto events = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
    EXPECT_TRUE(events.ok()) << events.status().message();
    if (events.ok()) stores.events = std::move(*events);
    auto exposures = store::LmdbExposureStore::Open(dir_.File("exposures"));
    EXPECT_TRUE(exposures.ok()) << exposures.status().message();
    if (exposures.ok()) stores.exposures = std::move(*exposures);
    if (cluster) {
      stores.takes = BudgetTakeDelivery{.queue = std::make_unique<FakeQueue>(queued_, fail_),
                                        .budgets = std::make_unique<FakeBudgets>(moved_)};
    }
    return stores;
  }

  // A CPA campaign on a new project, with a total budget or without.
  Id ConversionCampaign(std::optional<Micros> total_budget) {
    if (inventory_->ListCommunities()->empty()) {
      EXPECT_TRUE(inventory_->CreateCommunity({.name = "C"}, 1).ok());
    }
    // The community's own project (issue 39: only an owner's campaigns convert on it).
    auto project = inventory_->CreateProject(
        {.slug = "p" + std::to_string(++projects_), .name = "P", .owner_community_id = 1}, 1);
    EXPECT_TRUE(project.ok()) << project.status().message();
    if (!project.ok()) return 0;
    auto campaign =
        inventory_->CreateCampaign({.community_id = 1,
                                    .name = "K",
                                    .status = CampaignStatus::kActive,
                                    .pricing_model = PricingModel::kCpa,
                                    .bid_micros = 1'000'000,
                                    .total_budget_micros = total_budget,
                                    .target_projects = {project->id},
                                    .conversion = store::ConversionRule{.projects = {project->id}}},
                                   1);
    EXPECT_TRUE(campaign.ok()) << campaign.status().message();
    return campaign.ok() ? campaign->id : 0;
  }

  testing::TempDir dir_;
  std::shared_ptr<store::SqliteStore> inventory_;
  std::vector<std::pair<Id, Micros>> queued_;
  int fail_ = 0;
  std::vector<std::pair<int64_t, Micros>> moved_;
  int projects_ = 0;
};

TEST_F(CliAttributionTest, ClusterModeDeliversQueuedTakesAtStartAfterEachBatchAndAtFinish) {
  queued_ = {{7, 500}};  // what a killed run left
  CliAttribution attribution(Stores(/*cluster=*/true));
  ASSERT_TRUE(attribution.Start().ok());
  EXPECT_EQ(moved_, (std::vector<std::pair<int64_t, Micros>>{{7, 500}}));
  EXPECT_TRUE(queued_.empty());

  queued_ = {{7, -200}};  // a revert gives back
  ASSERT_TRUE(attribution.OnImported({}).ok());
  EXPECT_EQ(moved_.back(), (std::pair<int64_t, Micros>{7, -200}));

  // PostgreSQL away during a batch: the batch still succeeds (its conversions are committed)
  // and the take stays queued for the next delivery.
  queued_ = {{8, 300}};
  fail_ = 1;
  ASSERT_TRUE(attribution.OnImported({}).ok());
  EXPECT_EQ(queued_.size(), 1u);
  // Finish retries until it is delivered.
  fail_ = 1;
  ASSERT_TRUE(attribution.Finish().ok());
  EXPECT_TRUE(queued_.empty());
  EXPECT_EQ(moved_.back(), (std::pair<int64_t, Micros>{8, 300}));
  EXPECT_EQ(attribution.recorded(), 0u);
}

TEST_F(CliAttributionTest, EmbeddedHasNothingToDeliver) {
  queued_ = {{7, 500}};
  CliAttribution attribution(Stores(/*cluster=*/false));
  ASSERT_TRUE(attribution.Start().ok());
  ASSERT_TRUE(attribution.OnImported({}).ok());
  ASSERT_TRUE(attribution.Finish().ok());
  EXPECT_TRUE(moved_.empty());
  EXPECT_EQ(queued_.size(), 1u);  // not this process's queue
}

TEST_F(CliAttributionTest, BudgetedIsACampaignWithATotalBudgetInTheCatalog) {
  const Id budgeted = ConversionCampaign(5'000'000);
  const Id unbudgeted = ConversionCampaign(std::nullopt);
  CliAttribution attribution(Stores(/*cluster=*/true));
  EXPECT_FALSE(attribution.Budgeted(budgeted)) << "no catalog before Start";
  ASSERT_TRUE(attribution.Start().ok());
  EXPECT_TRUE(attribution.Budgeted(budgeted));
  EXPECT_FALSE(attribution.Budgeted(unbudgeted));
  EXPECT_FALSE(attribution.Budgeted(999));
}

}  // namespace
}  // namespace adserver::cluster
