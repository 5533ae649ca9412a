// The decision engine through the real binary (issue 4): budgets stop serving at once and the
// spend survives SIGTERM and a restart; decision controls in the admin API; explain access.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

HttpResult PostAd(HttpClient& client, const std::string& key, const std::string& wallet,
                  HttpHeaders extra = {}) {
  HttpHeaders headers = {{"x-api-key", key}, {"Content-Type", "application/json"}};
  for (auto& h : extra) headers.push_back(std::move(h));
  json body = {{"walletAddresses", {wallet}}, {"imageFormat", "LANDSCAPE"}};
  return client.Send("POST", "/v1/ads", headers, body.dump());
}

std::optional<std::string> HeaderOf(const HttpResult& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return std::tolower(a) == std::tolower(b);
        })) {
      return v;
    }
  }
  return std::nullopt;
}

class DecisionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(f_.ok()) << f_.error(); }
  ServingFixture f_;
};

TEST_F(DecisionTest, TotalBudgetStopsServingAndSpendSurvivesRestart) {
  // CPM 10 = 0.01 an impression: a budget of 0.03 buys exactly three.
  auto patched = f_.Admin("PATCH", "/admin/v1/campaigns/" + std::to_string(f_.aave_campaign),
                          {{"budget", {{"total", "0.03"}}}, {"pacing", "asap"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(json::parse(patched.body)["pacing"], "asap");
  HttpClient client = f_.Client();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(PostAd(client, f_.keys.open_live, f_.wallets.uniswap).status, 200) << i;
  }
  EXPECT_EQ(PostAd(client, f_.keys.open_live, f_.wallets.uniswap).status, 204);
  // Test keys are never billed and still get sample ads.
  EXPECT_EQ(PostAd(client, f_.keys.open_test, f_.wallets.uniswap).status, 200);

  std::string data_dir = f_.server().data_dir();
  ASSERT_EQ(f_.server().Stop(), 0);
  ServerProcess restarted({.data_dir = data_dir});
  ASSERT_TRUE(restarted.Start()) << restarted.error();
  HttpClient again("127.0.0.1", restarted.port());
  EXPECT_EQ(PostAd(again, f_.keys.open_live, f_.wallets.uniswap).status, 204)
      << "spend was not recovered";
  EXPECT_EQ(restarted.Stop(), 0);
}

TEST_F(DecisionTest, PublisherCategoryOptInGatesACategorisedCampaign) {
  std::string campaign = "/admin/v1/campaigns/" + std::to_string(f_.aave_campaign);
  ASSERT_EQ(f_.Admin("PATCH", campaign, {{"category", "gambling"}}).status, 200);
  HttpClient client = f_.Client();
  EXPECT_EQ(PostAd(client, f_.keys.open_live, f_.wallets.uniswap).status, 204);
  std::string publisher = "/admin/v1/publishers/" + std::to_string(f_.keys.open_publisher);
  auto opted = f_.Admin("PATCH", publisher, {{"categoryOptIns", {"gambling"}}});
  ASSERT_EQ(opted.status, 200) << opted.body;
  json p = json::parse(opted.body);
  EXPECT_EQ(p["categoryOptIns"], json({"gambling"}));
  EXPECT_TRUE(p["floorCpm"].is_null());
  EXPECT_EQ(PostAd(client, f_.keys.open_live, f_.wallets.uniswap).status, 200);
  // A floor above the campaign's CPM 10 empties the placement.
  ASSERT_EQ(f_.Admin("PATCH", publisher, {{"floorCpm", 10.01}}).status, 200);
  EXPECT_EQ(PostAd(client, f_.keys.open_live, f_.wallets.uniswap).status, 204);
}

TEST_F(DecisionTest, NewAdminFieldsAreValidated) {
  std::string campaign = "/admin/v1/campaigns/" + std::to_string(f_.aave_campaign);
  auto bad =
      f_.Admin("PATCH", campaign,
               {{"pacing", "fast"}, {"category", "Bad Name"}, {"advertiserProject", "nope"}});
  EXPECT_EQ(bad.status, 400);
  json details = json::parse(bad.body)["details"];
  std::vector<std::string> fields;
  for (const json& d : details) fields.push_back(d["field"]);
  EXPECT_EQ(fields, (std::vector<std::string>{"category", "pacing", "advertiserProject"}));
  auto good =
      f_.Admin("PATCH", campaign, {{"advertiserProject", "aave"}, {"excludeExistingUsers", true}});
  ASSERT_EQ(good.status, 200) << good.body;
  EXPECT_EQ(json::parse(good.body)["advertiserProject"], "aave");
}

TEST_F(DecisionTest, ExplainHeaderOnlyForTestKeysOrWithTheAdminToken) {
  HttpClient client = f_.Client();
  HttpResult live =
      PostAd(client, f_.keys.open_live, f_.wallets.uniswap, {{"X-Adserver-Explain", "1"}});
  EXPECT_EQ(live.status, 200);
  EXPECT_FALSE(HeaderOf(live, "X-Adserver-Explain"));
  HttpResult admin = PostAd(
      client, f_.keys.open_live, f_.wallets.uniswap,
      {{"X-Adserver-Explain", "1"}, {"Authorization", "Bearer " + f_.server().admin_token()}});
  ASSERT_TRUE(HeaderOf(admin, "X-Adserver-Explain"));
  json e = json::parse(*HeaderOf(admin, "X-Adserver-Explain"));
  EXPECT_EQ(e["winner"]["campaignId"], std::to_string(f_.aave_campaign));
  ASSERT_FALSE(e["candidates"].empty());
  for (const json& c : e["candidates"]) {
    for (const char* key :
         {"campaignId", "rule", "valueMicros", "relevance", "pacingFactor", "score"}) {
      EXPECT_TRUE(c.contains(key)) << key << " in " << c.dump();
    }
  }
  // A test key is the publisher's: its explanation shows the winner and each candidate's rule,
  // never advertisers' values (issue 39).
  HttpResult test =
      PostAd(client, f_.keys.open_test, f_.wallets.uniswap, {{"X-Adserver-Explain", "1"}});
  ASSERT_TRUE(HeaderOf(test, "X-Adserver-Explain"));
  json t = json::parse(*HeaderOf(test, "X-Adserver-Explain"));
  EXPECT_EQ(t["winner"], e["winner"]);
  ASSERT_EQ(t["candidates"].size(), e["candidates"].size());
  for (size_t i = 0; i < t["candidates"].size(); ++i) {
    const json& c = t["candidates"][i];
    EXPECT_EQ(c, (json{{"campaignId", e["candidates"][i]["campaignId"]},
                       {"rule", e["candidates"][i]["rule"]}}));
  }
  // The operator's token on a test key shows the values again.
  HttpResult both = PostAd(
      client, f_.keys.open_test, f_.wallets.uniswap,
      {{"X-Adserver-Explain", "1"}, {"Authorization", "Bearer " + f_.server().admin_token()}});
  ASSERT_TRUE(HeaderOf(both, "X-Adserver-Explain"));
  EXPECT_TRUE(
      json::parse(*HeaderOf(both, "X-Adserver-Explain"))["candidates"][0].contains("valueMicros"));
}

}  // namespace
}  // namespace adserver::testing
