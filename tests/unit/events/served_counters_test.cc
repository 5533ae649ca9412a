#include "events/served_counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace adserver::events {
namespace {

const store::RollupRow* Find(const std::vector<store::RollupRow>& rows, std::string_view ad_unit,
                             int64_t campaign) {
  for (const auto& r : rows) {
    if (r.ad_unit_id == ad_unit && r.campaign_id == campaign) return &r;
  }
  return nullptr;
}

TEST(ServedCountersTest, CountsPerMinuteAndDimensions) {
  ServedCounters counters;
  ServedKey fill{.unix_seconds = 1'000'000'059,
                 .publisher_id = 1,
                 .ad_unit_id = "top",
                 .campaign_id = 5,
                 .ad_id = 9,
                 .arm = "a"};
  counters.Count(fill, ServeOutcome::kFill, 1500);
  counters.Count(fill, ServeOutcome::kFill, 1500);
  ServedKey none{.unix_seconds = 1'000'000'001, .publisher_id = 1, .ad_unit_id = "top", .arm = "a"};
  counters.Count(none, ServeOutcome::kNoFill);
  counters.Count(none, ServeOutcome::kError);
  std::vector<store::RollupRow> rows = counters.Take();
  ASSERT_EQ(rows.size(), 2u);
  const store::RollupRow* f = Find(rows, "top", 5);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->bucket, 1'000'000'020);  // minute start
  EXPECT_EQ(f->publisher_id, 1);
  EXPECT_EQ(f->ad_id, 9);
  EXPECT_EQ(f->arm, "a");
  EXPECT_EQ(f->requests, 2);
  EXPECT_EQ(f->fills, 2);
  EXPECT_EQ(f->impression_spend, 3000);
  const store::RollupRow* n = Find(rows, "top", 0);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->requests, 2);
  EXPECT_EQ(n->no_fills, 1);
  EXPECT_EQ(n->errors, 1);
  EXPECT_TRUE(counters.Take().empty());
}

TEST(ServedCountersTest, ThreadsCountIntoTheirOwnShardsAndAreSummed) {
  ServedCounters counters;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counters] {
      for (int i = 0; i < 10000; ++i) {
        counters.Count({.unix_seconds = 60, .publisher_id = 2, .ad_unit_id = "x"},
                       ServeOutcome::kNoFill);
      }
    });
  }
  for (auto& t : threads) t.join();
  int64_t requests = 0;
  for (const auto& r : counters.Take()) requests += r.requests;
  EXPECT_EQ(requests, 40000);
}

TEST(ServedCountersTest, NewAdUnitsBeyondTheCapAreCountedAsOther) {
  ServedCounters counters(/*max_keys_per_thread=*/3);
  for (int i = 0; i < 100; ++i) {
    counters.Count(
        {.unix_seconds = 60, .publisher_id = 1, .ad_unit_id = "unit-" + std::to_string(i)},
        ServeOutcome::kNoFill);
  }
  std::vector<store::RollupRow> rows = counters.Take();
  EXPECT_LE(rows.size(), 4u);
  int64_t total = 0;
  for (const auto& r : rows) total += r.requests;
  EXPECT_EQ(total, 100);  // nothing is dropped
  EXPECT_NE(Find(rows, "~other", 0), nullptr);
}

TEST(ServedCountersTest, TwoInstancesOnOneThreadStaySeparate) {
  ServedCounters a;
  ServedCounters b;
  a.Count({.unix_seconds = 0, .publisher_id = 1}, ServeOutcome::kNoFill);
  b.Count({.unix_seconds = 0, .publisher_id = 2}, ServeOutcome::kNoFill);
  b.Count({.unix_seconds = 0, .publisher_id = 2}, ServeOutcome::kNoFill);
  auto ra = a.Take();
  auto rb = b.Take();
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(ra[0].requests, 1);
  EXPECT_EQ(rb[0].requests, 2);
}

TEST(ServedCountersTest, InvalidFillsAreCountedApartByReasonAndCostNothing) {
  ServedCounters counters;
  ServedKey fill{.unix_seconds = 1'000'000'020, .publisher_id = 1, .campaign_id = 5, .ad_id = 9};
  counters.Count(fill, ServeOutcome::kFill, 1500);
  counters.Count(fill, ServeOutcome::kFill, 1500, InvalidReason::kCrawler);
  counters.Count(fill, ServeOutcome::kFill, 1500, InvalidReason::kCrawler);
  counters.Count(fill, ServeOutcome::kFill, 1500, InvalidReason::kWalletRate);
  std::vector<store::RollupRow> rows = counters.Take();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].requests, 4);
  EXPECT_EQ(rows[0].fills, 1);
  EXPECT_EQ(rows[0].impression_spend, 1500);
  EXPECT_EQ(rows[0].invalid_fills, 3);
  std::vector<std::pair<std::string, int64_t>> expected{{"crawler", 2}, {"wallet_rate", 1}};
  EXPECT_EQ(rows[0].invalid_fills_by_reason, expected);
}

}  // namespace
}  // namespace adserver::events
