#include "admin/reports_admin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/authenticator.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::admin {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'767'225'600 + 10 * 86400 + 1800;  // 2026-01-11T00:30:00Z
constexpr int64_t kToday = kNow - 1800;
constexpr int64_t kDay = 86400;

store::RollupRow Rollup(int64_t at, store::Id publisher, std::string ad_unit, store::Id campaign,
                        std::string arm, int64_t fills, int64_t clicks, Micros spend) {
  store::RollupRow r;
  r.bucket = at;
  r.publisher_id = publisher;
  r.ad_unit_id = std::move(ad_unit);
  r.campaign_id = campaign;
  r.ad_id = campaign * 10;
  r.arm = std::move(arm);
  r.requests = fills;
  r.fills = fills;
  r.impression_spend = spend;
  r.clicks = clicks;
  return r;
}

class ReportsAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = dir_.File("adserver.db");
    auto inventory = store::SqliteStore::Open(path);
    ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
    inventory_ = std::move(inventory).value();
    auto events = store::SqliteEventsStore::Open(path);
    ASSERT_TRUE(events.ok());
    events_ = std::move(events).value();
    auto reports = store::SqliteReportStore::Open(path);
    ASSERT_TRUE(reports.ok());
    reports_ = std::move(reports).value();
    clock_.SetMicros(kNow * 1'000'000);
    auth_ = std::make_unique<Authenticator>(AdminOptions{.token = "test-admin-token-0123456789"},
                                            nullptr, clock_);
    api_ = std::make_unique<ReportsAdminApi>(*reports_, *inventory_, clock_, *auth_);

    // Publisher 1: revshare 50 %; publisher 2: CPM 4.
    store::PublisherRecord p1;
    p1.name = "one";
    p1.payout.percent = 50;
    store::PublisherRecord p2;
    p2.name = "two";
    p2.payout = {.model = store::PayoutRule::Model::kCpm, .cpm_micros = 4'000'000};
    ASSERT_EQ(inventory_->CreatePublisher(p1, kNow)->id, 1);
    ASSERT_EQ(inventory_->CreatePublisher(p2, kNow)->id, 2);
    std::vector<store::RollupRow> rows = {
        // Yesterday: publisher 1 "top" (arm a) and "side" (arm b); publisher 2.
        Rollup(kToday - kDay + 60, 1, "top", 5, "a", 5000, 250, 10'000'000),
        Rollup(kToday - kDay + 3600, 1, "side", 5, "b", 5000, 300, 10'000'000),
        Rollup(kToday - kDay + 7200, 2, "top", 5, "a", 1000, 10, 2'000'000),
        // Today, 10 minutes ago.
        Rollup(kNow - 600, 1, "top", 5, "a", 100, 1, 200'000)};
    ASSERT_TRUE(events_->AddRollups(rows).ok());
  }

  http::Response Get(const std::string& query, const ReportScope& scope = {},
                     const std::string& accept = "") {
    return Call(&ReportsAdminApi::Report, query, scope, accept);
  }
  http::Response GetAb(const std::string& query, const ReportScope& scope = {}) {
    return Call(&ReportsAdminApi::AbReport, query, scope, "");
  }
  http::Response Call(http::Response (ReportsAdminApi::*handler)(const http::Request&,
                                                                 const ReportScope&),
                      const std::string& query, const ReportScope& scope,
                      const std::string& accept) {
    target_ = "/admin/v1/reports?" + query;
    http::Request request;
    request.method = http::Method::kGet;
    request.target = target_;
    request.path = "/admin/v1/reports";
    request.query = std::string_view(target_).substr(target_.find('?') + 1);
    if (!accept.empty()) request.headers = {{"Accept", accept}};
    return ((*api_).*handler)(request, scope);
  }
  static Json Body(const http::Response& r) { return Json::parse(r.body); }

  testing::TempDir dir_;
  FakeClock clock_;
  std::string target_;
  std::unique_ptr<store::SqliteStore> inventory_;
  std::unique_ptr<store::SqliteEventsStore> events_;
  std::unique_ptr<store::SqliteReportStore> reports_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<ReportsAdminApi> api_;
};

