// The live walk order: each project's runs sorted by value x lift ceiling, the slack that keeps
// it exact when ceilings rise after the build, and when RefreshWalkOrder builds a new one.

#include "decision/walk_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "decision/live_state.h"
#include "unit/decision/test_catalog.h"

namespace adserver::decision {
namespace {

using testing::TestCatalog;

constexpr int64_t kNow = 1'767'225'600 + 12 * 3600;  // 2026-01-01 12:00 UTC

std::vector<int64_t> Ids(std::span<const WalkOrder::Entry> run, const Catalog& catalog) {
  std::vector<int64_t> ids;
  for (const WalkOrder::Entry& e : run) ids.push_back(catalog.campaigns[e.walk.campaign].id);
  return ids;
}

class WalkOrderTest : public ::testing::Test {
 protected:
  // Greedy lifts (learned rate / prior), whose values these tests compute by hand; the
  // ceilings of exploration go through the same protocol (auction_test checks the auction).
  WalkOrderTest()
      : live_(LiveStateOptions{.ledger_capacity = 1024, .frequency_capacity = 64},
              DecisionOptions{.explore = false}) {}

  // Campaign `id` as a CPC campaign valued `value` at the default 1 % click rate.
  Campaign& AddCpc(int64_t id, std::vector<uint32_t> projects, double value) {
    Campaign& c = t_.AddCampaign(id, std::move(projects), value);
    c.pricing_model = PricingModel::kCpc;
    c.bid_micros = static_cast<Micros>(value * 100);
    t_.AddAd(id, 1000 + id);
    return c;
  }
  const Campaign& ById(int64_t id) {
    for (const Campaign& c : t_.catalog.campaigns) {
      if (c.id == id) return c;
    }
    throw std::out_of_range("campaign");
  }

