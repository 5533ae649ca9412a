// Identity rules over real HTTP (issues 3 and 20): the consented identity cookie of /v1/ads
// (and its partitioned twin), localId binding of /api/ads, test keys, the admin privacy
// operations (erasure reaching cookies the server holds nothing for, also from the CLI), a
// wallet alone unlocking nothing, key rotation and restarts, retention, and what the logs must
// not show. Floods and shutdown are in identity_flood_test.cc.
#include <gtest/gtest.h>
#include <strings.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "integration/fixture.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

const std::string kKey1 = "1:" + std::string(64, '1');
const std::string kKey2 = "2:" + std::string(64, '2');
constexpr char kCookie[] = "adserver_id";
constexpr char kTwin[] = "adserver_id_p";

ServingFixture* fixture = nullptr;

class IdentityEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { fixture = new ServingFixture(); }
  void TearDown() override {
    delete fixture;
    fixture = nullptr;
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new IdentityEnvironment);

// Every Set-Cookie header of a response.
std::vector<std::string> SetCookies(const HttpResult& r) {
  std::vector<std::string> out;
  for (const auto& [name, value] : r.headers) {
    if (name.size() == 10 && strncasecmp(name.c_str(), "set-cookie", 10) == 0) out.push_back(value);
  }
  return out;
}

// The value set for cookie `name`, or "".
std::string CookieValue(const HttpResult& r, const std::string& name) {
  for (const std::string& c : SetCookies(r)) {
    if (c.starts_with(name + "=")) return c.substr(name.size() + 1, c.find(';') - name.size() - 1);
  }
  return "";
}

struct Call {
  std::string path = "/v1/ads";
  std::optional<std::vector<std::string>> wallets;
  std::optional<bool> consent;
  std::optional<json> local_id;  // json null or string
  std::string cookie;            // Cookie header, if not empty
  std::string key;               // default: open live key
  std::string origin;
};

HttpResult Send(ServerProcess& server, const std::string& default_key, const Call& c) {
  json body = {{"imageFormat", "LANDSCAPE"}};
  if (c.wallets) body["walletAddresses"] = *c.wallets;
  if (c.consent) body["cookieConsent"] = *c.consent;
  if (c.local_id) body["localId"] = *c.local_id;
  HttpHeaders headers = {{"Content-Type", "application/json"},
                         {"x-api-key", c.key.empty() ? default_key : c.key}};
  if (!c.cookie.empty()) headers.emplace_back("Cookie", c.cookie);
  if (!c.origin.empty()) headers.emplace_back("Origin", c.origin);
  HttpClient client("127.0.0.1", server.port());
  return client.Send("POST", c.path, headers, body.dump());
}

HttpResult Send(const Call& c) { return Send(fixture->server(), fixture->keys.open_live, c); }

std::string CampaignOf(const HttpResult& r) {
  json b = json::parse(r.body, nullptr, false);
  return b.is_object() ? b.value("campaignId", "") : "";
}

json Body(const HttpResult& r) { return json::parse(r.body, nullptr, false); }

// A localId is a sealed token: base64url, 120 characters for one wallet.
bool IsLocalId(const json& v) {
  if (!v.is_string() || v.get<std::string>().size() < 100) return false;
  for (char c : v.get<std::string>()) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(fixture, nullptr);
    ASSERT_TRUE(fixture->ok()) << fixture->error();
  }
  const FixtureWallets& W() { return fixture->wallets; }
  std::string Aave() { return std::to_string(fixture->aave_campaign); }
  std::string Lido() { return std::to_string(fixture->lido_campaign); }
  // A consented call with `wallet` that returns the identity cookie value.
  std::string NewIdentity(const std::string& wallet) {
    HttpResult r = Send({.wallets = std::vector<std::string>{wallet}, .consent = true});
    EXPECT_TRUE(r.status == 200 || r.status == 204) << r.status << " " << r.body;
    return CookieValue(r, kCookie);
  }
};

// ---- /v1/ads: the consented cookie ----------------------------------------------------------

