#include "store/sqlite/sqlite_report_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "store/sqlite/sqlite_events_store.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kT = 1'800'000'000 - 1'800'000'000 % kDay;  // a UTC midnight

RollupRow Rollup(int64_t at, Id publisher, std::string ad_unit, Id campaign, std::string arm,
                 int64_t fills, int64_t clicks) {
  RollupRow r;
  r.bucket = at;
  r.publisher_id = publisher;
  r.ad_unit_id = std::move(ad_unit);
  r.campaign_id = campaign;
  r.ad_id = campaign * 10;
  r.arm = std::move(arm);
  r.requests = fills;
  r.fills = fills;
  r.impression_spend = fills * 1000;
  r.clicks = clicks;
  r.click_spend = clicks * 100'000;
  return r;
}

RollupRow NoFill(int64_t at, Id publisher, int64_t n) {
  RollupRow r;
  r.bucket = at;
  r.publisher_id = publisher;
  r.ad_unit_id = "top";
  r.requests = n;
  r.no_fills = n;
  return r;
}

class SqliteReportStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto events = SqliteEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(events.ok()) << events.status().message();
    events_ = std::move(events).value();
    auto reports = SqliteReportStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(reports.ok()) << reports.status().message();
    reports_ = std::move(reports).value();
    // Campaigns 1 and 2 belong to community 7, campaign 3 to community 8.
    Exec(
        "INSERT INTO communities (id, name, created_at, updated_at) VALUES (7, 'a', 0, 0), "
        "(8, 'b', 0, 0);"
        "INSERT INTO campaigns (id, community_id, name, status, pricing_model, bid_micros, "
        "created_at, updated_at) VALUES (1, 7, 'c1', 'active', 'CPM', 1, 0, 0), "
        "(2, 7, 'c2', 'active', 'CPM', 1, 0, 0), (3, 8, 'c3', 'active', 'CPM', 1, 0, 0);");
    std::vector<RollupRow> rows = {Rollup(kT + 60, 1, "top", 1, "a", 100, 3),
                                   Rollup(kT + 3600, 1, "top", 1, "b", 50, 1),
                                   Rollup(kT + 3660, 1, "side", 2, "a", 20, 0),
                                   Rollup(kT + kDay, 1, "top", 3, "a", 10, 2),
                                   Rollup(kT + kDay + 5, 2, "top", 1, "a", 1000, 9),
                                   NoFill(kT + 120, 1, 7)};
    ASSERT_TRUE(events_->AddRollups(rows).ok());
  }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.File("adserver.db").c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  std::vector<RollupGroup> Query(const RollupQuery& q) {
    Result<std::vector<RollupGroup>> rows = reports_->QueryRollups(q);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<RollupGroup>{};
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteEventsStore> events_;
  std::unique_ptr<SqliteReportStore> reports_;
};

TEST_F(SqliteReportStoreTest, DailyTotalsPerPublisher) {
  std::vector<RollupGroup> rows =
      Query({.table = RollupTable::kDay, .from = kT, .to = kT + 2 * kDay, .group_seconds = kDay});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].bucket, kT);
  EXPECT_EQ(rows[0].publisher_id, 1);
  EXPECT_EQ(rows[0].requests, 177);
  EXPECT_EQ(rows[0].fills, 170);
  EXPECT_EQ(rows[0].no_fills, 7);
  EXPECT_EQ(rows[0].clicks, 4);
  EXPECT_EQ(rows[0].spend, 170 * 1000 + 4 * 100'000);
  EXPECT_EQ(rows[0].ad_unit_id, "");  // not split by
  EXPECT_EQ(rows[1].bucket, kT + kDay);
  EXPECT_EQ(rows[1].publisher_id, 1);
  EXPECT_EQ(rows[1].fills, 10);
  EXPECT_EQ(rows[2].publisher_id, 2);
  EXPECT_EQ(rows[2].fills, 1000);
}

TEST_F(SqliteReportStoreTest, RangeIsHalfOpen) {
  std::vector<RollupGroup> rows =
      Query({.table = RollupTable::kHour, .from = kT + 3600, .to = kT + kDay, .group_seconds = 0});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].bucket, 0);
  EXPECT_EQ(rows[0].fills, 70);  // the hour at kT is before `from`, the next day is at `to`
}

TEST_F(SqliteReportStoreTest, HourlyRowsSummedIntoDays) {
  std::vector<RollupGroup> rows = Query({.table = RollupTable::kHour,
                                         .from = kT,
                                         .to = kT + 2 * kDay,
                                         .group_seconds = kDay,
                                         .publisher_id = 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bucket, kT);
  EXPECT_EQ(rows[0].fills, 170);
  EXPECT_EQ(rows[1].bucket, kT + kDay);
}

TEST_F(SqliteReportStoreTest, SplitsByDimensionsAndCommunity) {
  std::vector<RollupGroup> rows = Query({.table = RollupTable::kDay,
                                         .from = kT,
                                         .to = kT + 2 * kDay,
                                         .group_seconds = 0,
                                         .by_ad_unit = true,
                                         .by_campaign = true,
                                         .by_ad = true,
                                         .by_community = true,
                                         .by_arm = true,
                                         .publisher_id = 1});
  // (top, 0 no-fill), (top, 1, a), (top, 1, b), (side, 2, a), (top, 3, a).
  ASSERT_EQ(rows.size(), 5u);
  int seen = 0;
  for (const RollupGroup& g : rows) {
    if (g.campaign_id == 0) {
      EXPECT_EQ(g.community_id, 0);
      EXPECT_EQ(g.no_fills, 7);
      ++seen;
    } else if (g.campaign_id == 3) {
      EXPECT_EQ(g.community_id, 8);
      EXPECT_EQ(g.ad_id, 30);
      ++seen;
    } else if (g.campaign_id == 1 && g.arm == "b") {
      EXPECT_EQ(g.community_id, 7);
      EXPECT_EQ(g.fills, 50);
      ++seen;
    } else if (g.campaign_id == 2) {
      EXPECT_EQ(g.ad_unit_id, "side");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 4);
}

TEST_F(SqliteReportStoreTest, Filters) {
  auto total = [&](RollupQuery q) {
    q.table = RollupTable::kDay;
    q.from = kT;
    q.to = kT + 2 * kDay;
    int64_t fills = 0;
    for (const RollupGroup& g : Query(q)) fills += g.fills;
    return fills;
  };
  EXPECT_EQ(total({.campaign_id = 1}), 1150);
  EXPECT_EQ(total({.community_id = 7}), 1170);
  EXPECT_EQ(total({.community_id = 8}), 10);
  EXPECT_EQ(total({.community_id = 9}), 0);
  EXPECT_EQ(total({.publisher_id = 1, .ad_unit_id = "side"}), 20);
  EXPECT_EQ(total({.publisher_id = 2, .campaign_id = 1}), 1000);
}

TEST_F(SqliteReportStoreTest, MinuteRowsAndLimit) {
  std::vector<RollupGroup> rows = Query({.table = RollupTable::kMinute,
                                         .from = kT,
                                         .to = kT + 3600,
                                         .group_seconds = 60,
                                         .publisher_id = 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bucket, kT + 60);
  EXPECT_EQ(rows[1].bucket, kT + 120);
  EXPECT_EQ(rows[1].no_fills, 7);
  EXPECT_EQ(Query({.table = RollupTable::kDay,
                   .from = kT,
                   .to = kT + 2 * kDay,
                   .group_seconds = kDay,
                   .limit = 2})
                .size(),
            2u);
}

}  // namespace
}  // namespace adserver::store
