// Per-placement learning (issue 36 item 5): the feed, the tracker's effective counts per
// (campaign, publisher) and the factors requests read.

#include "decision/placement_rates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <vector>

namespace adserver::decision {
namespace {

DecisionOptions Options(double prior_events = 10) {
  DecisionOptions o;
  o.placement_prior_events = prior_events;
  return o;
}

TEST(PlacementFeedTest, AddsUpPerPairAndTakesEverythingOnce) {
  PlacementFeed feed(16);
  feed.Add({1, 7}, 3, 0);
  feed.Add({1, 7}, 2, 1);
  feed.Add({1, 8}, 1, 0);
  std::vector<PlacementDelta> taken = feed.Take();
  ASSERT_EQ(taken.size(), 2u);
  std::map<int64_t, PlacementDelta> by_publisher;
  for (const PlacementDelta& d : taken) by_publisher[d.key.publisher_id] = d;
  EXPECT_EQ(by_publisher[7].impressions, 5);
  EXPECT_EQ(by_publisher[7].events, 1);
  EXPECT_EQ(by_publisher[8].impressions, 1);
  EXPECT_TRUE(feed.Take().empty());
}

TEST(PlacementFeedTest, AFullFeedDropsNewPairsAndCountsThem) {
  PlacementFeed feed(2);
  feed.Add({1, 1}, 1, 0);
  feed.Add({1, 2}, 1, 0);
  feed.Add({1, 3}, 4, 1);  // a third pair: dropped
  feed.Add({1, 1}, 1, 0);  // a pair it holds: still counted
  EXPECT_EQ(feed.dropped(), 5);
  EXPECT_EQ(feed.Take().size(), 2u);
  feed.Add({1, 3}, 1, 0);  // room again after the take
  EXPECT_EQ(feed.Take().size(), 1u);
}

TEST(PlacementFactorsTest, LooksUpPairsAndEachCampaignsLargestFactor) {
  std::vector<PlacementFactors::Entry> entries;
  for (int64_t c = 1; c <= 200; ++c) {
    for (int64_t p = 1; p <= 5; ++p) entries.push_back({{c, p}, 0.1 * static_cast<double>(p + c % 7)});
  }
  const PlacementFactors factors(entries);
  EXPECT_EQ(factors.size(), entries.size());
  for (const auto& e : entries) {
    EXPECT_DOUBLE_EQ(factors.Factor(e.key.campaign_id, e.key.publisher_id), e.factor);
  }
  EXPECT_DOUBLE_EQ(factors.Factor(1, 99), 1);    // a publisher without a factor
  EXPECT_DOUBLE_EQ(factors.Factor(999, 1), 1);   // a campaign without any
  EXPECT_DOUBLE_EQ(factors.Ceiling(6), 0.1 * (5 + 6));
  EXPECT_DOUBLE_EQ(factors.Ceiling(7), 1);       // factors 0.1-0.5 only: the default 1 is larger
  EXPECT_DOUBLE_EQ(factors.Ceiling(999), 1);
  const PlacementFactors none(std::span<const PlacementFactors::Entry>{});
  EXPECT_TRUE(none.empty());
  EXPECT_DOUBLE_EQ(none.Factor(1, 1), 1);
  EXPECT_DOUBLE_EQ(none.Ceiling(1), 1);
}

TEST(PlacementTrackerTest, TheFactorIsObservedOverExpectedEventsShrunkByThePrior) {
  // (events + E) / (expected + E): no record gives 1; 30 clicks where the campaign's rate
  // expected 10 give (30 + 10) / (10 + 10) = 2.
  EXPECT_DOUBLE_EQ(PlacementTracker::FactorOf(0, 0, 1, 10), 1);
  EXPECT_DOUBLE_EQ(PlacementTracker::FactorOf(30, 10, 1, 10), 2);
  EXPECT_DOUBLE_EQ(PlacementTracker::FactorOf(0, 90, 1, 10), 0.1);
  // CPA: only the matured share of the expected conversions is due yet.
  EXPECT_DOUBLE_EQ(PlacementTracker::FactorOf(5, 20, 0.25, 10), 1);
  EXPECT_DOUBLE_EQ(PlacementTracker::FactorOf(30, 10, 1, 0), 1);  // off
}

TEST(PlacementTrackerTest, LearnsEachPublishersRateAgainstTheCampaigns) {
  // A campaign at a 1 % rate overall: 2 % on publisher 1, 0.5 % on publisher 2.
  PlacementTracker tracker(64);
  const PlacementTracker::CampaignRate rate{.rate = 0.01, .maturity = 1, .half_life = 0};
  const auto rate_of = [&](int64_t id) { return id == 1 ? &rate : nullptr; };
  std::mt19937_64 gen(5);
  std::bernoulli_distribution click1(0.02), click2(0.005);
  for (int tick = 0; tick < 1000; ++tick) {  // 200,000 impressions on each publisher
    std::vector<PlacementDelta> deltas{{.key = {1, 1}, .impressions = 200},
                                       {.key = {1, 2}, .impressions = 200},
                                       {.key = {2, 1}, .impressions = 200, .events = 50}};
    for (int i = 0; i < 200; ++i) {
      deltas[0].events += click1(gen);
      deltas[1].events += click2(gen);
    }
    tracker.Add(deltas, rate_of);
  }
  std::map<int64_t, double> factor;
  for (const auto& e : tracker.Factors(rate_of, Options())) {
    EXPECT_EQ(e.key.campaign_id, 1);  // campaign 2 is not learned here: not tracked
    factor[e.key.publisher_id] = e.factor;
  }
  // About 4,000 and 1,000 clicks where 2,000 were expected: within 3 standard deviations.
  EXPECT_NEAR(factor[1], 2.0, 0.1);
  EXPECT_NEAR(factor[2], 0.5, 0.05);
  EXPECT_EQ(tracker.pairs(), 2u);
}

TEST(PlacementTrackerTest, ForgetsAsTheCampaignDoesAndDropsPairsOfCampaignsThatLeft) {
  PlacementTracker tracker(64);
  PlacementTracker::CampaignRate rate{.rate = 0.01, .maturity = 1, .half_life = 1000};
  const PlacementTracker::CampaignRate* known = &rate;
  const auto rate_of = [&](int64_t) { return known; };
  // A record restored at start-up: 100 clicks in 5,000 impressions (2 %), scaled to what
  // forgetting keeps (1,000 / ln 2 = 1,443 impressions' worth).
  tracker.Add(std::vector<PlacementDelta>{{.key = {1, 1}, .impressions = 5000, .events = 100}},
              rate_of);
  const double scale = 1000 / std::numbers::ln2 / 5000;
  const double clicks = 100 * scale;
  const double expected = 5000 * scale * 0.01;
  EXPECT_NEAR(tracker.Factors(rate_of, Options())[0].factor, (clicks + 10) / (expected + 10),
              1e-9);
  EXPECT_NEAR(tracker.Factors(rate_of, Options())[0].factor, 1.59, 0.01);
  // Then the publisher's readers stop clicking.
  for (int i = 0; i < 10; ++i) {
    tracker.Add(std::vector<PlacementDelta>{{.key = {1, 1}, .impressions = 500}}, rate_of);
  }
  // Five half-lives later the old clicks weigh 1/32: the factor is below 1.
  const double after = tracker.Factors(rate_of, Options())[0].factor;
  // Each step keeps k = 2^(-500 / 1000) of the counts and adds 500 x 1 % expected clicks.
  const double k = std::exp2(-0.5);
  const double kept = std::pow(k, 10);
  const double expected_events = expected * kept + 5 * (1 - kept) / (1 - k);
  EXPECT_LT(after, 1);
  EXPECT_NEAR(after, (clicks * kept + 10) / (expected_events + 10), 1e-9);
  // The campaign left the catalog: its pairs go.
  known = nullptr;
  EXPECT_TRUE(tracker.Factors(rate_of, Options()).empty());
  EXPECT_EQ(tracker.pairs(), 0u);
}

TEST(PlacementTrackerTest, HoldsAtMostItsCapacityOfPairs) {
  PlacementTracker tracker(3);
  const PlacementTracker::CampaignRate rate{.rate = 0.01};
  const auto rate_of = [&](int64_t) { return &rate; };
  std::vector<PlacementDelta> deltas;
  for (int64_t p = 1; p <= 5; ++p) deltas.push_back({.key = {1, p}, .impressions = 10});
  tracker.Add(deltas, rate_of);
  EXPECT_EQ(tracker.pairs(), 3u);
  EXPECT_EQ(tracker.dropped(), 2);
}

// Bounded state, soaked (the guide's rule): a million distinct pairs go through the feed and the
// tracker over 500 recomputes, as a network with many more (campaign, publisher) pairs than the
// limit would send them. Neither ever holds more than its limit, what each turned away is
// counted exactly, the published numbers (GET /metrics) follow, and the pairs tracked first
// stay tracked (newcomers do not churn them out).
TEST(PlacementTrackerTest, SoakedWithAMillionPairsNeitherFeedNorTrackerPassesItsLimit) {
  constexpr size_t kLimit = 1024;
  PlacementFeed feed(kLimit);
  PlacementTracker tracker(kLimit);
  const PlacementTracker::CampaignRate rate{.rate = 0.01};
  const auto rate_of = [&](int64_t) { return &rate; };
  int64_t fed_dropped = 0;
  int64_t tracker_dropped = 0;
  int64_t next = 0;
  std::vector<PlacementFactors::Entry> factors;
  for (int round = 0; round < 500; ++round) {
    // 2,000 new pairs a round, one impression each: the feed keeps the first kLimit.
    for (int i = 0; i < 2000; ++i, ++next) feed.Add({1 + next % 5000, 1 + next / 5000}, 1, 0);
    const std::vector<PlacementDelta> taken = feed.Take();
    ASSERT_EQ(taken.size(), kLimit);
    fed_dropped += 2000 - static_cast<int64_t>(kLimit);
    ASSERT_EQ(feed.dropped(), fed_dropped);
    tracker.Add(taken, rate_of);
    factors = tracker.Factors(rate_of, Options());
    ASSERT_EQ(tracker.pairs(), kLimit);
    ASSERT_EQ(factors.size(), kLimit);
    // Round 0 fills the tracker; every later pair is new, so every one is turned away.
    if (round > 0) tracker_dropped += static_cast<int64_t>(kLimit);
    ASSERT_EQ(tracker.dropped(), tracker_dropped);
    ASSERT_EQ(tracker.published_pairs(), static_cast<int64_t>(kLimit));
    ASSERT_EQ(tracker.published_dropped(), tracker_dropped);
  }
  EXPECT_EQ(next, 1'000'000);
  for (const PlacementFactors::Entry& e : factors) {
    EXPECT_EQ(e.key.publisher_id, 1);  // round 0's pairs: campaigns 1..1024 on publisher 1
    EXPECT_LE(e.key.campaign_id, static_cast<int64_t>(kLimit));
  }
}

}  // namespace
}  // namespace adserver::decision
