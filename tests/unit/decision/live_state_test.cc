#include "decision/live_state.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/clock.h"
#include "decision/budget_ledger.h"
#include "decision/frequency_caps.h"
#include "decision/pacing.h"

namespace adserver::decision {
namespace {

constexpr int64_t kDayStart = 1'767'225'600;  // 2026-01-01 00:00 UTC

Address Wallet(uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

TEST(BudgetLedgerTest, AddsSpendToTotalDayAndHour) {
  BudgetLedger ledger(64);
  ledger.RecordImpression(7, 1000, kDayStart + 10);
  ledger.RecordImpression(7, 1000, kDayStart + 3700);
  BudgetLedger::View v = ledger.Read(7, kDayStart + 3700);
  EXPECT_EQ(v.total_spend, 2000);
  EXPECT_EQ(v.day_spend, 2000);
  EXPECT_EQ(v.hour_spend, 1000);
  EXPECT_EQ(v.impressions, 2);
}

TEST(BudgetLedgerTest, DailySpendStartsAtZeroOnANewUtcDay) {
  BudgetLedger ledger(64);
  ledger.RecordImpression(7, 5000, kDayStart + 86399);
  EXPECT_EQ(ledger.Read(7, kDayStart + 86399).day_spend, 5000);
  EXPECT_EQ(ledger.Read(7, kDayStart + 86400).day_spend, 0);
  ledger.RecordImpression(7, 100, kDayStart + 86400);
  BudgetLedger::View v = ledger.Read(7, kDayStart + 86400);
  EXPECT_EQ(v.day_spend, 100);
  EXPECT_EQ(v.total_spend, 5100);
}

TEST(BudgetLedgerTest, UndoConversionTakesBackItsCountAndSpend) {
  BudgetLedger ledger(64);
  ledger.RecordConversion(7, 3000, kDayStart + 100);
  ledger.RecordConversion(7, 3000, kDayStart + 200);
  ASSERT_TRUE(ledger.UndoConversion(7, 3000, kDayStart + 200));
  BudgetLedger::View v = ledger.Read(7, kDayStart + 300);
  EXPECT_EQ(v.conversions, 1);
  EXPECT_EQ(v.total_spend, 3000);
  EXPECT_EQ(v.day_spend, 3000);
  // A conversion of an earlier day comes off the total only: that day's spend is not read.
  ledger.RecordConversion(7, 500, kDayStart + 86400 + 10);
  ASSERT_TRUE(ledger.UndoConversion(7, 3000, kDayStart + 100));
  v = ledger.Read(7, kDayStart + 86400 + 20);
  EXPECT_EQ(v.total_spend, 500);
  EXPECT_EQ(v.day_spend, 500);
  EXPECT_EQ(v.conversions, 1);
  // Billed elsewhere (another node of a cluster, the CLI): this ledger goes below zero, so
  // that the sum of every node's counters is right.
  ASSERT_TRUE(ledger.UndoConversion(99, 700, kDayStart + 86400 + 5));
  v = ledger.Read(99, kDayStart + 86400 + 20);
  EXPECT_EQ(v.conversions, -1);
  EXPECT_EQ(v.total_spend, -700);
  BudgetLedger full(16);  // the smallest table
  for (int64_t id = 1; id <= 16; ++id) ASSERT_TRUE(full.RecordConversion(id, 1, kDayStart));
  EXPECT_FALSE(full.UndoConversion(17, 1, kDayStart)) << "no slot left";
}

TEST(BudgetLedgerTest, ClicksAndConversionsAreCountedSeparately) {
  BudgetLedger ledger(64);
  ledger.RecordClick(3, 200, kDayStart);
  ledger.RecordConversion(3, 0, kDayStart);
  BudgetLedger::View v = ledger.Read(3, kDayStart);
  EXPECT_EQ(v.clicks, 1);
  EXPECT_EQ(v.conversions, 1);
  EXPECT_EQ(v.impressions, 0);
  EXPECT_EQ(v.total_spend, 200);
}

TEST(BudgetLedgerTest, TakeChangedReturnsOnlyChangedCampaignsOnce) {
  BudgetLedger ledger(64);
  ledger.RecordImpression(1, 10, kDayStart);
  ledger.RecordImpression(2, 10, kDayStart);
  EXPECT_EQ(ledger.TakeChanged().size(), 2u);
  EXPECT_TRUE(ledger.TakeChanged().empty());
  ledger.RecordImpression(2, 10, kDayStart);
  std::vector<CampaignCounters> changed = ledger.TakeChanged();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].campaign_id, 2);
  EXPECT_EQ(changed[0].total_spend, 20);
  EXPECT_EQ(changed[0].day, DayOf(kDayStart));
  EXPECT_EQ(changed[0].day_spend, 20);
}

TEST(BudgetLedgerTest, RestoreRecoversPersistedCounters) {
  BudgetLedger before(64);
  before.RecordImpression(9, 700, kDayStart + 100);
  before.RecordClick(9, 0, kDayStart + 100);
  std::vector<CampaignCounters> saved = before.All();
  BudgetLedger after(64);
  for (const CampaignCounters& c : saved) after.Restore(c);
  EXPECT_EQ(after.All(), saved);
  EXPECT_TRUE(after.TakeChanged().empty());
  EXPECT_EQ(after.Read(9, kDayStart + 200).day_spend, 700);
}

TEST(BudgetLedgerTest, FullTableRefusesNewCampaigns) {
  BudgetLedger ledger(16);
  for (int64_t id = 1; id <= 16; ++id) EXPECT_TRUE(ledger.RecordImpression(id, 1, kDayStart));
  EXPECT_FALSE(ledger.RecordImpression(17, 1, kDayStart));
  EXPECT_EQ(ledger.All().size(), 16u);
  EXPECT_FALSE(ledger.Read(17, kDayStart).tracked);  // a budgeted campaign 17 cannot serve
  EXPECT_TRUE(ledger.Read(16, kDayStart).tracked);
}

TEST(FrequencyCapsTest, CountsPerWalletInsideTheWindow) {
  FrequencyCaps caps(1024);
  std::vector<Address> person = {Wallet(1), Wallet(2)};
  caps.Record(person, 5, 24, kDayStart);
  caps.Record(person, 5, 24, kDayStart + 3600);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 24, kDayStart + 3600), 2u);
  EXPECT_EQ(caps.Count(Wallet(2), 5, 24, kDayStart + 3600), 2u);
  EXPECT_EQ(caps.Count(Wallet(3), 5, 24, kDayStart + 3600), 0u);
  EXPECT_EQ(caps.Count(Wallet(1), 6, 24, kDayStart + 3600), 0u);
}

