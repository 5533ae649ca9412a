// The ReportStore contract (issues 16 and 17): the SQLite and PostgreSQL adapters run the same
// SQL (store/sql/sql_reports) over the rollups an EventsStore wrote, through the same cases:
// sums per bucket and publisher, split by the other dimensions and the campaign's community,
// filtered, limited. PostgreSQL cases run on a database of their own (skipped by hand outside
// CTest, a failure with ADSERVER_REQUIRE_POSTGRES=1).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_report_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kT = 1'800'000'000 - 1'800'000'000 % kDay;  // a UTC midnight

class SqliteReports {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteEventsStore> s,
                         SqliteEventsStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<ReportStore>> Reports() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteReportStore> s,
                         SqliteReportStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<ReportStore>(std::move(s));
  }
  // Runs `sql` on the database behind the adapters' backs.
  Status Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    if (sqlite3_open(dir_.File("adserver.db").c_str(), &db) != SQLITE_OK) {
      sqlite3_close(db);
      return InternalError("cannot open the database");
    }
    char* error = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    Status s = rc == SQLITE_OK ? OkStatus() : InternalError(error != nullptr ? error : "exec");
    sqlite3_free(error);
    sqlite3_close(db);
    return s;
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresReports {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresEventsStore> s,
                         PostgresEventsStore::Open(db_.url()));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<ReportStore>> Reports() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresReportStore> s,
                         PostgresReportStore::Open(db_.url()));
    return std::unique_ptr<ReportStore>(std::move(s));
  }
  Status Exec(const std::string& sql) {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<pg_detail::PgConnection> conn,
                         pg_detail::PgConnection::Open(db_.url()));
    return conn->ExecScript(sql);
  }

 private:
  adserver::testing::TestDatabase db_;
};

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

template <class Backend>
class ReportContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    auto events = backend_.Events();
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    events_ = std::move(*events);
    auto reports = backend_.Reports();
    ASSERT_TRUE(reports.ok()) << reports.status().ToString();
    reports_ = std::move(*reports);
    // Campaigns 1 and 2 belong to community 7, campaign 3 to community 8.
    Status seeded = backend_.Exec(
        "INSERT INTO communities (id, name, created_at, updated_at) VALUES (7, 'a', 0, 0), "
        "(8, 'b', 0, 0);"
        "INSERT INTO campaigns (id, community_id, name, status, pricing_model, bid_micros, "
        "created_at, updated_at) VALUES (1, 7, 'c1', 'active', 'CPM', 1, 0, 0), "
        "(2, 7, 'c2', 'active', 'CPM', 1, 0, 0), (3, 8, 'c3', 'active', 'CPM', 1, 0, 0);");
    ASSERT_TRUE(seeded.ok()) << seeded.ToString();
    std::vector<RollupRow> rows = {Rollup(kT + 60, 1, "top", 1, "a", 100, 3),
                                   Rollup(kT + 3600, 1, "top", 1, "b", 50, 1),
                                   Rollup(kT + 3660, 1, "side", 2, "a", 20, 0),
                                   Rollup(kT + kDay, 1, "top", 3, "a", 10, 2),
                                   Rollup(kT + kDay + 5, 2, "top", 1, "a", 1000, 9),
                                   NoFill(kT + 120, 1, 7)};
    ASSERT_TRUE(events_->AddRollups(rows).ok());
  }

  std::vector<RollupGroup> Query(const RollupQuery& q) {
    Result<std::vector<RollupGroup>> rows = reports_->QueryRollups(q);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<RollupGroup>{};
  }

  Backend backend_;
  std::unique_ptr<EventsStore> events_;
  std::unique_ptr<ReportStore> reports_;
};

using Backends = ::testing::Types<SqliteReports, PostgresReports>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(ReportContractTest, Backends, BackendNames);

TYPED_TEST(ReportContractTest, DailyTotalsPerPublisher) {
  std::vector<RollupGroup> rows = this->Query(
      {.table = RollupTable::kDay, .from = kT, .to = kT + 2 * kDay, .group_seconds = kDay});
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

TYPED_TEST(ReportContractTest, RangeIsHalfOpen) {
  std::vector<RollupGroup> rows = this->Query(
      {.table = RollupTable::kHour, .from = kT + 3600, .to = kT + kDay, .group_seconds = 0});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].bucket, 0);
  EXPECT_EQ(rows[0].fills, 70);  // the hour at kT is before `from`, the next day is at `to`
}

TYPED_TEST(ReportContractTest, HourlyRowsSummedIntoDays) {
  std::vector<RollupGroup> rows = this->Query({.table = RollupTable::kHour,
                                               .from = kT,
                                               .to = kT + 2 * kDay,
                                               .group_seconds = kDay,
                                               .publisher_id = 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bucket, kT);
  EXPECT_EQ(rows[0].fills, 170);
  EXPECT_EQ(rows[1].bucket, kT + kDay);
}

TYPED_TEST(ReportContractTest, SplitsByDimensionsAndCommunity) {
  std::vector<RollupGroup> rows = this->Query({.table = RollupTable::kDay,
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

TYPED_TEST(ReportContractTest, Filters) {
  auto total = [&](RollupQuery q) {
    q.table = RollupTable::kDay;
    q.from = kT;
    q.to = kT + 2 * kDay;
    int64_t fills = 0;
    for (const RollupGroup& g : this->Query(q)) fills += g.fills;
    return fills;
  };
  EXPECT_EQ(total({.campaign_id = 1}), 1150);
  EXPECT_EQ(total({.community_id = 7}), 1170);
  EXPECT_EQ(total({.community_id = 8}), 10);
  EXPECT_EQ(total({.community_id = 9}), 0);
  EXPECT_EQ(total({.publisher_id = 1, .ad_unit_id = "side"}), 20);
  EXPECT_EQ(total({.publisher_id = 2, .campaign_id = 1}), 1000);
}

TYPED_TEST(ReportContractTest, MinuteRowsAndLimit) {
  std::vector<RollupGroup> rows = this->Query({.table = RollupTable::kMinute,
                                               .from = kT,
                                               .to = kT + 3600,
                                               .group_seconds = 60,
                                               .publisher_id = 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bucket, kT + 60);
  EXPECT_EQ(rows[1].bucket, kT + 120);
  EXPECT_EQ(rows[1].no_fills, 7);
  EXPECT_EQ(this->Query({.table = RollupTable::kDay,
                         .from = kT,
                         .to = kT + 2 * kDay,
                         .group_seconds = kDay,
                         .limit = 2})
                .size(),
            2u);
}

}  // namespace
}  // namespace adserver::store
