// Advertiser events over real HTTP (issue 15): advertiser keys through the admin API, POST
// /v1/events (validation, identity, key kinds, revocation, test keys, CORS), the spclid of a
// real click linking an event to its campaign, and the read-back listing and counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

constexpr char kPublicUrl[] = "https://clicks.example.test";

struct Env {
  TempDir config_dir;
  std::unique_ptr<ServingFixture> fixture;
  int64_t community = 0;
  std::string live_key;
  std::string test_key;
  int64_t live_key_id = 0;
};
Env* env = nullptr;

class AdvertiserEventsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    env = new Env();
    ServerProcess::Options options;
    options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
    std::string config = env->config_dir.File("adserver.toml");
    std::ofstream(config) << kTrafficChecksOff;
    options.extra_args = {"--config", config};
    env->fixture = std::make_unique<ServingFixture>(options);
    ASSERT_TRUE(env->fixture->ok()) << env->fixture->error();
    HttpResult community =
        env->fixture->Admin("POST", "/admin/v1/communities",
                            {{"name", "Shop"}, {"logoUrl", "https://s.example/l.png"}});
    ASSERT_EQ(community.status, 201) << community.body;
    env->community = json::parse(community.body)["id"].get<int64_t>();
    HttpResult live = env->fixture->Admin("POST", KeysPath(), json::object());
    ASSERT_EQ(live.status, 201) << live.body;
    env->live_key = json::parse(live.body)["key"];
    env->live_key_id = json::parse(live.body)["id"].get<int64_t>();
    HttpResult test = env->fixture->Admin("POST", KeysPath(), {{"test", true}});
    ASSERT_EQ(test.status, 201) << test.body;
    env->test_key = json::parse(test.body)["key"];
  }
  void TearDown() override {
    delete env;
    env = nullptr;
  }
  static std::string KeysPath() {
    return "/admin/v1/communities/" + std::to_string(env->community) + "/keys";
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new AdvertiserEventsEnvironment);

const std::string kWallet = "0x9999999999999999999999999999999999999999";

HttpResult PostEvent(const json& body, const std::string& key, HttpHeaders extra = {}) {
  HttpHeaders headers = {{"Content-Type", "application/json"}};
  if (!key.empty()) headers.push_back({"x-api-key", key});
  for (auto& h : extra) headers.push_back(std::move(h));
  return env->fixture->Client().Send("POST", "/v1/events", headers, body.dump());
}

json Event(const std::string& name, const std::string& url = "") {
  json event = {{"name", name}};
  if (!url.empty()) event["url"] = url;
  return {{"cookieConsent", false}, {"event", event}, {"walletAddresses", {kWallet}}};
}

json List(const std::string& query) {
  HttpResult r = env->fixture->Admin("GET", "/admin/v1/events?" + query);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.status == 200 ? json::parse(r.body) : json::object();
}

std::string Community() { return "communityId=" + std::to_string(env->community); }

TEST(AdvertiserEventsTest, AdvertiserKeysAreAnsweredLikePublisherKeys) {
  EXPECT_EQ(env->live_key.size(), 34u);
  EXPECT_TRUE(env->live_key.starts_with("sak_"));
  HttpResult list = env->fixture->Admin("GET", AdvertiserEventsEnvironment::KeysPath());
  ASSERT_EQ(list.status, 200) << list.body;
  json keys = json::parse(list.body)["keys"];
  ASSERT_GE(keys.size(), 2u);
  EXPECT_EQ(keys[0]["prefix"], env->live_key.substr(0, 8));
  EXPECT_EQ(keys[0]["communityId"], env->community);
  EXPECT_FALSE(keys[0].contains("key"));  // shown once, at creation
  EXPECT_TRUE(keys[0]["revokedAt"].is_null());
  EXPECT_EQ(env->fixture->Admin("POST", "/admin/v1/communities/999999/keys", json::object()).status,
            404);
  EXPECT_EQ(
      env->fixture->Admin("POST", AdvertiserEventsEnvironment::KeysPath(), {{"bogus", 1}}).status,
      400);
}

TEST(AdvertiserEventsTest, AValidEventIsStoredAndListed) {
  HttpResult r = PostEvent(Event("sign_up", "https://shop.example/welcome"), env->live_key);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"success", true}}));
  json listed = List(Community() + "&limit=1");
  ASSERT_EQ(listed["events"].size(), 1u);
  json e = listed["events"][0];
  EXPECT_EQ(e["name"], "sign_up");
  EXPECT_EQ(e["url"], "https://shop.example/welcome");
  EXPECT_EQ(e["communityId"], std::to_string(env->community));
  EXPECT_EQ(e["keyId"], std::to_string(env->live_key_id));
  EXPECT_TRUE(e["campaignId"].is_null());
  EXPECT_EQ(e["person"].get<std::string>().size(), 16u);
  EXPECT_EQ(e.dump().find("9999999999"), std::string::npos);  // no raw wallet stored
}