TEST_F(ReportsAdminTest, DailyRowsWithDerivedMetricsAndEarnings) {
  http::Response r = Get("from=2026-01-10&to=2026-01-12&granularity=day&groupBy=publisher");
  ASSERT_EQ(r.status, 200) << r.body;
  Json body = Body(r);
  ASSERT_EQ(body["rows"].size(), 3u) << body.dump();
  Json first = body["rows"][0];
  EXPECT_EQ(first["time"], "2026-01-10T00:00:00Z");
  EXPECT_EQ(first["publisherId"], "1");
  EXPECT_EQ(first["impressions"], 10000);
  EXPECT_EQ(first["fills"], 10000);
  EXPECT_EQ(first["clicks"], 550);
  EXPECT_EQ(first["spend"], 20);
  EXPECT_EQ(first["earnings"], 10);  // 50 % of 20
  EXPECT_DOUBLE_EQ(first["ctr"].get<double>(), 0.055);
  EXPECT_EQ(first["ecpm"], 2);
  Json second = body["rows"][1];
  EXPECT_EQ(second["publisherId"], "2");
  EXPECT_EQ(second["earnings"], 4);  // 1000 impressions at CPM 4
  EXPECT_EQ(body["rows"][2]["time"], "2026-01-11T00:00:00Z");
  EXPECT_EQ(body["totals"]["impressions"], 11100);
  EXPECT_EQ(body["totals"]["earnings"], 14.1);
  EXPECT_EQ(body["granularity"], "day");
}

TEST_F(ReportsAdminTest, TotalByAdUnitWithFilter) {
  http::Response r =
      Get("from=2026-01-10&to=2026-01-12&granularity=total&groupBy=adUnitId,arm&publisherId=1");
  ASSERT_EQ(r.status, 200) << r.body;
  Json body = Body(r);
  ASSERT_EQ(body["rows"].size(), 2u) << body.dump();
  EXPECT_FALSE(body["rows"][0].contains("time"));
  EXPECT_EQ(body["rows"][0]["adUnitId"], "side");
  EXPECT_EQ(body["rows"][0]["arm"], "b");
  EXPECT_EQ(body["rows"][1]["adUnitId"], "top");
  EXPECT_EQ(body["rows"][1]["impressions"], 5100);
}

TEST_F(ReportsAdminTest, CsvWithHeaderRow) {
  http::Response r =
      Get("from=2026-01-10&to=2026-01-11&granularity=day&groupBy=adUnitId", {}, "text/csv");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.Header("Content-Type"), HasSubstr("text/csv"));
  EXPECT_EQ(r.body,
            "time,adUnitId,requests,fills,noFills,impressions,clicks,conversions,spend,earnings,"
            "ctr,cvr,ecpm,earningsEcpm,invalidClicks,overBudgetConversions\r\n"
            "2026-01-10T00:00:00Z,side,5000,5000,0,5000,300,0,10,5,0.06,0,2,1,0,0\r\n"
            "2026-01-10T00:00:00Z,top,6000,6000,0,6000,260,0,12,9,0.043333333333333335,0,2,1.5,"
            "0,0\r\n");
  http::Response by_param = Get("from=2026-01-10&to=2026-01-11&groupBy=adUnitId&format=csv");
  EXPECT_EQ(by_param.body, r.body);
}

TEST_F(ReportsAdminTest, MinuteReportsReadMinuteRollups) {
  http::Response r = Get("granularity=minute&publisherId=1");  // the last hour by default
  ASSERT_EQ(r.status, 200) << r.body;
  Json body = Body(r);
  ASSERT_EQ(body["rows"].size(), 1u) << body.dump();
  EXPECT_EQ(body["rows"][0]["time"], "2026-01-11T00:20:00Z");
  EXPECT_EQ(body["rows"][0]["impressions"], 100);
}

