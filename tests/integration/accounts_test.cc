// Accounts, scoped access and creative review with the real binary over HTTP (issue 16):
// users and tokens made by the operator, an advertiser's ad pending until approved, a publisher
// kept to its own objects, console sign-in with its cookie, CSRF refusals, sign-out, and
// back-off after repeated bad passwords.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

constexpr char kPublicUrl[] = "https://ads.example.test";
constexpr char kPassword[] = "advertiser-pass-123";

class AccountsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ServerProcess::Options options;
    options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
    fixture_ = new ServingFixture(options);
  }
  static void TearDownTestSuite() {
    delete fixture_;
    fixture_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(fixture_->ok()) << fixture_->error(); }

  static HttpResult As(const std::string& token, const std::string& method,
                       const std::string& target, const json& body = nullptr) {
    HttpHeaders headers = {{"Authorization", "Bearer " + token}};
    std::string payload;
    if (!body.is_null()) {
      headers.emplace_back("Content-Type", "application/json");
      payload = body.dump();
    }
    return fixture_->Client().Send(method, target, headers, payload);
  }

  static int64_t Created(const HttpResult& r) {
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? json::parse(r.body)["id"].get<int64_t>() : 0;
  }

  // A user of `role` and a bearer token for it, issued by the operator.
  static std::string UserToken(const json& user) {
    HttpResult created = fixture_->Admin("POST", "/admin/v1/users", user);
    EXPECT_EQ(created.status, 201) << created.body;
    json body = json::parse(created.body);
    EXPECT_FALSE(body.contains("password"));
    EXPECT_FALSE(body.contains("passwordHash"));
    HttpResult token = fixture_->Admin("POST", "/admin/v1/tokens", {{"userId", body["id"]}});
    EXPECT_EQ(token.status, 201) << token.body;
    return json::parse(token.body)["token"].get<std::string>();
  }

  // The ad served to the Uniswap wallet through the open publisher's live key.
  static std::string ServedAd() {
    json body = {{"walletAddresses", {fixture_->wallets.uniswap}}, {"imageFormat", "LANDSCAPE"}};
    HttpResult r = fixture_->Client().Send(
        "POST", "/v1/ads",
        {{"Content-Type", "application/json"}, {"x-api-key", fixture_->keys.open_live}},
        body.dump());
    if (r.status != 200) return "status " + std::to_string(r.status);
    return json::parse(r.body).value("adId", "");
  }

  static std::string Explain() {
    json body = {{"walletAddresses", {fixture_->wallets.uniswap}}, {"imageFormat", "LANDSCAPE"}};
    HttpResult r =
        fixture_->Client().Send("POST", "/v1/ads",
                                {{"Content-Type", "application/json"},
                                 {"x-api-key", fixture_->keys.open_live},
                                 {"X-Adserver-Explain", "1"},
                                 {"Authorization", "Bearer " + fixture_->server().admin_token()}},
                                body.dump());
    return r.Header("X-Adserver-Explain");
  }

  // Waits (with a deadline) until ServedAd() is `ad`.
  static bool ServesWithin(const std::string& ad, std::chrono::seconds deadline) {
    auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
      if (ServedAd() == ad) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for serving state
    }
    return false;
  }

  static ServingFixture* fixture_;
};
ServingFixture* AccountsTest::fixture_ = nullptr;