TEST(AdvertiserEventsTest, InvalidBodiesAre400InTheEndpointsShape) {
  HttpResult bad_name = PostEvent(Event(""), env->live_key);
  EXPECT_EQ(bad_name.status, 400);
  json body = json::parse(bad_name.body);
  EXPECT_EQ(body["success"], false);
  EXPECT_TRUE(body["error"].is_string());
  EXPECT_EQ(body["details"][0]["field"], "event.name");

  json many = Event("a");
  many["walletAddresses"] = json::array();
  for (int i = 1; i <= 51; ++i) {
    char hex[41];
    std::snprintf(hex, sizeof hex, "%040x", i);
    many["walletAddresses"].push_back(std::string("0x") + hex);
  }
  HttpResult too_many = PostEvent(many, env->live_key);
  EXPECT_EQ(too_many.status, 400);
  EXPECT_NE(too_many.body.find("at most 50"), std::string::npos);

  json nobody = {{"cookieConsent", true}, {"event", {{"name", "a"}}}};
  HttpResult no_identity = PostEvent(nobody, env->live_key);
  EXPECT_EQ(no_identity.status, 400);
  EXPECT_EQ(json::parse(no_identity.body)["error"], "No user identity is available");
}

TEST(AdvertiserEventsTest, PublisherMissingAndRevokedKeysAre401) {
  for (const std::string& key : {env->fixture->keys.open_live, std::string()}) {
    HttpResult r = PostEvent(Event("a"), key);
    EXPECT_EQ(r.status, 401) << key;
    EXPECT_EQ(json::parse(r.body)["success"], false);
  }
  HttpResult created =
      env->fixture->Admin("POST", AdvertiserEventsEnvironment::KeysPath(), json::object());
  ASSERT_EQ(created.status, 201);
  std::string key = json::parse(created.body)["key"];
  int64_t id = json::parse(created.body)["id"].get<int64_t>();
  EXPECT_EQ(PostEvent(Event("a"), key).status, 200);
  HttpResult revoked = env->fixture->Admin(
      "DELETE", AdvertiserEventsEnvironment::KeysPath() + "/" + std::to_string(id));
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_FALSE(json::parse(revoked.body)["revokedAt"].is_null());
  EXPECT_EQ(PostEvent(Event("a"), key).status, 401);
}

TEST(AdvertiserEventsTest, TestKeysWriteNothing) {
  json before = List(Community() + "&limit=1000");
  HttpResult r = PostEvent(Event("test_only"), env->test_key);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(List(Community() + "&limit=1000")["events"].size(), before["events"].size());
  HttpResult counts = env->fixture->Admin("GET", "/admin/v1/events/counts?" + Community());
  EXPECT_EQ(counts.body.find("test_only"), std::string::npos);
}

