// Exploration's effective counts (issue 36 items 3 and 4): forgetting over a campaign's
// impressions, and CPA impressions counted as their conversion opportunity matures.

#include "decision/rate_tracker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

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

// At display rates a half-life of 1,500 impressions holds a handful of clicks, and exploration
// never settles: the half-life is stretched to hold half_life_events events (50) at the
// campaign's rate.
TEST(RateTrackerTest, ALowRateKeepsEnoughEventsPerHalfLife) {
  RateTracker tracker(64);
  DecisionOptions o;
  // 0.3 % CTR: a half-life of about 50 / 0.003 = 16,700 impressions, not 1,500.
  RateCounts low = tracker.Update(Cpc(1), Counts(1'000'000, 3'000), kNow, o);
  const double rate = 3000.01 / 1'000'001;  // with one impression at the 1 % default
  EXPECT_NEAR(low.trials, 50 / rate / std::numbers::ln2, 1e-3);
  EXPECT_NEAR(low.successes / low.trials, 0.003, 1e-9);
  // Impressions alone (half_life_events = 0): 1,500.
  DecisionOptions impressions_only{.half_life_events = 0};
  RateCounts short_memory =
      tracker.Update(Cpc(2), Counts(1'000'000, 3'000), kNow, impressions_only);
  EXPECT_NEAR(short_memory.trials, 1500 / std::numbers::ln2, 1e-6);
  // Folded in steps, the effective sample settles near the stretched half-life too.
  RateTracker steps(64);
  RateCounts folded;
  for (int tick = 1; tick <= 400; ++tick) {
    folded = steps.Update(Cpc(3), Counts(int64_t{tick} * 1000, int64_t{tick} * 3), kNow + tick, o);
  }
  EXPECT_NEAR(folded.trials, 50 / 0.003 / std::numbers::ln2, 2500);
}

TEST(RateTrackerTest, ACollapsedRateIsLearnedWithinAFewHalfLives) {
  // Forgetting alone (change detection off: see the tests below).
  DecisionOptions forgetting{.change_threshold = 0};
  DecisionOptions cumulative{.half_life_impressions = 0, .change_threshold = 0};
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
  // The effective sample grows as the rate falls (50 events take more impressions at 0.6 %),
  // between what 1,500 impressions and 50 events at 0.6 % keep.
  EXPECT_GT(fa.trials, 1500 / std::numbers::ln2);
  EXPECT_LT(fa.trials, 50 / 0.006 / std::numbers::ln2);
  // With impressions alone it stays near what the half-life keeps.
  RateTracker c(64);
  RateCounts fc;
  impressions = clicks = 0;
  for (int tick = 0; tick < 240; ++tick) {
    impressions += 100;
    clicks += tick < 200 ? 6 : (tick % 5 < 3 ? 1 : 0);
    fc = c.Update(Cpc(1), Counts(impressions, clicks), kNow + tick,
                  DecisionOptions{.half_life_events = 0, .change_threshold = 0});
  }
  EXPECT_LT(fc.successes / fc.trials, 0.015);
  EXPECT_NEAR(fc.trials, 1500 / std::numbers::ln2, 300);
}

TEST(RateTrackerTest, TheChangeStatisticIsTheLikelihoodRatioOfTwoRates) {
  EXPECT_EQ(RateTracker::ChangeStatistic(3, 100, 30, 1000), 0);  // the same rate
  EXPECT_EQ(RateTracker::ChangeStatistic(3, 0, 30, 1000), 0);    // an empty side
  // 0 of 400 after 60 of 1,000 (6 %): n KL(0, p) + n0 KL(0.06, p) with p = 60 / 1,400.
  const double p = 60.0 / 1400;
  const double expected = 400 * std::log(1 / (1 - p)) +
                          1000 * (0.06 * std::log(0.06 / p) + 0.94 * std::log(0.94 / (1 - p)));
  EXPECT_NEAR(RateTracker::ChangeStatistic(0, 400, 60, 1000), expected, 1e-9);
  EXPECT_GT(expected, 15);  // past the default threshold
  // With the second sample's log-likelihood given: the same value.
  EXPECT_NEAR(RateTracker::ChangeStatistic(0, 400, 60, 1000, RateTracker::LogLikelihood(60, 1000)),
              expected, 1e-9);
  EXPECT_NEAR(RateTracker::ChangeStatistic(7, 250, 60, 1000, RateTracker::LogLikelihood(60, 1000)),
              RateTracker::ChangeStatistic(7, 250, 60, 1000), 1e-9);
  // Symmetric in the two samples.
  EXPECT_NEAR(RateTracker::ChangeStatistic(60, 1000, 0, 400), expected, 1e-9);
}

// Clicks drawn at `rate` for `impressions` more impressions, folded `step` at a time, one
// second apart; returns the last effective counts.
struct Stream {
  RateTracker tracker{64};
  std::mt19937_64 rng{42};
  int64_t impressions = 0;
  int64_t clicks = 0;
  int64_t now = kNow;
  RateCounts Run(const DecisionOptions& o, double rate, int64_t more, int64_t step = 20) {
    RateCounts last;
    std::bernoulli_distribution click(rate);
    for (int64_t k = 0; k < more; k += step) {
      for (int64_t i = 0; i < step; ++i) clicks += click(rng) ? 1 : 0;
      impressions += step;
      last = tracker.Update(Cpc(1), Counts(impressions, clicks), ++now, o);
    }
    return last;
  }
};

// A collapse is seen within a few expected clicks' worth of impressions, not a half-life
// (issue 36 item 3): the counts restart from the window that shows it.
TEST(RateTrackerTest, ACollapseRestartsTheCountsWithinAFewHundredImpressions) {
  DecisionOptions o;  // change_threshold 15
  Stream s;
  s.Run(o, 0.06, 20'000);
  EXPECT_EQ(s.tracker.Changes(1), 0);
  RateCounts after = s.Run(o, 0.006, 800);
  EXPECT_EQ(s.tracker.Changes(1), 1);
  EXPECT_LT(after.trials, 801);
  EXPECT_LT(after.successes / after.trials, 0.02);
  // Without detection, 800 impressions at 0.6 % barely move a 6 % record.
  DecisionOptions off{.change_threshold = 0};
  Stream t;
  t.Run(off, 0.06, 20'000);
  RateCounts slow = t.Run(off, 0.006, 800);
  EXPECT_EQ(t.tracker.Changes(1), 0);
  EXPECT_GT(slow.successes / slow.trials, 0.035);
}

TEST(RateTrackerTest, ARecoveryIsFoundAgain) {
  DecisionOptions o;
  Stream s;
  s.Run(o, 0.004, 60'000, 100);
  EXPECT_EQ(s.tracker.Changes(1), 0);
  RateCounts after = s.Run(o, 0.04, 1'500, 20);
  EXPECT_GE(s.tracker.Changes(1), 1);
  EXPECT_GT(after.successes / after.trials, 0.02);
}

// A steady rate, however long, is not taken for a change: 2 M impressions at 3 % and 500 k at
// 0.3 %, thousands of tests each.
TEST(RateTrackerTest, ASteadyRateIsNotTakenForAChange) {
  DecisionOptions o;
  Stream s;
  s.Run(o, 0.03, 2'000'000, 200);
  EXPECT_EQ(s.tracker.Changes(1), 0);
  Stream t;
  t.Run(o, 0.003, 500'000, 50);
  EXPECT_EQ(t.tracker.Changes(1), 0);
}

// Peers' priors come from openings (issue 36 item 2): the counts when a CPC campaign's
// impressions first reach kOpeningImpressions, watched from below.
TEST(RateTrackerTest, AnOpeningIsTheCountsAtTheFirstHundredImpressions) {
  RateTracker tracker(16);
  DecisionOptions o;
  const Campaign c = Cpc(1);
  tracker.Update(c, Counts(40, 1), kNow, o);
  EXPECT_FALSE(tracker.Opening(1).has_value());
  tracker.Update(c, Counts(104, 3), kNow + 1, o);
  ASSERT_TRUE(tracker.Opening(1).has_value());
  EXPECT_EQ(tracker.Opening(1)->successes, 3);
  EXPECT_EQ(tracker.Opening(1)->trials, 104);
  // It stays what it was, whatever comes after.
  tracker.Update(c, Counts(5000, 400), kNow + 2, o);
  EXPECT_EQ(tracker.Opening(1)->trials, 104);
  // A campaign first seen past its opening (a restart) has none; nor has a CPA campaign.
  tracker.Update(Cpc(2), Counts(5000, 20), kNow, o);
  EXPECT_FALSE(tracker.Opening(2).has_value());
  tracker.Update(Cpa(3, 14), Counts(10, 0), kNow, o);
  tracker.Update(Cpa(3, 14), Counts(500, 0, 1), kNow + 1, o);
  EXPECT_FALSE(tracker.Opening(3).has_value());
  // The published prior travels with the published counts.
  tracker.PublishPrior(1, RatePrior{.mean = 0.004, .weight = 30});
  ASSERT_TRUE(tracker.Published(1)->prior.has_value());
  EXPECT_EQ(tracker.Published(1)->prior->weight, 30);
  tracker.PublishPrior(1, std::nullopt);
  EXPECT_FALSE(tracker.Published(1)->prior.has_value());
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