TEST_F(IdentityTest, ConsentedRequestWithWalletsSetsTheCookieAndItsPartitionedTwin) {
  HttpResult r = Send({.wallets = std::vector<std::string>{W().uniswap}, .consent = true});
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<std::string> cookies = SetCookies(r);
  ASSERT_EQ(cookies.size(), 2u);
  std::string value = CookieValue(r, kCookie);
  ASSERT_FALSE(value.empty());
  EXPECT_EQ(CookieValue(r, kTwin), value);
  for (const std::string& c : cookies) {
    for (const char* attr : {"; HttpOnly", "; Secure", "; SameSite=None", "; Path=/"}) {
      EXPECT_NE(c.find(attr), std::string::npos) << attr << " in " << c;
    }
    size_t at = c.find("Max-Age=");
    ASSERT_NE(at, std::string::npos) << c;
    long max_age = std::stol(c.substr(at + 8));
    EXPECT_GT(max_age, 0);
    EXPECT_LE(max_age, 395L * 86400) << "at most 13 months";
    EXPECT_EQ(c.find("Domain="), std::string::npos);
  }
  EXPECT_EQ(cookies[0].find("Partitioned"), std::string::npos);
  EXPECT_NE(cookies[1].find("; Partitioned"), std::string::npos);
  EXPECT_TRUE(cookies[1].starts_with(std::string(kTwin) + "="));
}

TEST_F(IdentityTest, ConsentedRequestWithoutWalletsIsServedFromTheCookie) {
  std::string value = NewIdentity(W().uniswap);
  for (std::optional<std::vector<std::string>> wallets :
       {std::optional<std::vector<std::string>>(), std::optional(std::vector<std::string>{})}) {
    HttpResult r =
        Send({.wallets = wallets, .consent = true, .cookie = std::string(kCookie) + "=" + value});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(CampaignOf(r), Aave());
    EXPECT_FALSE(Body(r).contains("walletAddress"));  // current variant shape unchanged
    // Unchanged and sealed less than identity.cookie_refresh_seconds (1 day) ago: not re-set.
    EXPECT_TRUE(SetCookies(r).empty());
  }
}

TEST_F(IdentityTest, ThePartitionedTwinAloneIsAccepted) {
  std::string value = NewIdentity(W().uniswap);
  HttpResult r = Send({.consent = true, .cookie = std::string(kTwin) + "=" + value});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Aave());
}

TEST_F(IdentityTest, TheUnpartitionedCookieWinsOverTheTwin) {
  std::string uniswap = NewIdentity(W().uniswap);
  std::string aave = NewIdentity(W().aave);
  HttpResult r = Send({.consent = true,
                       .cookie = std::string(kTwin) + "=" + aave + "; " + kCookie + "=" + uniswap});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Aave());
  // A twin that opens backs up an unpartitioned cookie that does not.
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=garbage; " + kTwin + "=" + aave});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Lido());
}

TEST_F(IdentityTest, ConsentedRequestsWithWalletsLinkThemToTheCookieIdentity) {
  std::string value = NewIdentity(W().aave_and_lido);  // no fill on its own
  HttpResult r = Send({.wallets = std::vector<std::string>{W().uniswap},
                       .consent = true,
                       .cookie = std::string(kCookie) + "=" + value});
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(SetCookies(r).size(), 2u) << "a new wallet: the cookie is re-sealed at once";
  std::string linked = CookieValue(r, kCookie);
  // The same identity, now also reaching the Aave campaign without wallets.
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + linked});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Aave());
  // The old value still names only its own wallet (nothing is shared server-side).
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + value});
  EXPECT_EQ(r.status, 204) << r.body;
  // Nothing is stored per identity.
  HttpResult stored = fixture->Admin("GET", "/admin/v1/identities/by-wallet/" + W().aave_and_lido);
  ASSERT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(Body(stored)["identities"].size(), 0u) << stored.body;
  EXPECT_EQ(Body(stored)["erased"], false);
}