  TestCatalog t_;
  LiveState live_;
};

TEST_F(WalkOrderTest, SortsEachRunByValueTimesCeiling) {
  t_.AddCampaign(1, {5}, 3000);
  t_.AddAd(1, 11);
  AddCpc(2, {5}, 5000);
  AddCpc(3, {5, 6}, 4000);
  Campaign& boostable = t_.AddCampaign(4, {5}, 2000);
  boostable.daily_budget_micros = 1'000'000;
  t_.AddAd(4, 14);
  t_.Finish();
  // Catalog order: 2 (5000), 3 (4000), 1 (3000); then the boostable run.
  EXPECT_EQ(t_.catalog.CampaignsForProject(5), (std::vector<Index>{1, 2, 0, 3}));
  // Campaign 2 at lift 0.5 (bound 2500), 3 at 0.1 (400), CPM campaigns at 1.
  std::vector<double> ceilings = {1, 0.5, 0.1, 1};
  auto order = WalkOrder::Build(t_.catalog, ceilings, 0);
  EXPECT_EQ(order->catalog_generation(), t_.catalog.generation());
  WalkOrder::Runs runs = order->Find(5);
  EXPECT_EQ(Ids(runs.steady, t_.catalog), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Ids(runs.boostable, t_.catalog), (std::vector<int64_t>{4}));
  EXPECT_DOUBLE_EQ(runs.steady_top, 3000);
  EXPECT_DOUBLE_EQ(runs.steady[1].bound, 2500);
  EXPECT_DOUBLE_EQ(runs.steady[2].bound, 400);
  EXPECT_DOUBLE_EQ(runs.boostable_top, 2000);
  EXPECT_EQ(Ids(order->Find(6).steady, t_.catalog), (std::vector<int64_t>{3}));
  EXPECT_TRUE(order->Find(7).empty());
  EXPECT_TRUE(order->Find(1000).empty());
  EXPECT_DOUBLE_EQ(order->BuiltCeiling(3), 0.1);
  EXPECT_EQ(order->BuiltCeiling(99), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(order->slack(), 1);
  order->Widen(0.5);  // never below 1
  EXPECT_DOUBLE_EQ(order->slack(), 1);
  order->Widen(2.5);
  order->Widen(2);
  EXPECT_GE(order->slack(), 2.5);  // with a hair of margin for rounding
  EXPECT_NEAR(order->slack(), 2.5, 1e-9);
}

TEST_F(WalkOrderTest, AClickAfterTheBuildWidensTheSlackByItsRaise) {
  AddCpc(1, {5}, 1000);
  t_.AddCampaign(2, {5}, 500);
  t_.AddAd(2, 12);
  t_.Finish();
  for (int i = 0; i < 9000; ++i) live_.ledger.RecordImpression(1, 0, kNow);
  RecomputeRateLift(live_, t_.catalog, kNow);
  auto order = live_.CurrentWalkOrder();
  ASSERT_NE(order, nullptr);
  EXPECT_EQ(order->catalog_generation(), t_.catalog.generation());
  // 9000 impressions, no click, prior weight 1000: the learned rate is a tenth of the default.
  const double built = order->BuiltCeiling(1);
  EXPECT_NEAR(built, 0.1, 1e-9);
  EXPECT_DOUBLE_EQ(order->slack(), 1);
  for (int i = 0; i < 50; ++i) RecordClick(live_, ById(1), kNow);
  EXPECT_GT(live_.LiftCeiling(1), built);
  EXPECT_GE(order->slack() * built, live_.LiftCeiling(1));
  EXPECT_NEAR(order->slack(), live_.LiftCeiling(1) / built, 1e-9);
  // The next recompute builds a tight order again.
  RecomputeRateLift(live_, t_.catalog, kNow);
  EXPECT_NE(live_.CurrentWalkOrder(), order);
  EXPECT_DOUBLE_EQ(live_.CurrentWalkOrder()->slack(), 1);
}

TEST_F(WalkOrderTest, PublishWidensForRaisesTheBuildDidNotSee) {
  AddCpc(1, {5}, 1000);
  t_.Finish();
  for (int i = 0; i < 9000; ++i) live_.ledger.RecordImpression(1, 0, kNow);
  RecomputeRateLift(live_, t_.catalog, kNow);
  // Ceilings read for a build, then a click, then the publish.
  std::vector<double> ceilings = {live_.LiftCeiling(1)};
  auto order = WalkOrder::Build(t_.catalog, ceilings, 0);
  for (int i = 0; i < 20; ++i) RecordClick(live_, ById(1), kNow);
  EXPECT_DOUBLE_EQ(order->slack(), 1);
  live_.PublishWalkOrder(order);
  EXPECT_GE(order->slack() * ceilings[0], live_.LiftCeiling(1));
  EXPECT_NEAR(order->slack(), live_.LiftCeiling(1) / ceilings[0], 1e-9);
}

TEST_F(WalkOrderTest, CampaignsWithoutTheirOwnCeilingFollowMaxRateLift) {
  AddCpc(1, {5}, 1000);
  AddCpc(2, {5}, 800);
  t_.Finish();
  // No recompute yet: both ceilings fall back to MaxRateLift (1).
  ASSERT_TRUE(RefreshWalkOrder(live_, t_.catalog));
  auto order = live_.CurrentWalkOrder();
  EXPECT_DOUBLE_EQ(order->fallback_lift(), 1);
  // Campaign 1's clicks lift MaxRateLift, which is campaign 2's ceiling too.
  for (int i = 0; i < 100; ++i) live_.ledger.RecordImpression(1, 0, kNow);
  for (int i = 0; i < 30; ++i) RecordClick(live_, ById(1), kNow);
  ASSERT_GT(live_.MaxRateLift(), 2);
  EXPECT_GE(order->slack(), live_.MaxRateLift());
  EXPECT_GE(order->slack() * order->BuiltCeiling(2), live_.LiftCeiling(2));
}

TEST_F(WalkOrderTest, RefreshBuildsOnlyWhenTheOrderIsStaleOrLoose) {
  AddCpc(1, {5}, 1000);
  t_.AddCampaign(2, {5}, 500);
  t_.AddAd(2, 12);
  t_.Finish();
  RecomputeRateLift(live_, t_.catalog, kNow);
  auto first = live_.CurrentWalkOrder();
  ASSERT_NE(first, nullptr);
  // Nothing changed: kept.
  EXPECT_FALSE(RefreshWalkOrder(live_, t_.catalog));
  // A ceiling a little lower: still within kWalkOrderTighten, kept.
  for (int i = 0; i < 50; ++i) live_.ledger.RecordImpression(1, 0, kNow);
  RecomputeRateLift(live_, t_.catalog, kNow);
  EXPECT_EQ(live_.CurrentWalkOrder(), first);
  // Much lower: rebuilt.
  for (int i = 0; i < 5000; ++i) live_.ledger.RecordImpression(1, 0, kNow);
  RecomputeRateLift(live_, t_.catalog, kNow);
  auto second = live_.CurrentWalkOrder();
  EXPECT_NE(second, first);
  EXPECT_LT(second->BuiltCeiling(1), 0.2);
  // A new catalog (another generation): rebuilt for it.
  TestCatalog next;
  next.AddCampaign(2, {5}, 500);
  next.AddAd(2, 12);
  next.Finish();
  EXPECT_TRUE(RefreshWalkOrder(live_, next.catalog));
  EXPECT_EQ(live_.CurrentWalkOrder()->catalog_generation(), next.catalog.generation());
}

// Clicks on one thread while another reads the ceilings, builds and publishes orders: after
// each round, the published order's bounds (built ceiling x slack) must cover every current
// ceiling, whichever side of the publish each raise fell on.
TEST_F(WalkOrderTest, RaisesRacingAPublishAreCoveredByItsSlack) {
  constexpr int kCampaigns = 64;
  for (int id = 1; id <= kCampaigns; ++id) AddCpc(id, {static_cast<uint32_t>(1 + id % 8)}, 1000);
  t_.Finish();
  for (int id = 1; id <= kCampaigns; ++id) {
    for (int i = 0; i < 20'000; ++i) live_.ledger.RecordImpression(id, 0, kNow);
  }
  RecomputeRateLift(live_, t_.catalog, kNow);
  std::mt19937_64 gen(5);
  for (int round = 0; round < 30; ++round) {
    std::atomic<bool> stop{false};
    std::atomic<int> clicked{0};
    std::thread clicks([&, seed = gen()] {
      std::mt19937_64 local(seed);
      while (!stop.load()) {
        RecordClick(live_, ById(1 + static_cast<int64_t>(local() % kCampaigns)), kNow);
        clicked.fetch_add(1);
      }
    });
    while (clicked.load() == 0) {
    }
    for (int publish = 0; publish < 20; ++publish) {
      std::vector<double> ceilings;
      for (const Campaign& c : t_.catalog.campaigns) ceilings.push_back(live_.LiftCeiling(c.id));
      live_.PublishWalkOrder(WalkOrder::Build(t_.catalog, ceilings, 0));
    }
    stop.store(true);
    clicks.join();
    const auto order = live_.CurrentWalkOrder();
    for (const Campaign& c : t_.catalog.campaigns) {
      ASSERT_GE(order->BuiltCeiling(c.id) * order->slack(), live_.LiftCeiling(c.id))
          << "round " << round << " campaign " << c.id;
    }
    // Lower the ceilings again (impressions only), so the next round's raises are raises.
    for (int id = 1; id <= kCampaigns; ++id) {
      for (int i = 0; i < 5'000; ++i) live_.ledger.RecordImpression(id, 0, kNow);
    }
    RecomputeRateLift(live_, t_.catalog, kNow);
  }
}

}  // namespace
}  // namespace adserver::decision
