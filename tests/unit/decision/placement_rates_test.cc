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

TEST(PlacementFactorsTest, AnAdUnitsFactorMultipliesItsPublishersAndTheCeilingCoversIt) {
  const uint64_t hero = AdUnitKey("hero");
  const uint64_t footer = AdUnitKey("footer");
  const std::vector<PlacementFactors::Entry> entries{
      {{1, 1}, 1.5},       {{1, 1, hero}, 2},  {{1, 1, footer}, 0.2},  // campaign 1 on publisher 1
      {{1, 2, hero}, 1.2},                        // a unit without its publisher's
      {{2, 1}, 0.5},       {{2, 1, hero}, 0.5}};  // campaign 2: everything below 1
  const PlacementFactors factors(entries);
  EXPECT_EQ(factors.size(), entries.size());
  EXPECT_DOUBLE_EQ(factors.Factor(1, 1), 1.5);                     // no adUnitId: the publisher's
  EXPECT_DOUBLE_EQ(factors.Factor(1, 1, hero), 3);                 // 1.5 x 2
  EXPECT_DOUBLE_EQ(factors.Factor(1, 1, footer), 0.3);             // 1.5 x 0.2
  EXPECT_DOUBLE_EQ(factors.Factor(1, 1, AdUnitKey("side")), 1.5);  // a unit not tracked
  EXPECT_DOUBLE_EQ(factors.Factor(1, 2, hero), 1.2);               // its publisher at 1
  EXPECT_DOUBLE_EQ(factors.Factor(1, 2), 1);
  EXPECT_DOUBLE_EQ(factors.Ceiling(1), 3);  // the best placement: publisher 1's hero
  EXPECT_DOUBLE_EQ(factors.Ceiling(2), 1);  // 0.25 at best: an untracked publisher's 1
  // The key of an adUnitId is fixed (it is written to PostgreSQL and read by other builds).
  EXPECT_EQ(AdUnitKey(""), 0u);
  EXPECT_EQ(AdUnitKey("hero"), AdUnitKey(std::string("he") + "ro"));
  EXPECT_NE(AdUnitKey("hero"), AdUnitKey("Hero"));
  EXPECT_EQ(AdUnitKey("hero"), 0xf7e1cfb74dfef33bULL);
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
    tracker.Add(deltas, rate_of, Options());
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

// Issue 36 item 5, per placement: a campaign at 1 % overall does 2.5 % on publisher 1, 4 % in
// its "hero" placement and 1 % in its "footer" (equal traffic). The publisher's factor is
// learned from both units, each unit's relative to its publisher: hero 1.6, footer 0.4, so the
// campaign is valued at 4 % and 1 % there. Off, only the publisher is tracked.
TEST(PlacementTrackerTest, LearnsEachAdUnitsRateAgainstItsPublishers) {
  const uint64_t hero = AdUnitKey("hero");
  const uint64_t footer = AdUnitKey("footer");
  const PlacementTracker::CampaignRate rate{.rate = 0.01, .maturity = 1, .half_life = 0};
  const auto rate_of = [&](int64_t id) { return id == 1 ? &rate : nullptr; };
  for (bool units : {true, false}) {
    DecisionOptions options = Options();
    options.placement_ad_units = units;
    PlacementTracker tracker(64);
    std::mt19937_64 gen(7);
    std::bernoulli_distribution click_hero(0.04), click_footer(0.01);
    for (int tick = 0; tick < 1000; ++tick) {  // 200,000 impressions in each unit
      std::vector<PlacementDelta> deltas{{.key = {1, 1, footer}, .impressions = 200},
                                         {.key = {1, 1, hero}, .impressions = 200}};
      for (int i = 0; i < 200; ++i) {
        deltas[0].events += click_footer(gen);
        deltas[1].events += click_hero(gen);
      }
      tracker.Add(deltas, rate_of, options);
    }
    const std::vector<PlacementFactors::Entry> entries = tracker.Factors(rate_of, options);
    const PlacementFactors factors(entries);
    EXPECT_NEAR(factors.Factor(1, 1), 2.5, 0.1);
    if (!units) {
      EXPECT_EQ(entries.size(), 1u);
      EXPECT_DOUBLE_EQ(factors.Factor(1, 1, hero), factors.Factor(1, 1));
      continue;
    }
    EXPECT_EQ(entries.size(), 3u);
    // About 8,000 and 2,000 clicks: within 3 standard deviations.
    EXPECT_NEAR(factors.Factor(1, 1, hero) / factors.Factor(1, 1), 1.6, 0.06);
    EXPECT_NEAR(factors.Factor(1, 1, footer) / factors.Factor(1, 1), 0.4, 0.03);
    EXPECT_NEAR(factors.Factor(1, 1, hero), 4.0, 0.15);
    EXPECT_NEAR(factors.Factor(1, 1, footer), 1.0, 0.07);
  }
}

// One batch holding a long record of both units (start-up's restore) gives the same factors
// whichever unit comes first: units are measured against their publisher after the batch.
TEST(PlacementTrackerTest, AUnitsFactorDoesNotDependOnTheOrderOfABatch) {
  const uint64_t hero = AdUnitKey("hero");
  const uint64_t footer = AdUnitKey("footer");
  const PlacementTracker::CampaignRate rate{.rate = 0.05, .maturity = 1, .half_life = 0};
  const auto rate_of = [&](int64_t) { return &rate; };
  std::vector<PlacementDelta> batch{{.key = {2, 1, hero}, .impressions = 20'000, .events = 2'000},
                                    {.key = {2, 1, footer}, .impressions = 20'000, .events = 100}};
  std::vector<double> hero_factor;
  for (int order = 0; order < 2; ++order) {
    PlacementTracker tracker(64);
    tracker.Add(batch, rate_of, Options(3));
    const std::vector<PlacementFactors::Entry> entries = tracker.Factors(rate_of, Options(3));
    hero_factor.push_back(PlacementFactors(entries).Factor(2, 1, hero));
    std::swap(batch[0], batch[1]);
  }
  EXPECT_DOUBLE_EQ(hero_factor[0], hero_factor[1]);
  // 10 % in the hero placement against 5 % overall: about 2.
  EXPECT_NEAR(hero_factor[0], 2, 0.01);
}

TEST(PlacementTrackerTest, ForgetsAsTheCampaignDoesAndDropsPairsOfCampaignsThatLeft) {
  PlacementTracker tracker(64);
  PlacementTracker::CampaignRate rate{.rate = 0.01, .maturity = 1, .half_life = 1000};
  const PlacementTracker::CampaignRate* known = &rate;
  const auto rate_of = [&](int64_t) { return known; };
  // A record restored at start-up: 100 clicks in 5,000 impressions (2 %), scaled to what
  // forgetting keeps (1,000 / ln 2 = 1,443 impressions' worth).
  tracker.Add(std::vector<PlacementDelta>{{.key = {1, 1}, .impressions = 5000, .events = 100}},
              rate_of, Options());
  const double scale = 1000 / std::numbers::ln2 / 5000;
  const double clicks = 100 * scale;
  const double expected = 5000 * scale * 0.01;
  EXPECT_NEAR(tracker.Factors(rate_of, Options())[0].factor, (clicks + 10) / (expected + 10),
              1e-9);
  EXPECT_NEAR(tracker.Factors(rate_of, Options())[0].factor, 1.59, 0.01);
  // Then the publisher's readers stop clicking.
  for (int i = 0; i < 10; ++i) {
    tracker.Add(std::vector<PlacementDelta>{{.key = {1, 1}, .impressions = 500}}, rate_of,
                Options());
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
  tracker.Add(deltas, rate_of, Options());
  EXPECT_EQ(tracker.pairs(), 3u);
  EXPECT_EQ(tracker.dropped(), 2);
}

// adUnitIds are the client's free-form strings. A flood of distinct ones (a client inventing a
// new id per request) never takes the keys publishers need: the feed holds at most half its
// keys as units and counts the rest under their publisher, the tracker at most
// kMaxUnitsPerPublisher per pair and half its keys in all. Every impression still teaches the
// publisher's factor, and a publisher arriving after the flood is tracked.
TEST(PlacementTrackerTest, AFloodOfAdUnitIdsNeitherCrowdsOutPublishersNorLosesTheirCounts) {
  constexpr size_t kLimit = 1024;
  PlacementFeed feed(kLimit);
  PlacementTracker tracker(kLimit);
  const PlacementTracker::CampaignRate rate{.rate = 0.01};
  const auto rate_of = [&](int64_t) { return &rate; };
  const DecisionOptions options = Options(3);
  int64_t next = 0;
  for (int round = 0; round < 200; ++round) {
    // 1,000 new adUnitIds a round on 8 publishers of campaign 1, one impression each.
    for (int i = 0; i < 1000; ++i, ++next) {
      feed.Add({1, 1 + next % 8, AdUnitKey("unit-" + std::to_string(next))}, 1, 0);
    }
    const std::vector<PlacementDelta> taken = feed.Take();
    size_t units = 0;
    int64_t impressions = 0;
    for (const PlacementDelta& d : taken) {
      units += d.key.unit != 0;
      impressions += d.impressions;
    }
    ASSERT_LE(units, kLimit / 2);
    ASSERT_EQ(impressions, 1000);  // nothing dropped: the rest went to the publishers' keys
    ASSERT_EQ(feed.dropped(), 0);
    tracker.Add(taken, rate_of, options);
    tracker.Factors(rate_of, options);
    ASSERT_LE(tracker.pairs(), 8 + 8 * static_cast<size_t>(kMaxUnitsPerPublisher));
  }
  // A second campaign's publishers and units after the flood: tracked.
  tracker.Add(std::vector<PlacementDelta>{{.key = {2, 1}, .impressions = 100, .events = 5},
                                          {.key = {2, 2, AdUnitKey("hero")}, .impressions = 100}},
              rate_of, options);
  std::map<std::pair<int64_t, int64_t>, int> units_of;
  for (const PlacementFactors::Entry& e : tracker.Factors(rate_of, options)) {
    if (e.key.unit != 0) ++units_of[{e.key.campaign_id, e.key.publisher_id}];
  }
  for (int64_t p = 1; p <= 8; ++p) EXPECT_EQ((units_of[{1, p}]), kMaxUnitsPerPublisher);
  EXPECT_EQ((units_of[{2, 2}]), 1);
  const PlacementFactors factors(tracker.Factors(rate_of, options));
  EXPECT_GT(factors.Factor(2, 1), 1);  // 5 clicks where 1 was expected
  // Many publishers: units never take more than half the keys.
  PlacementTracker wide(kLimit);
  std::vector<PlacementDelta> deltas;
  for (int64_t p = 1; p <= 100; ++p) {
    for (int u = 0; u < 20; ++u) {
      deltas.push_back({.key = {3, p, AdUnitKey("u" + std::to_string(u))}, .impressions = 1});
    }
  }
  wide.Add(deltas, rate_of, options);
  size_t unit_keys = 0;
  for (const PlacementFactors::Entry& e : wide.Factors(rate_of, options))
    unit_keys += e.key.unit != 0;
  EXPECT_EQ(unit_keys, kLimit / 2);
  EXPECT_EQ(wide.pairs(), 100 + kLimit / 2);
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
    tracker.Add(taken, rate_of, Options());
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