TEST(FrequencyCapsTest, WindowClosesHHoursAfterTheFirstImpression) {
  FrequencyCaps caps(1024);
  std::vector<Address> person = {Wallet(1)};
  caps.Record(person, 5, 2, kDayStart);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 7199), 1u);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 7200), 0u);
  caps.Record(person, 5, 2, kDayStart + 7200);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 7200), 1u);
}

TEST(FrequencyCapsTest, RaiseToNeverLowersAndOpensAWindowWhenNoneIs) {
  FrequencyCaps caps(1024);
  std::vector<Address> person = {Wallet(1)};
  caps.RaiseTo(Wallet(1), 5, 2, 3, kDayStart);  // the cluster served 3: a window opens here
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 10), 3u);
  caps.Record(person, 5, 2, kDayStart + 20);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 20), 4u);
  caps.RaiseTo(Wallet(1), 5, 2, 2, kDayStart + 30);  // an older total: ignored
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 30), 4u);
  caps.RaiseTo(Wallet(1), 5, 2, 0, kDayStart + 30);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 30), 4u);
  EXPECT_EQ(caps.Count(Wallet(1), 5, 2, kDayStart + 7200), 0u) << "the window still closes";
}

TEST(FrequencyCapsTest, MaxCountTakesTheMostCappedWallet) {
  FrequencyCaps caps(1024);
  std::vector<Address> one = {Wallet(1)};
  caps.Record(one, 5, 24, kDayStart);
  caps.Record(one, 5, 24, kDayStart);
  std::vector<Address> person = {Wallet(9), Wallet(1)};
  EXPECT_EQ(caps.MaxCount(person, 5, 24, kDayStart), 2u);
}

