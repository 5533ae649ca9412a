// Exploration's effective counts (issue 36 items 3 and 4): forgetting over a campaign's
// impressions, and CPA impressions counted as their conversion opportunity matures.

#include "decision/rate_tracker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace adserver::decision {
namespace {

constexpr int64_t kNow = 1'767'225'600;

Campaign Cpc(int64_t id) {
  Campaign c;
  c.id = id;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 1'000'000;
  c.value_micros = 10'000;
  return c;
}

Campaign Cpa(int64_t id, int32_t window_days) {
  Campaign c = Cpc(id);
  c.pricing_model = PricingModel::kCpa;
  c.value_micros = 1'000;
  c.conversion = ConversionRule{.window_days = window_days};
  return c;
}

BudgetLedger::View Counts(int64_t impressions, int64_t clicks, int64_t conversions = 0) {
  return {
      .tracked = true, .impressions = impressions, .clicks = clicks, .conversions = conversions};
}

TEST(RateTrackerTest, ALongRecordStartsAtWhatForgettingKeepsWithItsRate) {
  RateTracker tracker(64);
  DecisionOptions o;  // half-life 1500 impressions
  EXPECT_FALSE(tracker.Published(1));
  RateCounts c = tracker.Update(Cpc(1), Counts(100'000, 5'000), kNow, o);
  const double kept = 1500 / std::numbers::ln2;
  EXPECT_NEAR(c.trials, kept, 1e-6);
  EXPECT_NEAR(c.successes, 0.05 * kept, 1e-6);
  ASSERT_TRUE(tracker.Published(1));
  EXPECT_EQ(tracker.Published(1)->trials, c.trials);
  // A short record is kept whole.
  c = tracker.Update(Cpc(2), Counts(300, 9), kNow, o);
  EXPECT_EQ(c.trials, 300);
  EXPECT_EQ(c.successes, 9);
  // Without forgetting, the cumulative counts.
  o.half_life_impressions = 0;
  c = tracker.Update(Cpc(3), Counts(100'000, 5'000), kNow, o);
  EXPECT_EQ(c.trials, 100'000);
  EXPECT_EQ(c.successes, 5'000);
}

TEST(RateTrackerTest, ACollapsedRateIsLearnedWithinAFewHalfLives) {
  DecisionOptions forgetting;
  DecisionOptions cumulative{.half_life_impressions = 0};
  RateTracker a(64);
  RateTracker b(64);
  int64_t impressions = 0;
  int64_t clicks = 0;
  RateCounts fa;
  RateCounts fb;
  // 20,000 impressions at 6 %, then 4,000 at 0.6 %, folded 100 at a time.
  for (int tick = 0; tick < 240; ++tick) {
    impressions += 100;
    clicks += tick < 200 ? 6 : (tick % 5 < 3 ? 1 : 0);
    fa = a.Update(Cpc(1), Counts(impressions, clicks), kNow + tick, forgetting);
    fb = b.Update(Cpc(1), Counts(impressions, clicks), kNow + tick, cumulative);
  }
  EXPECT_LT(fa.successes / fa.trials, 0.02);   // 0.6 % now, 6 % before: mostly forgotten
  EXPECT_GT(fb.successes / fb.trials, 0.045);  // the whole record still says ~5 %
  // The effective sample stays near what the half-life keeps.
  EXPECT_NEAR(fa.trials, 1500 / std::numbers::ln2, 300);
}

TEST(RateTrackerTest, CpaImpressionsMatureWithTheConversionDelay) {
  RateTracker tracker(64);
  DecisionOptions o{.half_life_impressions = 0};
  const Campaign c = Cpa(7, 8);  // mean delay: a quarter of 8 days
  const double tau = 2 * 86400.0;
  EXPECT_EQ(RateTracker::DelaySeconds(c, o), tau);
  tracker.Update(c, Counts(0, 0, 0), kNow, o);
  // 1,000 impressions now: none matured yet.
  RateCounts r = tracker.Update(c, Counts(1000, 0, 0), kNow, o);
  EXPECT_NEAR(r.trials, 0, 1e-9);
  // After one mean delay, 1 - 1/e of them count; after ten, nearly all.
  r = tracker.Update(c, Counts(1000, 0, 2), kNow + static_cast<int64_t>(tau), o);
  EXPECT_NEAR(r.trials, 1000 * (1 - std::exp(-1.0)), 1e-6);
  EXPECT_EQ(r.successes, 2);
  r = tracker.Update(c, Counts(1000, 0, 2), kNow + static_cast<int64_t>(10 * tau), o);
  EXPECT_NEAR(r.trials, 1000, 0.1);
  // A conversion undone by a reorg comes off.
  r = tracker.Update(c, Counts(1000, 0, 1), kNow + static_cast<int64_t>(10 * tau), o);
  EXPECT_EQ(r.successes, 1);
  // A set delay replaces the window's quarter; CPC campaigns do not wait.
  EXPECT_EQ(RateTracker::DelaySeconds(c, DecisionOptions{.conversion_delay_days = 1}), 86400);
  RateTracker cpc(64);
  cpc.Update(Cpc(8), Counts(0, 0), kNow, o);
  EXPECT_EQ(cpc.Update(Cpc(8), Counts(1000, 10), kNow, o).trials, 1000);
}

}  // namespace
}  // namespace adserver::decision
