#include "demo/traffic.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "store/sqlite/sqlite_events_store.h"
#include "support/temp_dir.h"

namespace adserver::demo {
namespace {

constexpr int64_t kNow = 1'795'000'000 + 13 * 3600 + 17;  // an afternoon
constexpr int64_t kDay = 86400;
constexpr store::Id kPublisher = 3;

std::vector<DemoTrafficCampaign> Campaigns() {
  return {
      {.campaign_id = 1,
       .ad_id = 11,
       .model = PricingModel::kCpm,
       .bid_micros = 9'000'000,
       .daily_impressions = 9000,
       .ctr = 0.012},
      {.campaign_id = 2,
       .ad_id = 12,
       .model = PricingModel::kCpc,
       .bid_micros = 400'000,
       .daily_impressions = 6000,
       .ctr = 0.021},
      {.campaign_id = 3,
       .ad_id = 13,
       .model = PricingModel::kCpa,
       .bid_micros = 2'000'000,
       .daily_impressions = 3000,
       .ctr = 0.007,
       .conversions_per_click = 0.1},
  };
}

struct Totals {
  int64_t requests = 0, fills = 0, no_fills = 0, billed = 0, duplicates = 0, conversions = 0;
  Micros impression_spend = 0, click_spend = 0, conversion_spend = 0;
};

std::map<store::Id, Totals> ByCampaign(const DemoTraffic& t) {
  std::map<store::Id, Totals> out;
  for (const store::RollupRow& r : t.serving) {
    Totals& x = out[r.campaign_id];
    x.requests += r.requests;
    x.fills += r.fills;
    x.no_fills += r.no_fills;
    x.impression_spend += r.impression_spend;
  }
  for (const store::ClickRecord& c : t.clicks) {
    Totals& x = out[c.campaign_id];
    (c.status == store::ClickStatus::kBilled ? x.billed : x.duplicates) += 1;
    x.click_spend += c.price;
  }
  for (const store::ConversionCandidate& c : t.conversions) {
    out[c.record.campaign_id].conversions += 1;
    out[c.record.campaign_id].conversion_spend += c.record.price;
  }
  return out;
}

TEST(DemoTrafficTest, SameSeedSameRowsOtherSeedOtherRows) {
  DemoTraffic a = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  DemoTraffic b = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  ASSERT_EQ(a.serving.size(), b.serving.size());
  ASSERT_EQ(a.clicks.size(), b.clicks.size());
  ASSERT_EQ(a.conversions.size(), b.conversions.size());
  for (size_t i = 0; i < a.conversions.size(); ++i) {
    EXPECT_EQ(a.conversions[i].record.tx_hash, b.conversions[i].record.tx_hash);
  }
  EXPECT_EQ(ByCampaign(a)[1].fills, ByCampaign(b)[1].fills);
  DemoTraffic c = GenerateDemoTraffic(Campaigns(), kPublisher, kNow, {.seed = 8});
  EXPECT_NE(ByCampaign(a)[1].fills, ByCampaign(c)[1].fills);
}

TEST(DemoTrafficTest, CoversTheDaysBeforeTodayAndNothingLater) {
  DemoTraffic t = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  const int64_t today = kNow - kNow % kDay;
  std::map<int64_t, int64_t> fills_by_day;
  for (const store::RollupRow& r : t.serving) {
    EXPECT_GE(r.bucket, today - 7 * kDay);
    EXPECT_LT(r.bucket, today);
    EXPECT_EQ(r.publisher_id, kPublisher);
    fills_by_day[r.bucket - r.bucket % kDay] += r.fills;
  }
  ASSERT_EQ(fills_by_day.size(), 7u);
  std::set<int64_t> distinct;
  for (auto [day, fills] : fills_by_day) {
    EXPECT_GT(fills, 10'000) << day;
    distinct.insert(fills);
  }
  EXPECT_EQ(distinct.size(), 7u);  // noise: no two days alike
  for (const store::ClickRecord& c : t.clicks) {
    EXPECT_LT(c.clicked_at, today);
    EXPECT_LT(c.served_at, c.clicked_at);
  }
  for (const store::ConversionCandidate& c : t.conversions) {
    EXPECT_LT(c.record.block_time, kNow);
    EXPECT_GE(c.record.block_time, c.record.touched_at);
  }
}

TEST(DemoTrafficTest, AfternoonsAreBusierThanNights) {
  DemoTraffic t = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  int64_t night = 0, afternoon = 0;
  for (const store::RollupRow& r : t.serving) {
    int hour = static_cast<int>(r.bucket % kDay / 3600);
    if (hour >= 1 && hour < 5) night += r.requests;
    if (hour >= 13 && hour < 17) afternoon += r.requests;
  }
  EXPECT_GT(afternoon, 2 * night);
}

TEST(DemoTrafficTest, RatesArePlausibleAndSpendFollowsThePricingModel) {
  DemoTraffic t = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  std::map<store::Id, Totals> by = ByCampaign(t);
  for (const DemoTrafficCampaign& c : Campaigns()) {
    SCOPED_TRACE(c.campaign_id);
    const Totals& x = by[c.campaign_id];
    EXPECT_EQ(x.requests, x.fills);  // a campaign's rows are filled requests
    double ctr = static_cast<double>(x.billed) / static_cast<double>(x.fills);
    EXPECT_GT(ctr, 0.005);
    EXPECT_LT(ctr, 0.03);
    EXPECT_GT(x.conversions, 0);
    EXPECT_LT(x.conversions, x.billed);
    EXPECT_GT(x.duplicates, 0);
    switch (c.model) {
      case PricingModel::kCpm:
        EXPECT_NEAR(x.impression_spend, x.fills * c.bid_micros / 1000, 1000);
        EXPECT_EQ(x.click_spend, 0);
        EXPECT_EQ(x.conversion_spend, 0);
        break;
      case PricingModel::kCpc:
        EXPECT_EQ(x.impression_spend, 0);
        EXPECT_EQ(x.click_spend, x.billed * c.bid_micros);
        EXPECT_EQ(x.conversion_spend, 0);
        break;
      case PricingModel::kCpa:
        EXPECT_EQ(x.impression_spend, 0);
        EXPECT_EQ(x.click_spend, 0);
        EXPECT_EQ(x.conversion_spend, x.conversions * c.bid_micros);
        break;
    }
  }
  // Requests that found nothing: about 18 % of all.
  const Totals& unfilled = by[0];
  int64_t all = 0;
  for (auto& [id, x] : by) all += x.requests;
  double fill_rate = 1.0 - static_cast<double>(unfilled.no_fills) / static_cast<double>(all);
  EXPECT_GT(fill_rate, 0.75);
  EXPECT_LT(fill_rate, 0.9);
}

TEST(DemoTrafficTest, ConversionsLookOnchain) {
  DemoTraffic t = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  std::set<std::array<uint8_t, 32>> hashes;
  int clicks = 0;
  for (const store::ConversionCandidate& c : t.conversions) {
    hashes.insert(c.record.tx_hash);
    EXPECT_EQ(c.record.chain_id, 1);
    // Ethereum mainnet passed block 23 million in 2025.
    EXPECT_GT(c.record.block_number, 23'000'000);
    EXPECT_NE(c.record.wallet, Address{});
    clicks += c.record.click_touch;
  }
  EXPECT_EQ(hashes.size(), t.conversions.size());
  EXPECT_GT(clicks, 0);
  EXPECT_LT(clicks, static_cast<int>(t.conversions.size()));  // view-through ones too
}

// Written through the real SQLite events store, the history reads back as served traffic.
TEST(DemoTrafficTest, WritesThroughTheEventsStore) {
  adserver::testing::TempDir dir;
  auto opened = store::SqliteEventsStore::Open(dir.File("adserver.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store::EventsStore& events = **opened;
  DemoTraffic t = GenerateDemoTraffic(Campaigns(), kPublisher, kNow);
  std::map<store::Id, Totals> by = ByCampaign(t);
  ASSERT_TRUE(WriteDemoTraffic(events, t, kNow).ok());
  for (const DemoTrafficCampaign& c : Campaigns()) {
    SCOPED_TRACE(c.campaign_id);
    auto totals = events.CampaignTotals(c.campaign_id);
    ASSERT_TRUE(totals.ok()) << totals.status().ToString();
    EXPECT_EQ(totals->impressions, by[c.campaign_id].fills);
    EXPECT_EQ(totals->impression_spend, by[c.campaign_id].impression_spend);
    EXPECT_EQ(totals->conversions, by[c.campaign_id].conversions);
    EXPECT_EQ(totals->conversion_spend, by[c.campaign_id].conversion_spend);
    auto clicks = events.ListClicks({.campaign_id = c.campaign_id, .limit = 1'000'000});
    ASSERT_TRUE(clicks.ok());
    EXPECT_EQ(static_cast<int64_t>(clicks->size()),
              by[c.campaign_id].billed + by[c.campaign_id].duplicates);
    auto conversions = events.ListConversions({.campaign_id = c.campaign_id, .limit = 1'000'000});
    ASSERT_TRUE(conversions.ok());
    EXPECT_EQ(static_cast<int64_t>(conversions->size()), by[c.campaign_id].conversions);
  }
}

}  // namespace
}  // namespace adserver::demo