TEST_F(ReportsAdminTest, BadParametersAre400NamingThem) {
  struct Case {
    std::string query;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"granularity=week", "granularity"},
           {"groupBy=publisher,color", "groupBy"},
           {"from=yesterday", "from"},
           {"from=2026-01-11&to=2026-01-10", "from"},
           {"publisherId=0", "publisherId"},
           {"format=xml", "format"},
           {"colour=red", "colour"},
           // Minute reports span at most 48 h; minute rollups older than 48 h are gone.
           {"granularity=minute&from=2026-01-01&to=2026-01-05", "to"},
           {"from=2026-01-01T00:30:00Z&to=2026-01-02T00:00:00Z", "from"},
           // Hourly rollups are kept 400 days.
           {"granularity=hour&from=2024-01-01&to=2024-01-02", "from"}}) {
    http::Response r = Get(c.query);
    EXPECT_EQ(r.status, 400) << c.query;
    Json body = Body(r);
    ASSERT_TRUE(body.contains("details")) << c.query << " " << r.body;
    EXPECT_EQ(body["details"][0]["field"], c.field) << c.query << " " << r.body;
  }
  // Old whole days come from the daily rollups: fine.
  EXPECT_EQ(Get("granularity=day&from=2024-01-01&to=2024-01-02").status, 200);
}

TEST_F(ReportsAdminTest, TooManyRowsAsksToNarrow) {
  ReportsAdminApi small(*reports_, *inventory_, clock_, *auth_, ReportsAdminOptions{.max_rows = 2});
  target_ = "/admin/v1/reports?from=2026-01-10&to=2026-01-12&groupBy=publisher";
  http::Request request;
  request.query = std::string_view(target_).substr(target_.find('?') + 1);
  http::Response r = small.Report(request, {});
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("more than 2 rows"));
  request.query = "from=2026-01-10&to=2026-01-12&groupBy=publisher&publisherId=2";
  EXPECT_EQ(small.Report(request, {}).status, 200);
}

TEST_F(ReportsAdminTest, ScopeRestrictsToOnePublisher) {
  ReportScope publisher_two{.publisher_id = 2};
  http::Response r = Get("from=2026-01-10&to=2026-01-12&granularity=total", publisher_two);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["totals"]["impressions"], 1000);
  EXPECT_EQ(Get("from=2026-01-10&to=2026-01-12&publisherId=1", publisher_two).status, 404);
  // A publisher sees its earnings and its eCPM, not what advertisers paid (issue 39).
  Json totals = Body(r)["totals"];
  EXPECT_EQ(totals["earnings"], 4);  // 1000 impressions at CPM 4
  EXPECT_EQ(totals["earningsEcpm"], 4);
  EXPECT_TRUE(totals["spend"].is_null()) << totals.dump();
  EXPECT_TRUE(totals["ecpm"].is_null()) << totals.dump();
  http::Response by_campaign =
      Get("from=2026-01-10&to=2026-01-12&granularity=total&groupBy=campaign", publisher_two);
  ASSERT_EQ(by_campaign.status, 200);
  const Json by_campaign_body = Body(by_campaign);
  for (const Json& row : by_campaign_body["rows"]) {
    EXPECT_TRUE(row["spend"].is_null()) << row.dump();
    EXPECT_TRUE(row["ecpm"].is_null()) << row.dump();
  }
  http::Response csv =
      Get("from=2026-01-10&to=2026-01-12&granularity=total&format=csv", publisher_two);
  EXPECT_THAT(csv.body, HasSubstr("\r\n1000,1000,0,1000,10,0,,4,0.01,0,,4,0,0\r\n"));
  // An advertiser's report leaves the publishers' earnings out.
  http::Response advertiser =
      Get("from=2026-01-10&to=2026-01-12&granularity=total", ReportScope{.community_id = 99});
  ASSERT_EQ(advertiser.status, 200);
  EXPECT_TRUE(Body(advertiser)["totals"]["earnings"].is_null());
  EXPECT_TRUE(Body(advertiser)["totals"]["earningsEcpm"].is_null());
  EXPECT_FALSE(Body(advertiser)["totals"]["spend"].is_null());
  EXPECT_EQ(Body(advertiser)["totals"]["impressions"], 0);  // campaign 5 is not theirs
}