TEST_F(AccountsTest, AdvertiserAdIsPendingUntilApprovedAndPublisherSeesOnlyItsOwn) {
  int64_t community =
      Created(fixture_->Admin("POST", "/admin/v1/communities",
                              {{"name", "Review Co"}, {"logoUrl", "https://cdn.example/r.png"}}));
  int64_t other_publisher =
      Created(fixture_->Admin("POST", "/admin/v1/publishers", {{"name", "Someone else"}}));
  std::string advertiser = UserToken({{"email", "Adv@Example.test"},
                                      {"password", kPassword},
                                      {"role", "advertiser"},
                                      {"communityId", community}});
  std::string publisher = UserToken({{"email", "pub@example.test"},
                                     {"password", "publisher-pass-1"},
                                     {"role", "publisher"},
                                     {"publisherId", fixture_->keys.open_publisher}});

  // The advertiser's campaign outbids the fixture's Aave campaign for the Uniswap wallet.
  int64_t campaign = Created(As(advertiser, "POST", "/admin/v1/campaigns",
                                {{"communityId", community},
                                 {"name", "Reviewed"},
                                 {"status", "active"},
                                 {"pricing", {{"model", "CPM"}, {"bid", 50}}},
                                 {"targeting", {{"projects", {"uniswap"}}}}}));
  HttpResult ad = As(advertiser, "POST", "/admin/v1/ads",
                     {{"campaignId", campaign},
                      {"headline", "Reviewed ad"},
                      {"content", "Wait for it"},
                      {"ctaUrl", "https://review.example"},
                      {"ctaLabel", "Go"},
                      {"images", {{"LANDSCAPE", "https://cdn.example/r-l.png"}}}});
  ASSERT_EQ(ad.status, 201) << ad.body;
  json ad_body = json::parse(ad.body);
  EXPECT_EQ(ad_body["reviewStatus"], "pending");
  std::string ad_id = std::to_string(ad_body["id"].get<int64_t>());
  EXPECT_NE(ServedAd(), ad_id);  // the write refreshed the catalog: pending never serves

  // Advertisers may not review; the operator's queue holds the ad.
  EXPECT_EQ(
      As(advertiser, "PATCH", "/admin/v1/ads/" + ad_id, {{"reviewStatus", "approved"}}).status,
      403);
  HttpResult queue = fixture_->Admin("GET", "/admin/v1/ads?reviewStatus=pending");
  ASSERT_EQ(queue.status, 200) << queue.body;
  bool queued = false;
  json queue_body = json::parse(queue.body);
  for (const json& a : queue_body["ads"]) {
    queued |= std::to_string(a["id"].get<int64_t>()) == ad_id;
    EXPECT_EQ(a["reviewStatus"], "pending");
  }
  EXPECT_TRUE(queued) << ad_id << " " << queue.body;
  HttpResult approved =
      fixture_->Admin("PATCH", "/admin/v1/ads/" + ad_id, {{"reviewStatus", "approved"}});
  ASSERT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(json::parse(approved.body)["reviewStatus"], "approved");
  EXPECT_TRUE(ServesWithin(ad_id, std::chrono::seconds(5))) << ServedAd() << " " << Explain();

  // A rejection carries its reason to the advertiser and stops serving.
  HttpResult rejected =
      fixture_->Admin("PATCH", "/admin/v1/ads/" + ad_id,
                      {{"reviewStatus", "rejected"}, {"reviewReason", "misleading claim"}});
  ASSERT_EQ(rejected.status, 200) << rejected.body;
  HttpResult seen = As(advertiser, "GET", "/admin/v1/ads/" + ad_id);
  ASSERT_EQ(seen.status, 200) << seen.body;
  EXPECT_EQ(json::parse(seen.body)["reviewReason"], "misleading claim");
  EXPECT_NE(ServedAd(), ad_id);

  // The publisher user: its own publisher only; nobody's campaigns.
  std::string own = std::to_string(fixture_->keys.open_publisher);
  EXPECT_EQ(As(publisher, "GET", "/admin/v1/publishers/" + own).status, 200);
  EXPECT_EQ(As(publisher, "GET", "/admin/v1/publishers/" + std::to_string(other_publisher)).status,
            404);
  EXPECT_EQ(As(publisher, "GET", "/admin/v1/campaigns/" + std::to_string(campaign)).status, 404);
  EXPECT_EQ(As(publisher, "POST", "/admin/v1/communities",
               {{"name", "Mine"}, {"logoUrl", "https://cdn.example/m.png"}})
                .status,
            403);
  HttpResult listed = As(publisher, "GET", "/admin/v1/publishers");
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(json::parse(listed.body)["publishers"].size(), 1u) << listed.body;
  // A revoked token stops working at once.
  HttpResult tokens = As(publisher, "GET", "/admin/v1/tokens");
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  int64_t token_id = json::parse(tokens.body)["tokens"][0]["id"].get<int64_t>();
  EXPECT_EQ(As(publisher, "DELETE", "/admin/v1/tokens/" + std::to_string(token_id)).status, 200);
  EXPECT_EQ(As(publisher, "GET", "/admin/v1/publishers/" + own).status, 401);
}