TEST_F(IdentityTest, AWalletAloneUnlocksNothingItsOwnerLinkedElsewhere) {
  // The owner's browser links W1 (aave: the Lido campaign) and W2 (uniswap: Aave campaign).
  std::string owner = NewIdentity(W().aave);
  HttpResult r = Send({.wallets = std::vector<std::string>{W().uniswap},
                       .consent = true,
                       .cookie = std::string(kCookie) + "=" + owner});
  ASSERT_EQ(r.status, 200) << r.body;
  // Another client knows W1 only. Whatever it does with it, it never reaches W2's ad.
  std::string other = NewIdentity(W().aave);
  for (int i = 0; i < 5; ++i) {
    r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + other});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(CampaignOf(r), Lido());
    r = Send({.wallets = std::vector<std::string>{W().aave},
              .consent = true,
              .cookie = std::string(kCookie) + "=" + other});
    EXPECT_EQ(CampaignOf(r), Lido());
    if (!CookieValue(r, kCookie).empty()) other = CookieValue(r, kCookie);
  }
  r = Send({.path = "/api/ads",
            .wallets = std::vector<std::string>{W().aave},
            .local_id = json(nullptr)});
  json local = Body(r)["localId"];
  ASSERT_TRUE(IsLocalId(local)) << r.body;
  r = Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = local});
  // The Lido ad is current-only (400 characters): no fill, but never W2's Aave ad.
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Body(r)["localId"], local);
}

TEST_F(IdentityTest, WithoutConsentNothingIsReadOrSet) {
  std::string value = NewIdentity(W().uniswap);
  for (std::optional<bool> consent : {std::optional<bool>(), std::optional<bool>(false)}) {
    HttpResult r = Send({.consent = consent, .cookie = std::string(kCookie) + "=" + value});
    EXPECT_EQ(r.status, 400) << r.body;  // the cookie is ignored: wallets are required
    EXPECT_TRUE(SetCookies(r).empty());
    r = Send({.wallets = std::vector<std::string>{W().uniswap},
              .consent = consent,
              .cookie = std::string(kCookie) + "=" + value});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(SetCookies(r).empty());
  }
}

TEST_F(IdentityTest, ConsentWithoutWalletsAndWithoutAnyCookieIs400) {
  HttpResult r = Send({.wallets = std::vector<std::string>{}, .consent = true});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_TRUE(SetCookies(r).empty());
  r = Send({.consent = true, .cookie = "other=1"});
  EXPECT_EQ(r.status, 400) << r.body;
}

TEST_F(IdentityTest, ACookieThatDoesNotUnsealIsNoIdentityAndNoError) {
  std::string value = NewIdentity(W().uniswap);
  std::string tampered = value;
  tampered[20] = tampered[20] == 'A' ? 'B' : 'A';
  std::string foreign(87, 'Q');
  for (const std::string& bad : {tampered, foreign, std::string("x"), std::string()}) {
    HttpResult r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + bad});
    EXPECT_EQ(r.status, 204) << bad << " " << r.body;
    EXPECT_TRUE(r.body.empty());
    EXPECT_TRUE(SetCookies(r).empty()) << "no identity is made from it";
  }
  // With wallets, a bad cookie gets a fresh identity, not the tampered one.
  HttpResult r = Send({.wallets = std::vector<std::string>{W().aave},
                       .consent = true,
                       .cookie = std::string(kCookie) + "=" + tampered});
  ASSERT_EQ(r.status, 200) << r.body;
  std::string fresh = CookieValue(r, kCookie);
  ASSERT_FALSE(fresh.empty());
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + fresh});
  EXPECT_EQ(CampaignOf(r), Lido()) << "the fresh identity has only the aave wallet";
}

TEST_F(IdentityTest, NoFillStillLinksAndSetsTheCookie) {
  HttpResult r = Send({.wallets = std::vector<std::string>{W().unknown}, .consent = true});
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(SetCookies(r).size(), 2u);
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + CookieValue(r, kCookie)});
  EXPECT_EQ(r.status, 204);  // known identity, its wallet just has no ad
}

TEST_F(IdentityTest, TestKeysNeverSetCookies) {
  std::string test_key = fixture->keys.open_test;
  HttpResult r =
      Send({.wallets = std::vector<std::string>{W().uniswap}, .consent = true, .key = test_key});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(SetCookies(r).empty());
  std::string value = NewIdentity(W().uniswap);
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + value, .key = test_key});
  EXPECT_EQ(r.status, 200) << r.body;  // a sample ad
  EXPECT_TRUE(SetCookies(r).empty());
}

TEST_F(IdentityTest, CredentialedCorsHeadersAccompanyTheCookie) {
  HttpResult r = Send({.wallets = std::vector<std::string>{W().uniswap},
                       .consent = true,
                       .key = fixture->keys.strict,
                       .origin = "https://news.example"});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "https://news.example");
  EXPECT_EQ(r.Header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(SetCookies(r).size(), 2u);
  // The publisher's own page recognises the returning visitor from the cookie.
  r = Send({.consent = true,
            .cookie = std::string(kCookie) + "=" + CookieValue(r, kCookie),
            .key = fixture->keys.strict,
            .origin = "https://news.example"});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Aave());
}

