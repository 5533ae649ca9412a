// Reports over real HTTP (issue 16): serve ads with a live key on two adUnitIds, click one,
// then read them back from GET /admin/v1/reports (JSON and CSV) and /admin/v1/reports/ab once
// the counter flusher has written the rollups; the publisher payout rule in the admin API and
// in the report's earnings.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

constexpr char kPublicUrl[] = "https://clicks.example.test";
constexpr char kWallet[] = "0x4444444444444444444444444444444444444444";  // USDC on Base

class ReportsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_dir_ = new TempDir();
    std::string config = config_dir_->File("adserver.toml");
    std::ofstream(config) << "[events]\nflush_interval_ms = 200\n" << kTrafficChecksOff;
    ServerProcess::Options options;
    options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
    options.extra_args = {"--config", config};
    fixture_ = new ServingFixture(options);
  }
  static void TearDownTestSuite() {
    delete fixture_;
    delete config_dir_;
  }
  void SetUp() override { ASSERT_TRUE(fixture_->ok()) << fixture_->error(); }

  static HttpResult Serve(const std::string& ad_unit) {
    json body = {
        {"walletAddresses", {kWallet}}, {"imageFormat", "LANDSCAPE"}, {"adUnitId", ad_unit}};
    return fixture_->Client().Send(
        "POST", "/v1/ads",
        {{"Content-Type", "application/json"}, {"x-api-key", fixture_->keys.open_live}},
        body.dump());
  }
  static std::string Publisher() { return std::to_string(fixture_->keys.open_publisher); }
  static json Get(const std::string& target) {
    HttpResult r = fixture_->Admin("GET", target);
    EXPECT_EQ(r.status, 200) << target << " " << r.body;
    return r.status == 200 ? json::parse(r.body) : json::object();
  }
  // The report row of `ad_unit` in a total report by adUnitId of the open publisher.
  static json UnitRow(const std::string& ad_unit) {
    json report =
        Get("/admin/v1/reports?granularity=total&groupBy=adUnitId&publisherId=" + Publisher());
    for (const json& row : report["rows"]) {
      if (row["adUnitId"] == ad_unit) return row;
    }
    return json{{"impressions", 0}, {"clicks", 0}};
  }

  static TempDir* config_dir_;
  static ServingFixture* fixture_;
};
TempDir* ReportsTest::config_dir_ = nullptr;
ServingFixture* ReportsTest::fixture_ = nullptr;