TEST(AdvertiserEventsTest, AnswersCredentialedCors) {
  HttpResult r = PostEvent(Event("a"), env->live_key, {{"Origin", "https://shop.example"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "https://shop.example");
  EXPECT_EQ(r.Header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(r.Header("Vary"), "Origin");
  HttpResult preflight = env->fixture->Client().Send(
      "OPTIONS", "/v1/events",
      {{"Origin", "https://shop.example"}, {"Access-Control-Request-Method", "POST"}});
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Origin"), "https://shop.example");
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Headers"), "content-type, x-api-key");
}

TEST(AdvertiserEventsTest, SpclidOfARealClickLinksTheEventToTheCampaign) {
  // Serve the Uniswap user (Aave campaign) with a live publisher key and click the ad.
  json ad_request = {{"walletAddresses", {env->fixture->wallets.uniswap}},
                     {"imageFormat", "LANDSCAPE"}};
  HttpResult ad = env->fixture->Client().Send(
      "POST", "/v1/ads",
      {{"Content-Type", "application/json"}, {"x-api-key", env->fixture->keys.open_live}},
      ad_request.dump());
  ASSERT_EQ(ad.status, 200) << ad.body;
  std::string click_url = json::parse(ad.body)["ctaUrl"];
  ASSERT_TRUE(click_url.starts_with(kPublicUrl)) << click_url;
  HttpResult click =
      env->fixture->Client().Send("GET", click_url.substr(std::string(kPublicUrl).size()));
  ASSERT_EQ(click.status, 302) << click.body;
  std::string location = click.Header("Location");
  size_t at = location.find("spclid=");
  ASSERT_NE(at, std::string::npos) << location;
  std::string spclid = location.substr(at + 7, 36);

  std::string landing = "https://aave.example/landing?spclid=" + spclid + "&utm_source=x";
  std::string campaign = std::to_string(env->fixture->aave_campaign);
  // Issue 39 item 7: another community's key ("Shop") naming that click id stores its event
  // unlinked: it neither learns the campaign behind the click nor writes into its data.
  ASSERT_EQ(PostEvent(Event("foreign", landing), env->live_key).status, 200);
  json foreign = List(Community() + "&limit=1")["events"][0];
  EXPECT_EQ(foreign["name"], "foreign");
  EXPECT_TRUE(foreign["campaignId"].is_null()) << foreign.dump();
  // The campaign's own community links it.
  HttpResult aave = env->fixture->Admin("GET", "/admin/v1/campaigns/" + campaign);
  ASSERT_EQ(aave.status, 200) << aave.body;
  HttpResult own_key = env->fixture->Admin(
      "POST",
      "/admin/v1/communities/" +
          std::to_string(json::parse(aave.body)["communityId"].get<int64_t>()) + "/keys",
      json::object());
  ASSERT_EQ(own_key.status, 201) << own_key.body;
  std::string aave_key = json::parse(own_key.body)["key"];
  ASSERT_EQ(PostEvent(Event("deposit", landing), aave_key).status, 200);
  ASSERT_EQ(PostEvent(Event("deposit", landing), aave_key).status, 200);
  ASSERT_EQ(PostEvent(Event("view_pool", landing), aave_key).status, 200);

  json listed = List("campaignId=" + campaign);
  ASSERT_EQ(listed["events"].size(), 3u) << listed.dump();
  EXPECT_EQ(listed["events"][0]["name"], "view_pool");
  EXPECT_EQ(listed["events"][0]["campaignId"], campaign);
  EXPECT_EQ(listed["events"][0]["decisionId"], spclid);
  HttpResult counts = env->fixture->Admin("GET", "/admin/v1/events/counts?campaignId=" + campaign);
  ASSERT_EQ(counts.status, 200) << counts.body;
  EXPECT_EQ(
      json::parse(counts.body),
      json::parse(R"({"counts":[{"name":"deposit","count":2},{"name":"view_pool","count":1}],)"
                  R"("invalidByReason":{}})"));
  // The click was billed once and the events billed nothing more.
  HttpResult clicks = env->fixture->Admin("GET", "/admin/v1/clicks?campaignId=" + campaign);
  EXPECT_EQ(json::parse(clicks.body)["clicks"].size(), 1u);

  // An spclid no click has is stored without a campaign.
  ASSERT_EQ(PostEvent(Event("orphan",
                            "https://x.example/?spclid=00000000-0000-7000-8000-"
                            "000000000000"),
                      env->live_key)
                .status,
            200);
  json orphan = List(Community() + "&limit=1")["events"][0];
  EXPECT_EQ(orphan["name"], "orphan");
  EXPECT_TRUE(orphan["campaignId"].is_null());
  EXPECT_EQ(orphan["decisionId"], "00000000-0000-7000-8000-000000000000");
}

// Issue 37 item 1: the names advertiser SDKs send (capture(name) takes any non-empty string)
// are stored, listed and counted exactly as sent; only empty, over-long and control-character
// names are refused.
TEST(AdvertiserEventsTest, NamesAsSdksSendThemAreStoredListedAndCountedAsSent) {
  const std::vector<std::string> names = {"first-visit", "checkout.completed", "Sign Up",
                                          "Café-Ouvert", "注册完成"};
  for (const std::string& name : names) {
    HttpResult r = PostEvent(Event(name), env->live_key);
    EXPECT_EQ(r.status, 200) << name << " " << r.body;
  }
  json listed = List(Community() + "&limit=" + std::to_string(names.size()));
  ASSERT_EQ(listed["events"].size(), names.size()) << listed.dump();
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(listed["events"][i]["name"], names[names.size() - 1 - i]);  // newest first
  }
  HttpResult counts = env->fixture->Admin("GET", "/admin/v1/events/counts?" + Community());
  ASSERT_EQ(counts.status, 200) << counts.body;
  const json counted_names = json::parse(counts.body)["counts"];
  for (const std::string& name : names) {
    bool counted = false;
    for (const json& c : counted_names) counted |= c["name"] == name;
    EXPECT_TRUE(counted) << name << " " << counts.body;
  }
  for (const std::string& bad : {std::string(), std::string(257, 'x'), std::string("a\x01b")}) {
    HttpResult r = PostEvent(Event(bad), env->live_key);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(json::parse(r.body)["details"][0]["field"], "event.name") << r.body;
  }
}

TEST(AdvertiserEventsTest, TheListingPagesNewestFirstAndFiltersByTime) {
  for (const char* name : {"page_a", "page_b", "page_c"}) {
    ASSERT_EQ(PostEvent(Event(name), env->live_key).status, 200);
  }
  json first = List(Community() + "&limit=2");
  ASSERT_EQ(first["events"].size(), 2u);
  EXPECT_EQ(first["events"][0]["name"], "page_c");
  EXPECT_EQ(first["events"][1]["name"], "page_b");
  ASSERT_TRUE(first["nextCursor"].is_string());
  json second = List(Community() + "&limit=2&cursor=" + first["nextCursor"].get<std::string>());
  ASSERT_FALSE(second["events"].empty());
  EXPECT_EQ(second["events"][0]["name"], "page_a");
  EXPECT_TRUE(List(Community() + "&from=2999-01-01")["events"].empty());
  EXPECT_FALSE(List(Community() + "&to=2999-01-01T00:00:00Z")["events"].empty());
  EXPECT_TRUE(List(Community() + "&to=2000-01-01")["events"].empty());
  HttpResult bad = env->fixture->Admin("GET", "/admin/v1/events?from=yesterday");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(env->fixture->Admin("GET", "/admin/v1/events?bogus=1").status, 400);
}

}  // namespace
}  // namespace adserver::testing