TEST(FrequencyCapsTest, StaysBoundedAndEvictsTheOldestWindow) {
  FrequencyCaps caps(FrequencyCaps::kProbe);  // one probe window: 16 entries in all
  for (int i = 0; i < 100; ++i) {
    std::vector<Address> w = {Wallet(static_cast<uint8_t>(i))};
    caps.Record(w, 1, 24, kDayStart + i);
  }
  EXPECT_GT(caps.evictions(), 0u);
  // The most recent wallets are still counted.
  EXPECT_EQ(caps.Count(Wallet(99), 1, 24, kDayStart + 100), 1u);
}

TEST(FrequencyCapsTest, MaxCountCoversEveryWalletOfALargePerson) {
  // More wallets than one prefetched batch (64): the capped wallet is the last one.
  FrequencyCaps caps(1 << 12);
  std::vector<Address> person;
  for (int i = 0; i < 70; ++i) person.push_back(Wallet(static_cast<uint8_t>(i)));
  std::vector<Address> last = {person.back()};
  for (int i = 0; i < 3; ++i) caps.Record(last, 8, 24, kDayStart);
  EXPECT_EQ(caps.MaxCount(person, 8, 24, kDayStart + 1), 3u);
  EXPECT_EQ(caps.MaxCount(std::span<const Address>(person).first(69), 8, 24, kDayStart + 1), 0u);
}

TEST(FrequencyCapsTest, CountsStayExactWhileProbeWindowsOverlap) {
  // A small table: keys share probe windows; every count read back is its own or 0 (evicted).
  FrequencyCaps caps(64);
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 40; ++i) {
      std::vector<Address> w = {Wallet(static_cast<uint8_t>(i))};
      caps.Record(w, 1 + i % 3, 24, kDayStart + round);
    }
  }
  int exact = 0;
  for (int i = 0; i < 40; ++i) {
    uint32_t n = caps.Count(Wallet(static_cast<uint8_t>(i)), 1 + i % 3, 24, kDayStart + 10);
    EXPECT_TRUE(n == 3 || n == 0) << i << ": " << n;
    exact += n == 3;
    EXPECT_EQ(caps.Count(Wallet(static_cast<uint8_t>(i)), 4, 24, kDayStart + 10), 0u);
  }
  EXPECT_GT(exact, 30);
}

TEST(RatesTest, BetaSmoothingStartsAtThePriorAndFollowsEvents) {
  EXPECT_DOUBLE_EQ(SmoothedRate(0, 0, 0.01, 1000), 0.01);
  // 10 000 impressions with 500 clicks: (500 + 10) / (10000 + 1000).
  EXPECT_DOUBLE_EQ(SmoothedRate(500, 10000, 0.01, 1000), 510.0 / 11000.0);
}

TEST(RatesTest, SyntheticClicksRaiseTheValueOfACpcCampaign) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  Campaign c;
  c.id = 4;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 1'000'000;  // 1 unit per click
  c.value_micros = 10'000;   // the catalog's default CTR of 1 % is the prior mean
  DecisionOptions options{.explore = false};  // the greedy rule: 1000 and 10000 prior weights
  double before = ExpectedValue(c, state.ledger.Read(4, kDayStart), options);
  EXPECT_DOUBLE_EQ(before, 10'000);  // 1 unit x 1 % prior
  for (int i = 0; i < 1000; ++i) RecordImpression(state, c, {}, kDayStart);
  for (int i = 0; i < 100; ++i) RecordClick(state, c, kDayStart);
  double after = ExpectedValue(c, state.ledger.Read(4, kDayStart), options);
  EXPECT_DOUBLE_EQ(after, 1'000'000 * (100 + 10) / 2000.0);
  EXPECT_EQ(state.ledger.Read(4, kDayStart).total_spend, 100 * 1'000'000);
}