// The session cookie's Set-Cookie value, and the cookie pair to send back.
struct Session {
  std::string set_cookie;
  std::string cookie;
  std::string csrf;
};

Session SignIn(HttpClient& client, const std::string& email, const std::string& password) {
  HttpResult r =
      client.Post("/console/api/session", json{{"email", email}, {"password", password}}.dump());
  EXPECT_EQ(r.status, 201) << r.body;
  Session s;
  s.set_cookie = r.Header("Set-Cookie");
  s.cookie = s.set_cookie.substr(0, s.set_cookie.find(';'));
  if (r.status == 201) s.csrf = json::parse(r.body)["csrfToken"].get<std::string>();
  return s;
}

// Issue 16 item 4's gaps: a user changes its own password from the console (CSRF-checked, the
// current password required, its other sessions end), active tokens are capped per user, and
// an advertiser lists its community's clicks and conversions without naming a campaign.
TEST_F(AccountsTest, ConsoleUserChangesOwnPasswordAndOtherSessionsEnd) {
  int64_t community =
      Created(fixture_->Admin("POST", "/admin/v1/communities",
                              {{"name", "Password Co"}, {"logoUrl", "https://cdn.example/p.png"}}));
  ASSERT_EQ(fixture_
                ->Admin("POST", "/admin/v1/users",
                        {{"email", "self@example.test"},
                         {"password", kPassword},
                         {"role", "advertiser"},
                         {"communityId", community}})
                .status,
            201);
  HttpClient client = fixture_->Client();
  Session mine = SignIn(client, "self@example.test", kPassword);
  Session elsewhere = SignIn(client, "self@example.test", kPassword);
  const std::string kNew = "changed-password-77";
  json change = {{"currentPassword", kPassword}, {"password", kNew}};
  HttpHeaders base = {{"Cookie", mine.cookie}, {"Content-Type", "application/json"}};
  EXPECT_EQ(client.Send("POST", "/console/api/password", base, change.dump()).status, 403);
  HttpHeaders good = base;
  good.emplace_back("X-CSRF-Token", mine.csrf);
  good.emplace_back("Origin", kPublicUrl);
  HttpResult wrong =
      client.Send("POST", "/console/api/password", good,
                  json{{"currentPassword", "not-my-password"}, {"password", kNew}}.dump());
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  EXPECT_EQ(json::parse(wrong.body)["details"][0]["field"], "currentPassword") << wrong.body;
  HttpResult changed = client.Send("POST", "/console/api/password", good, change.dump());
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(json::parse(changed.body)["endedSessions"], 1);
  EXPECT_EQ(client.Get("/console/api/session", {{"Cookie", mine.cookie}}).status, 200);
  EXPECT_EQ(client.Get("/console/api/session", {{"Cookie", elsewhere.cookie}}).status, 401);
  EXPECT_EQ(client
                .Post("/console/api/session",
                      json{{"email", "self@example.test"}, {"password", kPassword}}.dump())
                .status,
            401);
  SignIn(client, "self@example.test", kNew);
}

