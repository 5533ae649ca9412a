// Late conversions (issue 36 item 4): impressions kept by age, the known delays' feed, and the
// mean conversion delay fitted to censored data by expectation-maximization.

#include "decision/conversion_delay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "decision/rate_tracker.h"

namespace adserver::decision {
namespace {

constexpr int64_t kNow = 1'767'225'600;
constexpr double kDay = 86400;

TEST(ImpressionAgesTest, KeepsEachSlotsMeanAgeAndDropsWhatLeftTheWindow) {
  ImpressionAges ages;
  const double window = 8 * kDay;  // slots of a quarter day
  ages.Add(100, kNow, window, 1);
  ages.Add(300, kNow + 3600, window, 1);  // the same slot: the mean arrival moves
  ages.Add(50, kNow + static_cast<int64_t>(2 * kDay), window, 1);
  std::vector<std::pair<double, double>> seen;
  const int64_t at = kNow + static_cast<int64_t>(3 * kDay);
  ages.ForEach(at, window, [&](double age, double mass) { seen.emplace_back(age, mass); });
  ASSERT_EQ(seen.size(), 2u);
  double total = 0;
  for (auto [age, mass] : seen) {
    total += mass;
    if (mass == 400) {
      EXPECT_NEAR(age, 3 * kDay - 3600 * 0.75, 1e-6);
    } else {
      EXPECT_EQ(mass, 50);
      EXPECT_NEAR(age, kDay, 1e-6);
    }
  }
  EXPECT_EQ(total, 450);
  // Immature share with a mean delay of one day.
  EXPECT_NEAR(ages.Immature(at, window, kDay),
              400 * std::exp(-(3 * kDay - 2700) / kDay) + 50 * std::exp(-1.0), 1e-9);
  // Forgetting scales every slot.
  ages.Add(0, at, window, 0.5);
  EXPECT_NEAR(ages.Immature(at, window, kDay),
              0.5 * (400 * std::exp(-(3 * kDay - 2700) / kDay) + 50 * std::exp(-1.0)), 1e-9);
  // A window later, everything has matured; a slot reused a window on starts empty.
  const int64_t later = kNow + static_cast<int64_t>(10 * kDay) + 7200;
  EXPECT_EQ(ages.Immature(later, window, kDay), 0);
  ages.Add(10, later, window, 1);
  EXPECT_NEAR(ages.Immature(later, window, kDay), 10, 1e-9);
}

TEST(DelayFeedTest, SumsPerCampaignTakesOnceAndDropsBeyondItsCapacity) {
  DelayFeed feed(2);
  feed.Add(1, 100);
  feed.Add(1, 300);
  feed.Add(2, -5);  // clock skew: a delay is never negative
  feed.Add(3, 10);  // a third campaign: dropped
  std::vector<DelayFeed::Delta> taken = feed.Take();
  ASSERT_EQ(taken.size(), 2u);
  for (const DelayFeed::Delta& d : taken) {
    if (d.campaign_id == 1) {
      EXPECT_EQ(d.conversions, 2);
      EXPECT_EQ(d.seconds, 400);
    } else {
      EXPECT_EQ(d.campaign_id, 2);
      EXPECT_EQ(d.seconds, 0);
    }
  }
  EXPECT_EQ(feed.dropped(), 1);
  EXPECT_TRUE(feed.Take().empty());
}

// Impressions at a steady rate for `days`, each converting with probability `rate` after an
// exponential delay of mean `tau_days`; what has landed by the end is what the fit sees.
DelaySample Simulate(double days, double rate, double tau_days, double window_days,
                     ImpressionAges& ages, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::exponential_distribution<double> delay(1 / (tau_days * kDay));
  DelaySample s{.prior_rate = 0.001, .prior_weight = 500, .window_seconds = window_days * kDay};
  const int64_t end = kNow + static_cast<int64_t>(days * kDay);
  for (int64_t t = kNow; t < end; t += 60) {  // one impression a minute
    ages.Add(1, t, s.window_seconds, 1);
    s.impressions += 1;
    if (!(u(rng) < rate)) continue;
    const double d = delay(rng);
    if (d > s.window_seconds || t + d > end) continue;  // outside the window, or not landed
    s.conversions += 1;
    s.delayed += 1;
    s.delay_seconds += d;
  }
  s.ages = &ages;
  return s;
}

TEST(FitMeanDelayTest, FindsTheTrueDelayFromCensoredConversions) {
  std::mt19937_64 rng(7);
  // Ten days of a campaign converting 1 % after 3 days on average: a third of its conversions
  // have not landed, and the delays seen are biased short (their mean is under 3 days).
  ImpressionAges ages;
  DelaySample s = Simulate(10, 0.01, 3, 28, ages, rng);
  ASSERT_GT(s.delayed, 50);
  EXPECT_LT(s.delay_seconds / s.delayed, 2.5 * kDay);
  const int64_t end = kNow + static_cast<int64_t>(10 * kDay);
  DelaySample cold = s;
  const double fitted = FitMeanDelay({&cold, 1}, end, 0.5 * kDay, 1, 0, 200);
  EXPECT_NEAR(fitted / kDay, 3, 0.45);
  // Warm-started from the last fit (its delay and rates), a few steps a recompute get there too.
  DelaySample again = s;
  again.rate = -1;
  double warm = 0;
  for (int recompute = 0; recompute < 50; ++recompute) {
    warm = FitMeanDelay({&again, 1}, end, 0.5 * kDay, 1, warm, RateTracker::kFitSteps);
  }
  EXPECT_NEAR(warm / kDay, fitted / kDay, 0.05);
  // Without conversions or impressions the prior stays.
  DelaySample empty{.prior_rate = 0.001, .prior_weight = 500};
  EXPECT_EQ(FitMeanDelay({&empty, 1}, end, 2 * kDay, 1, 0, 10), 2 * kDay);
}

TEST(FitMeanDelayTest, ShortDelaysAreFoundShort) {
  std::mt19937_64 rng(11);
  ImpressionAges ages;
  DelaySample s = Simulate(10, 0.01, 0.5, 14, ages, rng);
  const int64_t end = kNow + static_cast<int64_t>(10 * kDay);
  EXPECT_NEAR(FitMeanDelay({&s, 1}, end, 3.5 * kDay, 1, 0, 200) / kDay, 0.5, 0.1);
}

Campaign Cpa(int64_t id, int32_t window_days) {
  Campaign c;
  c.id = id;
  c.pricing_model = PricingModel::kCpa;
  c.bid_micros = 1'000'000;
  c.value_micros = 1'000;
  c.conversion = ConversionRule{.window_days = window_days};
  return c;
}

// The tracker fits the delay from the delays fed to it and matures impressions with it; a
// configured delay is used as is.
TEST(RateTrackerDelayTest, ImpressionsMatureWithTheFittedDelayUnlessOneIsSet) {
  Catalog catalog;
  catalog.campaigns.push_back(Cpa(1, 28));
  DecisionOptions o{.half_life_impressions = 0};
  RateTracker tracker(64);
  EXPECT_EQ(tracker.MeanDelaySeconds(catalog.campaigns[0], o), 7 * kDay);  // before a fit
  const auto view = [](int64_t impressions, int64_t conversions) {
    return BudgetLedger::View{
        .tracked = true, .impressions = impressions, .conversions = conversions};
  };
  tracker.Update(catalog.campaigns[0], view(0, 0), kNow, o);
  // Ten days: 1,000 impressions a day, 20 conversions a day landing a day after theirs.
  int64_t impressions = 0, conversions = 0;
  for (int day = 1; day <= 10; ++day) {
    const int64_t at = kNow + day * static_cast<int64_t>(kDay);
    impressions += 1000;
    std::vector<DelayFeed::Delta> delays;
    if (day > 1) {
      conversions += 20;
      delays.push_back({.campaign_id = 1, .conversions = 20, .seconds = 20 * kDay});
    }
    tracker.AddDelays(delays);
    tracker.FitDelay(catalog, at, o);
    tracker.Update(catalog.campaigns[0], view(impressions, conversions), at, o);
  }
  const double fitted = tracker.fitted_delay_seconds();
  EXPECT_GT(fitted, 0.5 * kDay);
  EXPECT_LT(fitted, 2 * kDay);  // from the quarter window's 7 days towards the 1 seen
  EXPECT_EQ(tracker.MeanDelaySeconds(catalog.campaigns[0], o), fitted);
  // The newest day's 1,000 impressions (age 0) have not matured; older ones mostly have.
  const RateCounts counts =
      tracker.Update(catalog.campaigns[0], view(impressions, conversions),
                     kNow + 10 * static_cast<int64_t>(kDay), o);
  EXPECT_LT(counts.trials, 9000 + 1000 * (1 - std::exp(-kDay / fitted)) + 1);
  EXPECT_GT(counts.trials, 8000);
  // Set in the options: that delay, and no fit.
  DecisionOptions pinned = o;
  pinned.conversion_delay_days = 3;
  tracker.FitDelay(catalog, kNow + 11 * static_cast<int64_t>(kDay), pinned);
  EXPECT_EQ(tracker.fitted_delay_seconds(), 0);
  EXPECT_EQ(tracker.MeanDelaySeconds(catalog.campaigns[0], pinned), 3 * kDay);
}

}  // namespace
}  // namespace adserver::decision