TEST(RatesTest, SyntheticConversionsFeedTheCpaValue) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  Campaign c;
  c.id = 5;
  c.pricing_model = PricingModel::kCpa;
  c.bid_micros = 50'000'000;
  c.value_micros = 50'000;  // default CVR 0.1 %
  DecisionOptions options{.explore = false};  // the greedy rule: 1000 and 10000 prior weights
  EXPECT_DOUBLE_EQ(ExpectedValue(c, state.ledger.Read(5, kDayStart), options), 50'000);
  for (int i = 0; i < 10000; ++i) RecordImpression(state, c, {}, kDayStart);
  for (int i = 0; i < 20; ++i) RecordConversion(state, c, kDayStart);
  EXPECT_DOUBLE_EQ(ExpectedValue(c, state.ledger.Read(5, kDayStart), options),
                   50'000'000 * (20 + 10) / 20000.0);
}

// Cluster mode (issue 17): leases, shared caps and the other nodes' counters in LiveState.
TEST(ClusterStateTest, ImpressionsAreAuthorisedFromTheLeaseAndNeverPastIt) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  state.leases = &leases;
  Campaign c;
  c.id = 7;
  c.pricing_model = PricingModel::kCpm;
  c.bid_micros = 2'000'000;  // 2,000 per impression
  c.total_budget_micros = 10'000;
  EXPECT_EQ(LeaseNeed(c), 2'000);
  EXPECT_FALSE(AuthorizeImpression(state, c)) << "no lease yet";
  LeasedCampaign leased{.campaign_id = 7, .budget = 10'000, .max_price = LeaseNeed(c)};
  int authorised = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(leases.Refill({&leased, 1}).ok());
    if (AuthorizeImpression(state, c)) ++authorised;
  }
  EXPECT_EQ(authorised, 5) << "10,000 of budget pays 5 impressions of 2,000";
  Campaign unbudgeted = c;
  unbudgeted.id = 8;
  unbudgeted.total_budget_micros.reset();
  EXPECT_TRUE(AuthorizeImpression(state, unbudgeted)) << "only total budgets are leased";
  state.leases = nullptr;
  EXPECT_TRUE(AuthorizeImpression(state, c)) << "embedded: the ledger's budget rule alone";
}