TEST_F(AccountsTest, TheTwentyFirstActiveTokenIsRefusedUntilOneIsRevoked) {
  int64_t community =
      Created(fixture_->Admin("POST", "/admin/v1/communities",
                              {{"name", "Token Co"}, {"logoUrl", "https://cdn.example/t.png"}}));
  std::string token = UserToken({{"email", "tokens@example.test"},
                                 {"password", kPassword},
                                 {"role", "advertiser"},
                                 {"communityId", community}});
  for (int i = 2; i <= 20; ++i) {
    ASSERT_EQ(As(token, "POST", "/admin/v1/tokens", json::object()).status, 201) << i;
  }
  HttpResult over = As(token, "POST", "/admin/v1/tokens", json::object());
  EXPECT_EQ(over.status, 409) << over.body;
  json body = json::parse(over.body);
  EXPECT_TRUE(body["error"].is_string());
  ASSERT_EQ(body["details"].size(), 1u) << over.body;
  EXPECT_EQ(body["details"][0]["field"], "userId");
  EXPECT_TRUE(body["details"][0]["message"].is_string());
  json listed = json::parse(As(token, "GET", "/admin/v1/tokens").body)["tokens"];
  ASSERT_EQ(listed.size(), 20u);
  // Revoking one (the newest: the oldest is the one calling) frees a slot.
  std::string newest = std::to_string(listed.front()["id"].get<int64_t>());
  ASSERT_EQ(As(token, "DELETE", "/admin/v1/tokens/" + newest).status, 200);
  EXPECT_EQ(As(token, "POST", "/admin/v1/tokens", json::object()).status, 201);
}

TEST_F(AccountsTest, AdvertiserListsItsCommunitysClicksAndConversionsWithoutACampaign) {
  // A served ad and its click.
  json request = {{"walletAddresses", {fixture_->wallets.uniswap}}, {"imageFormat", "LANDSCAPE"}};
  HttpResult served = fixture_->Client().Send(
      "POST", "/v1/ads",
      {{"Content-Type", "application/json"}, {"x-api-key", fixture_->keys.open_live}},
      request.dump());
  ASSERT_EQ(served.status, 200) << served.body;
  std::string cta = json::parse(served.body)["ctaUrl"].get<std::string>();
  ASSERT_TRUE(cta.starts_with(kPublicUrl)) << cta;
  auto click_count = [] {
    HttpResult r = fixture_->Admin("GET", "/admin/v1/clicks?limit=1000");
    return r.status == 200 ? json::parse(r.body)["clicks"].size() : size_t{0};
  };
  const size_t before = click_count();
  ASSERT_EQ(fixture_->Client().Get(cta.substr(std::string(kPublicUrl).size())).status, 302);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (click_count() <= before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for the click write
  }
  HttpResult all = fixture_->Admin("GET", "/admin/v1/clicks?limit=1");
  ASSERT_EQ(all.status, 200) << all.body;
  ASSERT_EQ(json::parse(all.body)["clicks"].size(), 1u) << all.body;
  json click = json::parse(all.body)["clicks"][0];
  std::string campaign = click["campaignId"].get<std::string>();
  json campaign_body = json::parse(fixture_->Admin("GET", "/admin/v1/campaigns/" + campaign).body);
  int64_t community = campaign_body["communityId"].get<int64_t>();

  std::string advertiser = UserToken({{"email", "lists@example.test"},
                                      {"password", kPassword},
                                      {"role", "advertiser"},
                                      {"communityId", community}});
  HttpResult clicks = As(advertiser, "GET", "/admin/v1/clicks");
  ASSERT_EQ(clicks.status, 200) << clicks.body;
  json rows = json::parse(clicks.body)["clicks"];
  bool found = false;
  for (const json& c : rows) {
    found |= c["id"] == click["id"];
    json owner = json::parse(
        fixture_->Admin("GET", "/admin/v1/campaigns/" + c["campaignId"].get<std::string>()).body);
    EXPECT_EQ(owner["communityId"], community) << c.dump();
  }
  EXPECT_TRUE(found) << clicks.body;
  HttpResult conversions = As(advertiser, "GET", "/admin/v1/conversions");
  ASSERT_EQ(conversions.status, 200) << conversions.body;
  EXPECT_TRUE(json::parse(conversions.body)["conversions"].is_array());

  // Another community's advertiser sees none of them; naming that campaign is a 404.
  int64_t other = Created(
      fixture_->Admin("POST", "/admin/v1/communities",
                      {{"name", "Nobody's clicks"}, {"logoUrl", "https://cdn.example/n.png"}}));
  std::string stranger = UserToken({{"email", "stranger@example.test"},
                                    {"password", kPassword},
                                    {"role", "advertiser"},
                                    {"communityId", other}});
  HttpResult none = As(stranger, "GET", "/admin/v1/clicks");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_TRUE(json::parse(none.body)["clicks"].empty()) << none.body;
  EXPECT_EQ(As(stranger, "GET", "/admin/v1/clicks?campaignId=" + campaign).status, 404);
  EXPECT_EQ(As(stranger, "GET", "/admin/v1/conversions").status, 200);
}