// Issue 39: with a publisher's public key, any website could ask which ad the visitor's
// identity gets. A browser request from an origin the publisher has not listed (every origin
// when it lists none, `null` too) is served as if the visitor had not consented.
TEST_F(IdentityTest, BrowsersFromUnlistedOriginsAreServedWithoutTheCookie) {
  std::string value = NewIdentity(W().uniswap);  // no Origin: a server-side call
  ASSERT_FALSE(value.empty());
  for (const char* origin : {"https://evil.example", "null"}) {
    SCOPED_TRACE(origin);
    // The cookie is not read: without wallets there is nothing to serve from.
    HttpResult r =
        Send({.consent = true, .cookie = std::string(kCookie) + "=" + value, .origin = origin});
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(r.body.find("walletAddresses"), std::string::npos) << r.body;
    EXPECT_TRUE(SetCookies(r).empty());
    // With wallets the SDK still gets its ad (and CORS lets it read it), but no cookie is set
    // and the cookie's identity learns nothing.
    r = Send({.wallets = std::vector<std::string>{W().aave},
              .consent = true,
              .cookie = std::string(kCookie) + "=" + value,
              .origin = origin});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(CampaignOf(r), Lido());
    EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), origin);
    EXPECT_TRUE(SetCookies(r).empty());
  }
  // The visitor's own cookie still works where it may: served from it alone (no Origin).
  HttpResult r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + value});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Aave());
  // A publisher listing origins refuses the others outright (unchanged).
  r = Send({.wallets = std::vector<std::string>{W().uniswap},
            .consent = true,
            .key = fixture->keys.strict,
            .origin = "https://evil.example"});
  EXPECT_EQ(r.status, 401) << r.body;
}

// ---- /api/ads: localId ----------------------------------------------------------------------

TEST_F(IdentityTest, LocalIdIsIssuedWhenTheKeyIsPresentWithWallets) {
  HttpResult r = Send({.path = "/api/ads",
                       .wallets = std::vector<std::string>{W().uniswap},
                       .local_id = json(nullptr)});
  ASSERT_EQ(r.status, 200) << r.body;
  json b = Body(r);
  EXPECT_TRUE(IsLocalId(b["localId"])) << r.body;
  EXPECT_EQ(b["walletAddress"], W().uniswap);
  // Sending the id back with wallets keeps it.
  r = Send({.path = "/api/ads",
            .wallets = std::vector<std::string>{W().uniswap},
            .local_id = b["localId"]});
  EXPECT_EQ(Body(r)["localId"], b["localId"]);
  // New wallets bind to a new id (the SDK stores whatever comes back).
  r = Send({.path = "/api/ads",
            .wallets = std::vector<std::string>{W().aave},
            .local_id = b["localId"]});
  ASSERT_TRUE(IsLocalId(Body(r)["localId"])) << r.body;
  EXPECT_NE(Body(r)["localId"], b["localId"]);
  // An unknown id gets a new one.
  r = Send({.path = "/api/ads",
            .wallets = std::vector<std::string>{W().uniswap},
            .local_id = json("f00dbabe")});
  EXPECT_TRUE(IsLocalId(Body(r)["localId"]));
  EXPECT_NE(Body(r)["localId"], "f00dbabe");
  EXPECT_NE(Body(r)["localId"], b["localId"]);
  // Without the localId key, no localId.
  r = Send({.path = "/api/ads", .wallets = std::vector<std::string>{W().uniswap}});
  EXPECT_FALSE(Body(r).contains("localId")) << r.body;
  EXPECT_TRUE(SetCookies(r).empty());
}

TEST_F(IdentityTest, KnownLocalIdWithEmptyWalletsIsServedForTheBoundWallets) {
  HttpResult r = Send({.path = "/api/ads",
                       .wallets = std::vector<std::string>{W().unknown, W().uniswap},
                       .local_id = json(nullptr)});
  ASSERT_EQ(r.status, 200) << r.body;
  json id = Body(r)["localId"];
  r = Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = id});
  ASSERT_EQ(r.status, 200) << r.body;
  json b = Body(r);
  EXPECT_EQ(b["campaignId"], Aave());
  EXPECT_EQ(b["walletAddress"], W().uniswap) << "the bound wallet that matched";
  EXPECT_EQ(b["localId"], id);
}