TEST(ClusterStateTest, BilledClicksAreChargedToTheLease) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  state.leases = &leases;
  Campaign c;
  c.id = 9;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 300'000;
  c.total_budget_micros = 100'000'000;
  EXPECT_EQ(LeaseNeed(c), 300'000) << "one click's bid";
  LeasedCampaign leased{.campaign_id = 9, .budget = 100'000'000, .max_price = LeaseNeed(c)};
  ASSERT_TRUE(leases.Refill({&leased, 1}).ok());  // slice 500,000
  RecordClick(state, c, 300'000, kDayStart);
  EXPECT_EQ(leases.Held(9), 200'000);
  RecordConversion(state, c, 0, kDayStart);
  EXPECT_EQ(leases.Held(9), 200'000) << "a conversion of a CPC campaign costs nothing";
}

TEST(ClusterStateTest, AReorgedConversionComesOffTheLedgerAndBackToTheLease) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  state.leases = &leases;
  Campaign c;
  c.id = 4;
  c.pricing_model = PricingModel::kCpa;
  c.bid_micros = 3'000'000;
  c.total_budget_micros = 100'000'000;
  LeasedCampaign leased{.campaign_id = 4, .budget = 100'000'000, .max_price = LeaseNeed(c)};
  ASSERT_TRUE(leases.Refill({&leased, 1}).ok());  // slice 3,000,000
  RecordConversion(state, c, 3'000'000, kDayStart);
  EXPECT_EQ(leases.Held(4), 0);
  UndoConversion(state, 4, &c, 3'000'000, kDayStart);
  EXPECT_EQ(leases.Held(4), 3'000'000);
  BudgetLedger::View v = state.Read(4, kDayStart + 10);
  EXPECT_EQ(v.conversions, 0);
  EXPECT_EQ(v.total_spend, 0);
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(*authority.Take(4, 1'000'000'000), 100'000'000) << "the budget is whole again";
  // A campaign gone from the catalog: the ledger only.
  RecordConversion(state, c, 3'000'000, kDayStart);
  UndoConversion(state, 4, nullptr, 3'000'000, kDayStart);
  EXPECT_EQ(state.Read(4, kDayStart + 10).conversions, 0);
  EXPECT_EQ(leases.Held(4), -3'000'000);
}

TEST(ClusterStateTest, DecisionsReadTheOtherNodesCountersToo) {
  LiveState state(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64});
  BudgetLedger others(64);
  state.ledger.RecordImpression(3, 1'000, kDayStart);
  others.Restore({.campaign_id = 3, .total_spend = 5'000, .impressions = 9, .clicks = 2,
                  .conversions = 1, .day = kDayStart / 86400, .day_spend = 4'000,
                  .hour = kDayStart / 3600, .hour_spend = 3'000});
  EXPECT_EQ(state.Read(3, kDayStart).total_spend, 1'000);
  state.others = &others;
  BudgetLedger::View v = state.Read(3, kDayStart);
  EXPECT_EQ(v.total_spend, 6'000);
  EXPECT_EQ(v.day_spend, 5'000);
  EXPECT_EQ(v.hour_spend, 4'000);
  EXPECT_EQ(v.impressions, 10);
  EXPECT_EQ(v.clicks, 2);
  EXPECT_EQ(v.conversions, 1);
  EXPECT_EQ(state.Read(3, kDayStart + 86400).day_spend, 0) << "another day";
}

TEST(PacingTest, EvenFactorAtExactBoundaries) {
  DecisionOptions o;  // lead 1 %, catch-up 10 %, boost 1
  const Micros budget = 1'000'000;
  EXPECT_DOUBLE_EQ(EvenPacingFactor(500'000, budget, 0.5, o), 1.0);  // on the line
  EXPECT_DOUBLE_EQ(EvenPacingFactor(505'000, budget, 0.5, o), 0.5);  // half the lead
  EXPECT_DOUBLE_EQ(EvenPacingFactor(510'000, budget, 0.5, o), 0.0);  // a full lead ahead
  EXPECT_DOUBLE_EQ(EvenPacingFactor(450'000, budget, 0.5, o), 1.5);  // half the catch-up
  EXPECT_DOUBLE_EQ(EvenPacingFactor(0, budget, 0.5, o), 2.0);        // boost capped
}

TEST(PacingTest, AsapAndUnbudgetedCampaignsAreNotPaced) {
  DecisionOptions o;
  Micros daily = 1000;
  EXPECT_EQ(
      PacingFactor(
          {.mode = PacingMode::kAsap, .now = kDayStart, .daily_budget = &daily, .day_spend = 999},
          o),
      1.0);
  EXPECT_EQ(PacingFactor({.mode = PacingMode::kEven, .now = kDayStart}, o), 1.0);
}

TEST(PacingTest, HourCapStopsAnHourAtTheMultipleOfItsShare) {
  DecisionOptions o;
  Micros daily = 24'000'000;  // share 1'000'000 per hour, cap 1.8x
  PacingInput in{.now = kDayStart + 12 * 3600,
                 .daily_budget = &daily,
                 .day_spend = 0,
                 .hour_spend = 1'799'999};
  EXPECT_GT(PacingFactor(in, o), 0.0);
  in.hour_spend = 1'800'000;
  EXPECT_EQ(PacingFactor(in, o), 0.0);
}

}  // namespace
}  // namespace adserver::decision