TEST_F(ReportsAdminTest, AbComparesAdUnitsWithWilsonAndZTest) {
  http::Response r = GetAb("publisherId=1&adUnitIds=top,side&from=2026-01-10&to=2026-01-11");
  ASSERT_EQ(r.status, 200) << r.body;
  Json body = Body(r);
  EXPECT_EQ(body["compare"], "adUnitId");
  EXPECT_EQ(body["baseline"], "top");
  ASSERT_EQ(body["variants"].size(), 2u);
  Json top = body["variants"][0];
  EXPECT_EQ(top["variant"], "top");
  EXPECT_EQ(top["impressions"], 5000);
  EXPECT_EQ(top["clicks"], 250);
  EXPECT_NEAR(top["ctr"]["low"].get<double>(), 0.0442969, 1e-6);
  EXPECT_NEAR(top["ctr"]["high"].get<double>(), 0.0563940, 1e-6);
  EXPECT_TRUE(top["vsBaseline"].is_null());
  Json side = body["variants"][1];
  EXPECT_NEAR(side["vsBaseline"]["ctr"]["z"].get<double>(), 2.193, 1e-3);
  EXPECT_NEAR(side["vsBaseline"]["ctr"]["p"].get<double>(), 0.0283, 1e-3);
  EXPECT_EQ(side["vsBaseline"]["ctr"]["better"], "variant");
  EXPECT_TRUE(side["vsBaseline"]["cvr"]["z"].is_null());  // no conversions: no test
  EXPECT_TRUE(side["vsBaseline"]["cvr"]["better"].is_null());
}

TEST_F(ReportsAdminTest, AbComparesArmsOfACampaign) {
  // Without the campaign in the inventory: 404.
  EXPECT_EQ(GetAb("campaignId=5&from=2026-01-10&to=2026-01-11").status, 404);
  store::CommunityRecord community;
  community.name = "c";
  community.logo_url = "https://logo.example/c.png";
  ASSERT_EQ(inventory_->CreateCommunity(community, kNow)->id, 1);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("adserver.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO campaigns (id, community_id, name, status, pricing_model, "
                         "bid_micros, created_at, updated_at) "
                         "VALUES (5, 1, 'c5', 'active', 'CPM', 1, 0, 0)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  http::Response r = GetAb("campaignId=5&from=2026-01-10&to=2026-01-11");
  ASSERT_EQ(r.status, 200) << r.body;
  Json body = Body(r);
  EXPECT_EQ(body["compare"], "arm");
  EXPECT_EQ(body["campaignId"], "5");
  ASSERT_EQ(body["variants"].size(), 2u);
  EXPECT_EQ(body["variants"][0]["variant"], "a");
  EXPECT_EQ(body["variants"][0]["impressions"], 6000);  // both publishers
  EXPECT_EQ(body["variants"][0]["clicks"], 260);
  EXPECT_EQ(body["variants"][1]["variant"], "b");
  EXPECT_EQ(body["variants"][1]["vsBaseline"]["ctr"]["better"], "variant");

  EXPECT_EQ(GetAb("campaignId=5", ReportScope{.community_id = 1}).status, 200);
  EXPECT_EQ(GetAb("campaignId=5", ReportScope{.community_id = 2}).status, 404);
  // A publisher sees the arms on its own inventory only.
  http::Response two =
      GetAb("campaignId=5&from=2026-01-10&to=2026-01-11", ReportScope{.publisher_id = 2});
  ASSERT_EQ(two.status, 200);
  ASSERT_EQ(Body(two)["variants"].size(), 1u);
  EXPECT_EQ(Body(two)["variants"][0]["impressions"], 1000);
}

TEST_F(ReportsAdminTest, AbNeedsExactlyOneSubject) {
  EXPECT_EQ(GetAb("from=2026-01-10").status, 400);
  EXPECT_EQ(GetAb("publisherId=1&campaignId=5").status, 400);
  EXPECT_EQ(GetAb("campaignId=5&adUnitIds=top").status, 400);
  EXPECT_EQ(GetAb("publisherId=2", ReportScope{.publisher_id = 1}).status, 404);
}

}  // namespace
}  // namespace adserver::admin