TEST_F(IdentityTest, NoFillOn404CarriesTheLocalId) {
  HttpResult r = Send({.path = "/api/ads",
                       .wallets = std::vector<std::string>{W().aave_and_lido},
                       .local_id = json(nullptr)});
  ASSERT_EQ(r.status, 404) << r.body;
  json b = Body(r);
  EXPECT_EQ(b["error"], "No ad available");
  EXPECT_TRUE(IsLocalId(b["localId"])) << r.body;
  r = Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = b["localId"]});
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Body(r)["localId"], b["localId"]) << "known id: not voided";
}

TEST_F(IdentityTest, UnknownLocalIdWithEmptyWalletsIsVoided) {
  for (std::string id : {"f00dbabe", "00000000000000000000000000000000"}) {
    HttpResult r =
        Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = json(id)});
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(Body(r)["localId"], "WALLET_CACHE_VOID");
  }
  HttpResult r =
      Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = json(nullptr)});
  EXPECT_EQ(r.status, 400);
}

TEST_F(IdentityTest, ACookieIdentityIsNotALocalIdAndViceVersa) {
  HttpResult r = Send({.path = "/api/ads",
                       .wallets = std::vector<std::string>{W().uniswap},
                       .local_id = json(nullptr)});
  std::string local = Body(r)["localId"];
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + local});
  EXPECT_EQ(r.status, 204);
}

// ---- Privacy operations ---------------------------------------------------------------------

TEST_F(IdentityTest, AdminErasureStopsEveryIssuedCookieAndLocalIdFromResolvingToTheWallet) {
  std::string wallet = "0x" + std::string(39, '9') + "a";
  std::string cookie = NewIdentity(wallet);
  HttpResult r = Send(
      {.path = "/api/ads", .wallets = std::vector<std::string>{wallet}, .local_id = json(nullptr)});
  json local = Body(r)["localId"];
  // A cookie linking the wallet and the aave wallet (the Lido campaign).
  r = Send({.wallets = std::vector<std::string>{W().aave, wallet}, .consent = true});
  std::string shared = CookieValue(r, kCookie);
  HttpResult shown = fixture->Admin("GET", "/admin/v1/identities/by-wallet/" + wallet);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(Body(shown)["wallet"], wallet);
  EXPECT_EQ(Body(shown)["identities"].size(), 0u) << "identities are not stored";
  EXPECT_EQ(Body(shown)["erased"], false);
  EXPECT_TRUE(Body(shown)["erasedAt"].is_null());
  // Times are whole seconds: a link made in the erasure's second counts as erased.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));

  HttpResult erased = fixture->Admin("DELETE", "/admin/v1/identities/by-wallet/" + wallet);
  ASSERT_EQ(erased.status, 200) << erased.body;
  EXPECT_EQ(Body(erased)["wallet"], wallet);
  EXPECT_EQ(Body(erased)["erasedLinks"], 0);
  EXPECT_TRUE(Body(erased)["erasedAt"].is_string()) << erased.body;
  shown = fixture->Admin("GET", "/admin/v1/identities/by-wallet/" + wallet);
  EXPECT_EQ(Body(shown)["erased"], true);
  EXPECT_EQ(Body(shown)["erasedAt"], Body(erased)["erasedAt"]);
  // At once, for values the server holds no row for.
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + cookie});
  EXPECT_EQ(r.status, 204);
  r = Send({.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = local});
  EXPECT_EQ(Body(r)["localId"], "WALLET_CACHE_VOID");
  // The shared cookie keeps its other wallet and is re-set without the erased one.
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + shared});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(CampaignOf(r), Lido());
  std::string pruned = CookieValue(r, kCookie);
  ASSERT_FALSE(pruned.empty()) << "re-sealed without the erased wallet";
  EXPECT_LT(pruned.size(), shared.size());
  // Presented again after the erasure, the wallet links again (a new, consented presentation).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  r = Send({.wallets = std::vector<std::string>{wallet}, .consent = true});
  r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + CookieValue(r, kCookie)});
  EXPECT_EQ(r.status, 204) << "the wallet has no ad, but the identity is live again";
  EXPECT_TRUE(SetCookies(r).empty());
}

