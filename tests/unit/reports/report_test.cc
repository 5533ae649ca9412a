#include "reports/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

namespace adserver::reports {
namespace {

using ::testing::ElementsAre;

SourceRow Row(int64_t bucket, Id publisher, std::string ad_unit, Id campaign, int64_t fills,
              int64_t clicks, Micros spend) {
  SourceRow r;
  r.bucket = bucket;
  r.publisher_id = publisher;
  r.ad_unit_id = std::move(ad_unit);
  r.campaign_id = campaign;
  r.ad_id = campaign * 10;
  r.community_id = campaign == 0 ? 0 : 100 + campaign % 2;
  r.arm = campaign % 2 == 0 ? "a" : "b";
  r.requests = fills;
  r.fills = fills;
  r.clicks = clicks;
  r.spend = spend;
  return r;
}

TEST(EarningsTest, RevshareIsPercentOfSpend) {
  Payout p{.model = Payout::Model::kRevshare, .percent = 70};
  EXPECT_EQ(Earnings(p, 1000, 10'000'000), 7'000'000);
  p.percent = 62.5;
  EXPECT_EQ(Earnings(p, 0, 3), 2);  // 1.875 micros rounds to 2
  p.percent = 0;
  EXPECT_EQ(Earnings(p, 1000, 10'000'000), 0);
}

TEST(EarningsTest, CpmIsPerThousandFillsWhateverTheSpend) {
  Payout p{.model = Payout::Model::kCpm, .cpm_micros = 10'000'000};
  EXPECT_EQ(Earnings(p, 2500, 0), 25'000'000);
  EXPECT_EQ(Earnings(p, 1, 999'999'999), 10'000);
  EXPECT_EQ(Earnings(p, 0, 5'000'000), 0);
}

TEST(DeriveTest, RatiosPerImpression) {
  Counts c{.fills = 2000, .clicks = 50, .conversions = 4, .spend = 30'000'000};
  Derived d = Derive(c);
  EXPECT_DOUBLE_EQ(d.ctr, 0.025);
  EXPECT_DOUBLE_EQ(d.cvr, 0.002);
  EXPECT_EQ(d.ecpm, 15'000'000);
}

TEST(DeriveTest, NoImpressionsGivesZeros) {
  Derived d = Derive(Counts{.requests = 5, .no_fills = 5, .clicks = 1});
  EXPECT_EQ(d.ctr, 0);
  EXPECT_EQ(d.cvr, 0);
  EXPECT_EQ(d.ecpm, 0);
}

TEST(AggregateTest, SumsOverDimensionsNotGroupedBy) {
  std::vector<SourceRow> rows = {Row(0, 1, "top", 1, 100, 2, 1'000'000),
                                 Row(0, 1, "side", 2, 50, 1, 500'000),
                                 Row(86400, 1, "top", 1, 10, 0, 100'000)};
  Report r = Aggregate(rows, {.group_by = {Dimension::kAdUnit}, .by_bucket = false});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].ad_unit_id, "side");  // ordered by the dimension
  EXPECT_EQ(r.rows[0].counts.fills, 50);
  EXPECT_EQ(r.rows[1].ad_unit_id, "top");
  EXPECT_EQ(r.rows[1].counts.fills, 110);
  EXPECT_EQ(r.rows[1].counts.clicks, 2);
  EXPECT_EQ(r.rows[1].counts.spend, 1'100'000);
  EXPECT_EQ(r.rows[1].campaign_id, 0);  // not grouped by
  EXPECT_EQ(r.rows[1].bucket, 0);
  EXPECT_EQ(r.totals.fills, 160);
  EXPECT_EQ(r.totals.spend, 1'600'000);
}

TEST(AggregateTest, KeepsBucketsInOrder) {
  std::vector<SourceRow> rows = {Row(7200, 1, "", 1, 1, 0, 0), Row(3600, 1, "", 2, 2, 0, 0),
                                 Row(3600, 1, "", 1, 3, 0, 0)};
  Report r = Aggregate(rows, {.group_by = {}, .by_bucket = true});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].bucket, 3600);
  EXPECT_EQ(r.rows[0].counts.fills, 5);
  EXPECT_EQ(r.rows[1].bucket, 7200);
  EXPECT_EQ(r.rows[1].counts.fills, 1);
}

TEST(AggregateTest, GroupsByEveryDimension) {
  std::vector<SourceRow> rows = {Row(0, 1, "u", 1, 1, 0, 0), Row(0, 1, "u", 2, 1, 0, 0),
                                 Row(0, 2, "u", 1, 1, 0, 0), Row(0, 2, "u", 3, 1, 0, 0)};
  Report by_community = Aggregate(rows, {.group_by = {Dimension::kCommunity}});
  ASSERT_EQ(by_community.rows.size(), 2u);
  EXPECT_EQ(by_community.rows[0].community_id, 100);
  EXPECT_EQ(by_community.rows[0].counts.fills, 1);
  EXPECT_EQ(by_community.rows[1].community_id, 101);
  EXPECT_EQ(by_community.rows[1].counts.fills, 3);
  Report by_arm_and_publisher =
      Aggregate(rows, {.group_by = {Dimension::kArm, Dimension::kPublisher}});
  std::vector<std::pair<Id, std::string>> keys;
  for (const ReportRow& row : by_arm_and_publisher.rows)
    keys.emplace_back(row.publisher_id, row.arm);
  EXPECT_THAT(keys,
              ElementsAre(std::pair<Id, std::string>{1, "a"}, std::pair<Id, std::string>{1, "b"},
                          std::pair<Id, std::string>{2, "b"}));
  Report by_ad = Aggregate(rows, {.group_by = {Dimension::kAd, Dimension::kCampaign}});
  ASSERT_EQ(by_ad.rows.size(), 3u);
  EXPECT_EQ(by_ad.rows[0].ad_id, 10);
  EXPECT_EQ(by_ad.rows[0].campaign_id, 1);
  EXPECT_EQ(by_ad.rows[0].counts.fills, 2);
}

TEST(AggregateTest, EarningsFollowEachPublishersPayout) {
  // Publisher 1: revshare 50 %; publisher 2: CPM 4; publisher 3: unknown (default 70 %).
  std::unordered_map<Id, Payout> payouts = {
      {1, Payout{.model = Payout::Model::kRevshare, .percent = 50}},
      {2, Payout{.model = Payout::Model::kCpm, .cpm_micros = 4'000'000}}};
  std::vector<SourceRow> rows = {Row(0, 1, "u", 1, 1000, 0, 8'000'000),
                                 Row(0, 2, "u", 1, 500, 0, 8'000'000),
                                 Row(0, 3, "u", 1, 10, 0, 1'000'000)};
  Report merged = Aggregate(rows, {.group_by = {}, .payouts = &payouts});
  ASSERT_EQ(merged.rows.size(), 1u);
  // 4 (half of 8) + 2 (500 x 4 / 1000) + 0.7 (70 % of 1).
  EXPECT_EQ(merged.rows[0].counts.earnings, 6'700'000);
  EXPECT_EQ(merged.totals.earnings, 6'700'000);
  Report split = Aggregate(rows, {.group_by = {Dimension::kPublisher}, .payouts = &payouts});
  ASSERT_EQ(split.rows.size(), 3u);
  EXPECT_EQ(split.rows[0].counts.earnings, 4'000'000);
  EXPECT_EQ(split.rows[1].counts.earnings, 2'000'000);
  EXPECT_EQ(split.rows[2].counts.earnings, 700'000);
}

TEST(AggregateTest, EmptyInputGivesNoRowsAndZeroTotals) {
  Report r = Aggregate({}, {});
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.totals, Counts{});
}

TEST(SourceBucketTest, CoarsestTableThatFitsGranularityAndRange) {
  constexpr int64_t kDay = 86400;
  constexpr int64_t kMidnight = 20000 * kDay;
  EXPECT_EQ(SourceBucketSeconds(Granularity::kDay, kMidnight, kMidnight + 90 * kDay), kDay);
  EXPECT_EQ(SourceBucketSeconds(Granularity::kTotal, kMidnight, kMidnight + kDay), kDay);
  // Hourly rows never come from daily rollups.
  EXPECT_EQ(SourceBucketSeconds(Granularity::kHour, kMidnight, kMidnight + kDay), 3600);
  EXPECT_EQ(SourceBucketSeconds(Granularity::kMinute, kMidnight, kMidnight + kDay), 60);
  // A range ending mid-day reads hours, mid-hour reads minutes.
  EXPECT_EQ(SourceBucketSeconds(Granularity::kDay, kMidnight, kMidnight + 7200), 3600);
  EXPECT_EQ(SourceBucketSeconds(Granularity::kTotal, kMidnight + 3600, kMidnight + 5400), 60);
  EXPECT_EQ(SourceBucketSeconds(Granularity::kTotal, kMidnight + 1, kMidnight + 5400), 60);
}

TEST(ParseTest, NamesRoundTrip) {
  for (Dimension d : {Dimension::kPublisher, Dimension::kAdUnit, Dimension::kCampaign,
                      Dimension::kAd, Dimension::kCommunity, Dimension::kArm}) {
    EXPECT_EQ(ParseDimension(DimensionName(d)), d);
  }
  EXPECT_EQ(ParseDimension("adUnit"), std::nullopt);
  EXPECT_EQ(DimensionKey(Dimension::kCampaign), "campaignId");
  EXPECT_EQ(ParseGranularity("hour"), Granularity::kHour);
  EXPECT_EQ(ParseGranularity("week"), std::nullopt);
  EXPECT_EQ(BucketSeconds(Granularity::kDay), 86400);
  EXPECT_EQ(BucketSeconds(Granularity::kTotal), 0);
}

}  // namespace
}  // namespace adserver::reports