TEST_F(AccountsTest, ConsoleSessionCookieCsrfSignOutAndBackOff) {
  int64_t community =
      Created(fixture_->Admin("POST", "/admin/v1/communities",
                              {{"name", "Cookie Co"}, {"logoUrl", "https://cdn.example/c.png"}}));
  ASSERT_EQ(fixture_
                ->Admin("POST", "/admin/v1/users",
                        {{"email", "console@example.test"},
                         {"password", kPassword},
                         {"role", "advertiser"},
                         {"communityId", community}})
                .status,
            201);
  HttpClient client = fixture_->Client();
  Session s = SignIn(client, "CONSOLE@example.test", kPassword);
  EXPECT_NE(s.set_cookie.find("adserver_session="), std::string::npos) << s.set_cookie;
  EXPECT_NE(s.set_cookie.find("HttpOnly"), std::string::npos) << s.set_cookie;
  EXPECT_NE(s.set_cookie.find("Secure"), std::string::npos) << s.set_cookie;  // https public URL
  EXPECT_NE(s.set_cookie.find("SameSite=Strict"), std::string::npos) << s.set_cookie;
  EXPECT_NE(s.set_cookie.find("Path=/"), std::string::npos) << s.set_cookie;
  ASSERT_FALSE(s.csrf.empty());

  HttpResult who = client.Get("/console/api/session", {{"Cookie", s.cookie}});
  ASSERT_EQ(who.status, 200) << who.body;
  EXPECT_EQ(json::parse(who.body)["user"]["email"], "console@example.test");
  EXPECT_EQ(json::parse(who.body)["user"]["role"], "advertiser");
  EXPECT_EQ(client.Get("/admin/v1/campaigns", {{"Cookie", s.cookie}}).status, 200);

  json campaign = {{"communityId", community},
                   {"name", "From the console"},
                   {"status", "paused"},
                   {"pricing", {{"model", "CPM"}, {"bid", 1}}},
                   {"targeting", {{"projects", {"uniswap"}}}}};
  HttpHeaders base = {{"Cookie", s.cookie}, {"Content-Type", "application/json"}};
  HttpHeaders no_csrf = base;
  HttpResult r = client.Send("POST", "/admin/v1/campaigns", no_csrf, campaign.dump());
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_TRUE(json::parse(r.body).contains("error"));
  HttpHeaders foreign = base;
  foreign.emplace_back("X-CSRF-Token", s.csrf);
  foreign.emplace_back("Origin", "https://evil.example");
  EXPECT_EQ(client.Send("POST", "/admin/v1/campaigns", foreign, campaign.dump()).status, 403);
  HttpHeaders cross_site = base;
  cross_site.emplace_back("X-CSRF-Token", s.csrf);
  cross_site.emplace_back("Sec-Fetch-Site", "cross-site");
  EXPECT_EQ(client.Send("POST", "/admin/v1/campaigns", cross_site, campaign.dump()).status, 403);
  HttpHeaders good = base;
  good.emplace_back("X-CSRF-Token", s.csrf);
  good.emplace_back("Origin", kPublicUrl);
  good.emplace_back("Sec-Fetch-Site", "same-origin");
  EXPECT_EQ(client.Send("POST", "/admin/v1/campaigns", good, campaign.dump()).status, 201);

  // Sign-out ends the session on the server: the old cookie no longer works.
  HttpResult out = client.Send("DELETE", "/console/api/session",
                               {{"Cookie", s.cookie}, {"X-CSRF-Token", s.csrf}});
  EXPECT_EQ(out.status, 204) << out.body;
  EXPECT_NE(out.Header("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(client.Get("/admin/v1/campaigns", {{"Cookie", s.cookie}}).status, 401);
  EXPECT_EQ(client.Get("/console/api/session", {{"Cookie", s.cookie}}).status, 401);

  // Wrong passwords: 401 until the back-off starts, then 429 with Retry-After.
  int last = 0;
  HttpResult limited;
  for (int i = 0; i < 8 && last != 429; ++i) {
    limited =
        client.Post("/console/api/session",
                    json{{"email", "console@example.test"}, {"password", "wrong-pass-0"}}.dump());
    last = limited.status;
    if (last != 429) {
      EXPECT_EQ(last, 401) << limited.body;
    }
  }
  ASSERT_EQ(last, 429) << limited.body;
  EXPECT_FALSE(limited.Header("Retry-After").empty());
  EXPECT_TRUE(json::parse(limited.body).contains("error"));
  // Even the right password waits for the back-off.
  EXPECT_EQ(client
                .Post("/console/api/session",
                      json{{"email", "console@example.test"}, {"password", kPassword}}.dump())
                .status,
            429);
}

// `adserver users create` makes the first operator: with no admin token configured, the admin
// API then answers that operator's session and tokens (and nobody without credentials).
TEST(AccountsCliTest, UsersCreateMakesTheFirstOperator) {
  TempDir dir;
  const std::string data = dir.File("data");
  const std::string password_file = dir.File("password");
  std::ofstream(password_file) << "first-operator-pass\n";
  const std::string create = AdserverBinary() + " users create --data " + data +
                             " --email root@example.test --role operator --password-file " +
                             password_file + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(create.c_str()), 0);
  const std::string too_short = "echo short | " + AdserverBinary() + " users create --data " +
                                data + " --email x@example.test --role operator > /dev/null 2>&1";
  EXPECT_NE(std::system(too_short.c_str()), 0);

  ServerProcess::Options options;
  options.data_dir = data;
  options.admin_token = "";
  ServerProcess server(options);
  ASSERT_TRUE(server.Start()) << server.error();
  HttpClient client("127.0.0.1", server.port());
  EXPECT_EQ(client.Get("/admin/v1/publishers").status, 401);
  HttpResult in =
      client.Post("/console/api/session",
                  json{{"email", "root@example.test"}, {"password", "first-operator-pass"}}.dump());
  ASSERT_EQ(in.status, 201) << in.body;
  std::string set_cookie = in.Header("Set-Cookie");
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos);  // http public URL
  std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  std::string csrf = json::parse(in.body)["csrfToken"];
  HttpHeaders headers = {
      {"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Content-Type", "application/json"}};
  EXPECT_EQ(client.Send("POST", "/admin/v1/publishers", headers, R"({"name":"First"})").status,
            201);
  HttpResult token = client.Send("POST", "/admin/v1/tokens", headers, "{}");
  ASSERT_EQ(token.status, 201) << token.body;
  HttpResult users = client.Get(
      "/admin/v1/users",
      {{"Authorization", "Bearer " + json::parse(token.body)["token"].get<std::string>()}});
  ASSERT_EQ(users.status, 200) << users.body;
  EXPECT_EQ(json::parse(users.body)["users"].size(), 1u);
}

}  // namespace
}  // namespace adserver::testing