TEST_F(IdentityTest, AnErasureThroughTheCliReachesTheRunningServer) {
  std::string wallet = "0x" + std::string(39, '8') + "b";
  HttpResult made = Send({.wallets = std::vector<std::string>{W().aave, wallet}, .consent = true});
  std::string cookie = CookieValue(made, kCookie);
  ASSERT_FALSE(cookie.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string command = AdserverBinary() + " admin DELETE /admin/v1/identities/by-wallet/" +
                        wallet + " --data " + fixture->server().data_dir() + " >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  // Picked up within identity.flush_interval_ms (1 s); the deadline only bounds a failure.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string pruned;
  while (pruned.empty() && std::chrono::steady_clock::now() < deadline) {
    HttpResult r = Send({.consent = true, .cookie = std::string(kCookie) + "=" + cookie});
    pruned = CookieValue(r, kCookie);  // re-set only once the erased wallet was dropped
    if (pruned.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(pruned.empty()) << "the CLI erasure never reached the server";
  EXPECT_LT(pruned.size(), cookie.size());
  HttpResult shown = fixture->Admin("GET", "/admin/v1/identities/by-wallet/" + wallet);
  EXPECT_EQ(Body(shown)["erased"], true);
}

TEST_F(IdentityTest, AdminIdentityRoutesNeedTheTokenAndAnAddress) {
  HttpClient client = fixture->Client();
  HttpResult r = client.Get("/admin/v1/identities/by-wallet/" + W().uniswap);
  EXPECT_EQ(r.status, 401);
  r = fixture->Admin("GET", "/admin/v1/identities/by-wallet/0x12");
  EXPECT_EQ(r.status, 400);
  r = fixture->Admin("DELETE", "/admin/v1/identities/by-wallet/nope");
  EXPECT_EQ(r.status, 400);
}

TEST_F(IdentityTest, LogsShowNoIdentityIdsOrWallets) {
  HttpResult r = Send({.path = "/api/ads",
                       .wallets = std::vector<std::string>{W().uniswap},
                       .local_id = json(nullptr)});
  std::string local = Body(r)["localId"];
  std::string cookie = NewIdentity(W().usdc_base);
  fixture->Admin("GET", "/admin/v1/identities/by-wallet/" + W().usdc_base);
  fixture->Admin("DELETE", "/admin/v1/identities/by-wallet/" + W().usdc_base);
  std::string out = fixture->server().Output();
  EXPECT_EQ(out.find(local), std::string::npos);
  EXPECT_EQ(out.find(cookie), std::string::npos);
  EXPECT_EQ(out.find(W().usdc_base.substr(2)), std::string::npos);
  EXPECT_EQ(out.find(W().uniswap.substr(2)), std::string::npos);
}

// ---- Restarts: persistence, key rotation, retention -----------------------------------------

// Restarts the fixture's data directory with other settings.
class RestartTest : public IdentityTest {
 protected:
  std::unique_ptr<ServerProcess> Start(std::map<std::string, std::string> env,
                                       std::vector<std::string> args = {}) {
    ServerProcess::Options o;
    o.data_dir = fixture->server().data_dir();
    o.env = std::move(env);
    o.extra_args = std::move(args);
    auto s = std::make_unique<ServerProcess>(o);
    EXPECT_TRUE(s->Start()) << s->error();
    return s;
  }
  HttpResult Call(ServerProcess& s, const Call& c) { return Send(s, fixture->keys.open_live, c); }
};

TEST_F(RestartTest, IdentitiesSurviveRestartsAndKeysRotateWithoutLoggingAnyoneOut) {
  ASSERT_EQ(fixture->server().Stop(), 0);
  std::string old_cookie, new_cookie;
  json local;
  {
    auto s = Start({{"ADSERVER_IDENTITY_KEYS", kKey1}});
    HttpResult r = Call(*s, {.wallets = std::vector<std::string>{W().uniswap}, .consent = true});
    old_cookie = CookieValue(r, kCookie);
    ASSERT_FALSE(old_cookie.empty());
    r = Call(*s, {.path = "/api/ads",
                  .wallets = std::vector<std::string>{W().uniswap},
                  .local_id = json(nullptr)});
    local = Body(r)["localId"];
    EXPECT_EQ(s->Stop(), 0);  // nothing to flush: the identities live in the values
  }
  {
    // Rotation: key 2 active, key 1 still accepted (from a file this time).
    std::string path = fixture->server().data_dir() + "/keys.txt";
    std::ofstream(path) << kKey2 << "\n" << kKey1 << "\n";
    auto s = Start({{"ADSERVER_IDENTITY_KEYS_FILE", path}});
    HttpResult r = Call(*s, {.consent = true, .cookie = std::string(kCookie) + "=" + old_cookie});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(CampaignOf(r), Aave());
    new_cookie = CookieValue(r, kCookie);
    EXPECT_FALSE(new_cookie.empty());
    EXPECT_NE(new_cookie, old_cookie);
    r = Call(*s, {.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = local});
    ASSERT_EQ(r.status, 200) << r.body;
    // Served, and re-issued under the active key (the SDK stores the new id).
    json reissued = Body(r)["localId"];
    EXPECT_TRUE(IsLocalId(reissued)) << r.body;
    EXPECT_NE(reissued, local);
    r = Call(*s, {.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = reissued});
    EXPECT_EQ(Body(r)["localId"], reissued) << "under the active key: the same id";
    local = reissued;
    EXPECT_EQ(s->Stop(), 0);
    std::string out = s->Output();
    EXPECT_EQ(out.find(std::string(64, '2')), std::string::npos) << "keys are never logged";
  }
  {
    // Key 1 retired: cookies sealed with it are no identity; re-sealed ones still work.
    auto s = Start({{"ADSERVER_IDENTITY_KEYS", kKey2}});
    HttpResult r = Call(*s, {.consent = true, .cookie = std::string(kCookie) + "=" + old_cookie});
    EXPECT_EQ(r.status, 204);
    r = Call(*s, {.consent = true, .cookie = std::string(kCookie) + "=" + new_cookie});
    EXPECT_EQ(r.status, 200);
    r = Call(*s, {.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = local});
    EXPECT_EQ(r.status, 200) << "the re-issued localId outlives key 1";
    EXPECT_EQ(s->Stop(), 0);
  }
  {
    // A bad key ring is a start-up error naming the setting, without key material.
    ServerProcess::Options o;
    o.data_dir = fixture->server().data_dir();
    o.env = {{"ADSERVER_IDENTITY_KEYS", "1:" + std::string(10, '7')}};
    ServerProcess bad(o);
    EXPECT_FALSE(bad.Start(std::chrono::seconds(10)));
    EXPECT_NE(bad.Output().find("identity.keys"), std::string::npos) << bad.Output();
    EXPECT_EQ(bad.Output().find(std::string(10, '7')), std::string::npos);
  }
  {
    // Retention: identities not seen for `retention_seconds` are gone (cookie and localId).
    std::string config = fixture->server().data_dir() + "/short.toml";
    std::ofstream(config) << "[identity]\nretention_seconds = 2\nsweep_interval_ms = 200\n";
    auto s = Start({{"ADSERVER_IDENTITY_KEYS", kKey2}}, {"--config", config});
    HttpResult r = Call(*s, {.wallets = std::vector<std::string>{W().uniswap}, .consent = true});
    std::string cookie = CookieValue(r, kCookie);
    r = Call(*s, {.path = "/api/ads",
                  .wallets = std::vector<std::string>{W().uniswap},
                  .local_id = json(nullptr)});
    json id = Body(r)["localId"];
    r = Call(*s, {.consent = true, .cookie = std::string(kCookie) + "=" + cookie});
    EXPECT_EQ(r.status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    r = Call(*s, {.consent = true, .cookie = std::string(kCookie) + "=" + cookie});
    EXPECT_EQ(r.status, 204) << "expired";
    r = Call(*s, {.path = "/api/ads", .wallets = std::vector<std::string>{}, .local_id = id});
    EXPECT_EQ(Body(r)["localId"], "WALLET_CACHE_VOID");
    HttpClient admin("127.0.0.1", s->port());
    HttpResult stored = admin.Send("GET", "/admin/v1/identities/by-wallet/" + W().uniswap,
                                   {{"Authorization", "Bearer " + s->admin_token()}});
    EXPECT_EQ(Body(stored)["identities"].size(), 0u) << "swept from the store";
    EXPECT_EQ(s->Stop(), 0);
  }
}

}  // namespace
}  // namespace adserver::testing