TEST_F(ReportsTest, PayoutRuleInTheAdminApi) {
  json created =
      json::parse(fixture_->Admin("POST", "/admin/v1/publishers", {{"name", "Payout test"}}).body);
  EXPECT_EQ(created["payout"], (json{{"model", "revshare"}, {"percent", 70}}));
  std::string path = "/admin/v1/publishers/" + std::to_string(created["id"].get<int64_t>());
  HttpResult cpm = fixture_->Admin("PATCH", path, {{"payout", {{"model", "cpm"}, {"cpm", 2.5}}}});
  ASSERT_EQ(cpm.status, 200) << cpm.body;
  EXPECT_EQ(Get(path)["payout"], (json{{"model", "cpm"}, {"cpm", 2.5}}));
  HttpResult unknown = fixture_->Admin("PATCH", path, {{"payout", {{"model", "flat"}}}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(json::parse(unknown.body)["details"][0]["field"], "payout.model") << unknown.body;
  HttpResult percent =
      fixture_->Admin("PATCH", path, {{"payout", {{"model", "revshare"}, {"percent", 150}}}});
  EXPECT_EQ(percent.status, 400);
  EXPECT_EQ(json::parse(percent.body)["details"][0]["field"], "payout.percent");
  HttpResult negative =
      fixture_->Admin("PATCH", path, {{"payout", {{"model", "cpm"}, {"cpm", -1}}}});
  EXPECT_EQ(negative.status, 400);
  EXPECT_EQ(json::parse(negative.body)["details"][0]["field"], "payout.cpm");
  bool listed = false;
  json list = Get("/admin/v1/publishers");
  for (const json& p : list["publishers"]) {
    if (p["id"] == created["id"]) listed = p["payout"]["model"] == "cpm";
  }
  EXPECT_TRUE(listed);
}

TEST_F(ReportsTest, ServedAndClickedAdsReachReportsCsvAndAb) {
  // The open publisher earns a CPM of 10 per served impression.
  HttpResult patched = fixture_->Admin("PATCH", "/admin/v1/publishers/" + Publisher(),
                                       {{"payout", {{"model", "cpm"}, {"cpm", 10}}}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  const int64_t top_before = UnitRow("top")["impressions"].get<int64_t>();
  std::string click_path;
  for (int i = 0; i < 3; ++i) {
    HttpResult r = Serve("top");
    ASSERT_EQ(r.status, 200) << r.body;
    click_path =
        json::parse(r.body)["ctaUrl"].get<std::string>().substr(std::string(kPublicUrl).size());
  }
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Serve("side").status, 200);
  ASSERT_EQ(fixture_->Client().Get(click_path).status, 302);

  // The flusher writes rollups every 200 ms here.
  json top = UnitRow("top");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((top["impressions"].get<int64_t>() < top_before + 3 || top["clicks"].get<int64_t>() < 1 ||
          UnitRow("side")["impressions"].get<int64_t>() < 2) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // waiting for the flush
    top = UnitRow("top");
  }
  ASSERT_GE(top["impressions"].get<int64_t>(), top_before + 3) << top.dump();
  ASSERT_GE(top["clicks"].get<int64_t>(), 1);
  EXPECT_GT(top["spend"].get<double>(), 0);  // CPC 5 for the click
  EXPECT_DOUBLE_EQ(top["earnings"].get<double>(), top["impressions"].get<double>() * 10 / 1000);
  EXPECT_DOUBLE_EQ(top["ctr"].get<double>(),
                   top["clicks"].get<double>() / top["impressions"].get<double>());

  // Daily rows carry the day; totals sum them.
  json daily = Get("/admin/v1/reports?granularity=day&publisherId=" + Publisher());
  ASSERT_FALSE(daily["rows"].empty());
  EXPECT_TRUE(daily["rows"].back()["time"].get<std::string>().ends_with("T00:00:00Z"));
  EXPECT_GE(daily["totals"]["clicks"].get<int64_t>(), 1);

  // CSV, by Accept header.
  HttpResult csv = fixture_->Client().Get(
      "/admin/v1/reports?granularity=total&groupBy=adUnitId&publisherId=" + Publisher(),
      {{"Authorization", "Bearer " + fixture_->server().admin_token()}, {"Accept", "text/csv"}});
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_NE(csv.Header("Content-Type").find("text/csv"), std::string::npos);
  EXPECT_TRUE(csv.body.starts_with(
      "adUnitId,requests,fills,noFills,impressions,clicks,conversions,spend,"
      "earnings,ctr,cvr,ecpm,earningsEcpm,invalidClicks,overBudgetConversions\r\n"))
      << csv.body;
  EXPECT_NE(csv.body.find("\r\ntop,"), std::string::npos) << csv.body;

  // A/B of the two adUnitIds, and of the CPC campaign's arms.
  json ab = Get("/admin/v1/reports/ab?adUnitIds=top,side&publisherId=" + Publisher());
  ASSERT_EQ(ab["variants"].size(), 2u) << ab.dump();
  EXPECT_EQ(ab["baseline"], "top");
  EXPECT_EQ(ab["variants"][0]["impressions"], top["impressions"]);
  EXPECT_GE(ab["variants"][1]["impressions"].get<int64_t>(), 2);
  EXPECT_TRUE(ab["variants"][0]["vsBaseline"].is_null());
  EXPECT_TRUE(ab["variants"][1]["vsBaseline"]["ctr"].contains("p"));
  EXPECT_LE(ab["variants"][0]["ctr"]["low"].get<double>(),
            ab["variants"][0]["ctr"]["value"].get<double>());
}

TEST_F(ReportsTest, BadParametersAndNoToken) {
  HttpResult bad = fixture_->Admin("GET", "/admin/v1/reports?granularity=week&groupBy=color");
  EXPECT_EQ(bad.status, 400);
  json body = json::parse(bad.body);
  EXPECT_TRUE(body.contains("error"));
  EXPECT_EQ(body["details"][0]["field"], "granularity") << bad.body;
  EXPECT_EQ(body["details"][1]["field"], "groupBy");
  EXPECT_EQ(fixture_->Admin("GET", "/admin/v1/reports/ab").status, 400);
  EXPECT_EQ(fixture_->Client().Get("/admin/v1/reports").status, 401);
}

}  // namespace
}  // namespace adserver::testing
