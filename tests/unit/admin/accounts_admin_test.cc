#include "admin/accounts_admin.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/admin_api.h"
#include "admin/authenticator.h"
#include "common/password.h"
#include "common/published.h"
#include "http/router.h"
#include "ingest/snapshot_publisher.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::admin {
namespace {

using Json = nlohmann::json;
using http::Method;
using std::chrono::hours;
using std::chrono::seconds;

constexpr char kToken[] = "test-admin-token-0123456789";
constexpr int64_t kNow = 1'767'225'600;
constexpr char kPassword[] = "0123456789ab";

struct Reply {
  int status = 0;
  Json body;
  std::string raw;
  std::string set_cookie;
  std::string retry_after;
};

// Users, tokens, sessions and review through the real handlers on a SQLite file.
class AccountsAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto inventory = store::SqliteStore::Open(dir_.File("a.db"));
    ASSERT_TRUE(inventory.ok());
    inventory_ = std::move(*inventory);
    auto accounts = store::SqliteAccountStore::Open(dir_.File("a.db"));
    ASSERT_TRUE(accounts.ok());
    accounts_ = std::move(*accounts);
    snapshots_ = std::make_unique<ingest::SnapshotPublisher>(*inventory_, *inventory_, catalogs_,
                                                             activity_, ingest::SnapshotOptions{});
    AdminOptions options{.token = kToken};
    options.password_hash = MinimalPasswordHashOptionsForTest();
    options.public_origin = "https://ads.example";
    auth_ = std::make_unique<Authenticator>(options, accounts_.get(), clock_);
    admin_ =
        std::make_unique<AdminApi>(*inventory_, *inventory_, *snapshots_, clock_, options, *auth_);
    api_ = std::make_unique<AccountsAdminApi>(*accounts_, *inventory_, *auth_);
    admin_->RegisterRoutes(router_);
    api_->RegisterRoutes(router_);
    ASSERT_EQ(Op(Method::kPost, "/admin/v1/communities",
                 {{"name", "X"}, {"logoUrl", "https://cdn.example/x.png"}})
                  .status,
              201);
    ASSERT_EQ(Op(Method::kPost, "/admin/v1/projects", {{"slug", "uniswap"}, {"name", "U"}}).status,
              201);
  }

  Reply Call(Method method, const std::string& target, const std::string& body,
             std::vector<http::Header> headers) {
    http::Request request;
    request.method = method;
    request.target = target;
    size_t q = target.find('?');
    request.path = std::string_view(target).substr(0, q);
    if (q != std::string::npos) request.query = std::string_view(target).substr(q + 1);
    request.headers = std::move(headers);
    if (!body.empty()) request.headers.push_back({"Content-Type", "application/json"});
    request.body = body;
    request.remote_ip = "192.0.2.1";
    http::Router::Match match = router_.Find(request);
    EXPECT_NE(match.handler, nullptr) << target;
    if (match.handler == nullptr) return Reply{match.status};
    http::Response response = (*match.handler)(request);
    Reply reply{response.status, Json(), response.body, std::string(response.Header("Set-Cookie")),
                std::string(response.Header("Retry-After"))};
    if (!response.body.empty()) reply.body = Json::parse(response.body, nullptr, false);
    return reply;
  }
  Reply As(const std::string& token, Method method, const std::string& target,
           const Json& body = nullptr) {
    std::string authorization = "Bearer " + token;
    return Call(method, target, body.is_null() ? "" : body.dump(),
                {{"Authorization", authorization}});
  }
  Reply Op(Method method, const std::string& target, const Json& body = nullptr) {
    return As(kToken, method, target, body);
  }
  // An advertiser user of community 1 and a token for it.
  std::string Advertiser(const std::string& email = "adv@example.com") {
    Reply user =
        Op(Method::kPost, "/admin/v1/users",
           {{"email", email}, {"password", kPassword}, {"role", "advertiser"}, {"communityId", 1}});
    EXPECT_EQ(user.status, 201) << user.raw;
    Reply token = Op(Method::kPost, "/admin/v1/tokens", {{"userId", user.body["id"]}});
    EXPECT_EQ(token.status, 201) << token.raw;
    return token.body.value("token", "");
  }
  Reply SignIn(const std::string& email, const std::string& password) {
    return Call(Method::kPost, "/console/api/session",
                Json{{"email", email}, {"password", password}}.dump(), {});
  }
  static std::vector<std::string> Fields(const Reply& r) {
    std::vector<std::string> fields;
    for (const Json& d : r.body["details"]) fields.push_back(d["field"].get<std::string>());
    return fields;
  }

  testing::TempDir dir_;
  FakeClock clock_{kNow * 1'000'000};
  std::unique_ptr<store::SqliteStore> inventory_;
  std::unique_ptr<store::SqliteAccountStore> accounts_;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
  std::unique_ptr<ingest::SnapshotPublisher> snapshots_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<AccountsAdminApi> api_;
  http::Router router_;
};

TEST_F(AccountsAdminTest, CreateUserValidatesEveryFieldInTheErrorShape) {
  Reply missing = Op(Method::kPost, "/admin/v1/users", Json::object());
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(Fields(missing), (std::vector<std::string>{"email", "password", "role"}));
  Reply bad = Op(Method::kPost, "/admin/v1/users",
                 {{"email", "no-at-sign"}, {"password", "short"}, {"role", "admin"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Fields(bad), (std::vector<std::string>{"email", "password", "role"}));
  Reply tenant = Op(Method::kPost, "/admin/v1/users",
                    {{"email", "p@example.com"}, {"password", kPassword}, {"role", "publisher"}});
  EXPECT_EQ(Fields(tenant), std::vector<std::string>{"publisherId"});
  Reply unknown = Op(Method::kPost, "/admin/v1/users",
                     {{"email", "a@example.com"},
                      {"password", kPassword},
                      {"role", "advertiser"},
                      {"communityId", 99}});
  EXPECT_EQ(Fields(unknown), std::vector<std::string>{"communityId"});
  Reply wrong_tenant = Op(Method::kPost, "/admin/v1/users",
                          {{"email", "o@example.com"},
                           {"password", kPassword},
                           {"role", "operator"},
                           {"communityId", 1}});
  EXPECT_EQ(Fields(wrong_tenant), std::vector<std::string>{"communityId"});

  Reply created = Op(Method::kPost, "/admin/v1/users",
                     {{"email", "Ops@Example.com"}, {"password", kPassword}, {"role", "operator"}});
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.raw.find("argon2"), std::string::npos);
  EXPECT_EQ(created.raw.find(kPassword), std::string::npos);
  EXPECT_TRUE(created.body["publisherId"].is_null());
  EXPECT_EQ(Op(Method::kPost, "/admin/v1/users",
               {{"email", "ops@example.COM"}, {"password", kPassword}, {"role", "operator"}})
                .status,
            409);
  Reply list = Op(Method::kGet, "/admin/v1/users");
  EXPECT_EQ(list.raw.find("argon2"), std::string::npos);
}

TEST_F(AccountsAdminTest, TokensAreIssuedVerifiedAndRevoked) {
  EXPECT_EQ(Op(Method::kPost, "/admin/v1/tokens", Json::object()).status, 400);  // no user
  std::string token = Advertiser();
  ASSERT_TRUE(token.starts_with("sut_")) << token;
  EXPECT_EQ(token.size(), 44u);
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 200);
  std::string forged = token;
  forged.back() = forged.back() == 'a' ? 'b' : 'a';  // same prefix, other secret
  EXPECT_EQ(As(forged, Method::kGet, "/admin/v1/campaigns").status, 401);
  // Their own second token; not one for the operator's users.
  Reply own = As(token, Method::kPost, "/admin/v1/tokens", Json::object());
  ASSERT_EQ(own.status, 201) << own.raw;
  EXPECT_EQ(As(token, Method::kPost, "/admin/v1/tokens", {{"userId", 99}}).status, 403);
  Reply tokens = As(token, Method::kGet, "/admin/v1/tokens");
  ASSERT_EQ(tokens.body["tokens"].size(), 2u);
  EXPECT_FALSE(tokens.body["tokens"][0].contains("token"));  // never shown again
  int64_t first = tokens.body["tokens"][1]["id"].get<int64_t>();
  Reply revoked =
      As(own.body["token"], Method::kDelete, "/admin/v1/tokens/" + std::to_string(first));
  ASSERT_EQ(revoked.status, 200) << revoked.raw;
  EXPECT_FALSE(revoked.body["revokedAt"].is_null());
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 401);
  EXPECT_EQ(As(own.body["token"], Method::kGet, "/admin/v1/campaigns").status, 200);
}

TEST_F(AccountsAdminTest, SessionCookieNeedsCsrfForWritesAndExpires) {
  Advertiser("console@example.com");
  Reply in = SignIn("CONSOLE@example.com", kPassword);
  ASSERT_EQ(in.status, 201) << in.raw;
  EXPECT_NE(in.set_cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(in.set_cookie.find("Secure"), std::string::npos);  // https public origin
  EXPECT_NE(in.set_cookie.find("SameSite=Strict"), std::string::npos);
  std::string cookie = in.set_cookie.substr(0, in.set_cookie.find(';'));
  std::string csrf = in.body["csrfToken"];
  Json campaign = {{"communityId", 1},
                   {"name", "C"},
                   {"status", "active"},
                   {"pricing", {{"model", "CPM"}, {"bid", 1}}},
                   {"targeting", {{"projects", {"uniswap"}}}}};
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/campaigns", "", {{"Cookie", cookie}}).status, 200);
  EXPECT_EQ(
      Call(Method::kPost, "/admin/v1/campaigns", campaign.dump(), {{"Cookie", cookie}}).status,
      403);
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/campaigns", campaign.dump(),
                 {{"Cookie", cookie}, {"X-CSRF-Token", "wrong"}})
                .status,
            403);
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/campaigns", campaign.dump(),
                 {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Origin", "https://ads.example"}})
                .status,
            201);
  // 11 h idle is fine (and counts as use); 12 h more without a request ends it.
  clock_.Advance(hours(11));
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie}}).status, 200);
  clock_.Advance(hours(12));
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/campaigns", "", {{"Cookie", cookie}}).status, 401);

  // Absolute expiry: 7 days after sign-in whatever the use.
  Reply again = SignIn("console@example.com", kPassword);
  std::string cookie2 = again.set_cookie.substr(0, again.set_cookie.find(';'));
  for (int i = 0; i < 16; ++i) {  // 176 h, never idle for 12 h
    clock_.Advance(hours(11));
    Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie2}});
  }
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie2}}).status, 401);
}

TEST_F(AccountsAdminTest, SignOutEndsTheSessionOnTheServer) {
  Advertiser("out@example.com");
  Reply in = SignIn("out@example.com", kPassword);
  std::string cookie = in.set_cookie.substr(0, in.set_cookie.find(';'));
  std::string csrf = in.body["csrfToken"];
  EXPECT_EQ(Call(Method::kDelete, "/console/api/session", "", {{"Cookie", cookie}}).status, 403);
  Reply out = Call(Method::kDelete, "/console/api/session", "",
                   {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(out.status, 204);
  EXPECT_NE(out.set_cookie.find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/campaigns", "", {{"Cookie", cookie}}).status, 401);
}

TEST_F(AccountsAdminTest, FailedSignInsBackOffWith429AndRetryAfter) {
  Advertiser("limited@example.com");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(SignIn("limited@example.com", "wrong-password").status, 401);
  }
  EXPECT_EQ(SignIn("limited@example.com", "wrong-password").status, 401);  // the 5th: back-off
  Reply limited = SignIn("limited@example.com", kPassword);
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.retry_after, "1");
  EXPECT_TRUE(limited.body.contains("error"));
  clock_.Advance(seconds(1));
  EXPECT_EQ(SignIn("limited@example.com", kPassword).status, 201);
  // Unknown emails fail the same way and count against the client's IP.
  for (int i = 0; i < 5; ++i) SignIn("nobody" + std::to_string(i) + "@example.com", kPassword);
  EXPECT_EQ(SignIn("limited@example.com", kPassword).status, 429);
}

// Issue 39 item 9: an attacker guessing from their own address backs off there; the account's
// owner, elsewhere, still signs in. Only a failure count far beyond what one address can reach
// slows the account itself, briefly.
TEST_F(AccountsAdminTest, GuessingFromOneAddressNeverLocksTheOwnerOut) {
  Advertiser("owner@example.com");
  auto sign_in_from = [&](const std::string& ip, const std::string& password) {
    http::Request request;
    request.method = Method::kPost;
    request.target = request.path = "/console/api/session";
    std::string body = Json{{"email", "owner@example.com"}, {"password", password}}.dump();
    request.body = body;
    request.headers = {{"Content-Type", "application/json"}};
    request.remote_ip = ip;
    return (*router_.Find(request).handler)(request).status;
  };
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(sign_in_from("203.0.113.9", "guess-" + std::to_string(i)), 401);
  EXPECT_EQ(sign_in_from("203.0.113.9", kPassword), 429);   // the attacker's address waits
  EXPECT_EQ(sign_in_from("198.51.100.1", kPassword), 201);  // the owner does not
  // Many addresses (a botnet) reach the per-account limit: a short wait, not a lockout.
  for (int i = 0; i < 50; ++i) {
    sign_in_from("192.0.2." + std::to_string(10 + i), "guess");
  }
  EXPECT_EQ(sign_in_from("198.51.100.1", kPassword), 429);
  clock_.Advance(seconds(60));
  EXPECT_EQ(sign_in_from("198.51.100.1", kPassword), 201);
}

TEST_F(AccountsAdminTest, AdvertiserAdsWaitForReview) {
  std::string adv = Advertiser();
  Reply campaign = As(adv, Method::kPost, "/admin/v1/campaigns",
                      {{"communityId", 1},
                       {"name", "C"},
                       {"status", "active"},
                       {"pricing", {{"model", "CPM"}, {"bid", 1}}},
                       {"targeting", {{"projects", {"uniswap"}}}}});
  ASSERT_EQ(campaign.status, 201) << campaign.raw;
  Json ad = {{"campaignId", campaign.body["id"]}, {"headline", "H"},  {"content", "C"},
             {"ctaUrl", "https://a.example"},     {"ctaLabel", "Go"}, {"images", Json::object()}};
  Reply created = As(adv, Method::kPost, "/admin/v1/ads", ad);
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.body["reviewStatus"], "pending");
  std::string path = "/admin/v1/ads/" + std::to_string(created.body["id"].get<int64_t>());
  EXPECT_EQ(As(adv, Method::kPatch, path, {{"reviewStatus", "approved"}}).status, 403);
  EXPECT_EQ(Op(Method::kGet, "/admin/v1/ads?reviewStatus=pending").body["ads"].size(), 1u);
  EXPECT_EQ(Op(Method::kGet, "/admin/v1/ads?reviewStatus=bogus").status, 400);
  Reply no_reason = Op(Method::kPatch, path, {{"reviewStatus", "rejected"}});
  EXPECT_EQ(Fields(no_reason), std::vector<std::string>{"reviewReason"});
  Reply rejected =
      Op(Method::kPatch, path, {{"reviewStatus", "rejected"}, {"reviewReason", "too loud"}});
  ASSERT_EQ(rejected.status, 200) << rejected.raw;
  EXPECT_EQ(As(adv, Method::kGet, path).body["reviewReason"], "too loud");
  // The advertiser's fix goes back into the queue, the old reason gone.
  Reply edited = As(adv, Method::kPatch, path, {{"headline", "Quieter"}});
  EXPECT_EQ(edited.body["reviewStatus"], "pending");
  EXPECT_TRUE(edited.body["reviewReason"].is_null());
  // An operator's own ad is approved at once, as before reviews existed.
  Reply own = Op(Method::kPost, "/admin/v1/ads", ad);
  EXPECT_EQ(own.body["reviewStatus"], "approved");
}

// Issue 39 item 10: null clears a user's tenant, so an operator can change a user's role.
TEST_F(AccountsAdminTest, NullClearsTheTenantSoTheRoleCanChange) {
  Reply user = Op(Method::kPost, "/admin/v1/users",
                  {{"email", "mover@example.com"},
                   {"password", kPassword},
                   {"role", "advertiser"},
                   {"communityId", 1}});
  ASSERT_EQ(user.status, 201) << user.raw;
  std::string path = "/admin/v1/users/" + std::to_string(user.body["id"].get<int64_t>());
  Reply moved = Op(Method::kPatch, path, {{"role", "operator"}, {"communityId", nullptr}});
  ASSERT_EQ(moved.status, 200) << moved.raw;
  EXPECT_EQ(moved.body["role"], "operator");
  EXPECT_TRUE(moved.body["communityId"].is_null()) << moved.raw;
  // A tenant that is given still has to fit the role.
  EXPECT_EQ(Fields(Op(Method::kPatch, path, {{"communityId", 1}})),
            std::vector<std::string>{"communityId"});
  EXPECT_EQ(Fields(Op(Method::kPatch, path, {{"publisherId", "x"}})),
            std::vector<std::string>{"publisherId"});
}

// Issue 39 item 4: what the header alone can refuse, before a body is read.
TEST_F(AccountsAdminTest, AdmitRefusesFromTheHeaderWhatNoBodyCouldAuthenticate) {
  auto admit = [&](std::vector<http::Header> headers) {
    http::Request request;
    request.method = Method::kPost;
    request.target = request.path = "/admin/v1/campaigns";
    request.headers = std::move(headers);
    request.remote_ip = "192.0.2.9";
    std::optional<http::Response> refused = auth_->Admit(request);
    return refused ? refused->status : 0;
  };
  EXPECT_EQ(admit({}), 401);
  EXPECT_EQ(admit({{"Authorization", "Basic dXNlcjpwYXNz"}}), 401);
  EXPECT_EQ(admit({{"Authorization", "Bearer wrong"}}), 401);
  EXPECT_EQ(admit({{"Authorization", "Bearer sut_short"}}), 401);
  EXPECT_EQ(admit({{"Authorization", "Bearer sut_" + std::string(39, 'a') + "!"}}), 401);
  // Possibly valid: decided once the body is read (the lookup is I/O).
  EXPECT_EQ(admit({{"Authorization", std::string("Bearer ") + kToken}}), 0);
  EXPECT_EQ(admit({{"Authorization", "Bearer sut_" + std::string(40, 'a')}}), 0);
  EXPECT_EQ(admit({{"Cookie", "other=1; " + auth_->options().session_cookie + "=abc"}}), 0);
  // Wrong tokens count towards the address's back-off, which the header check enforces too.
  for (int i = 0; i < 10; ++i) admit({{"Authorization", "Bearer wrong"}});
  EXPECT_EQ(admit({{"Authorization", std::string("Bearer ") + kToken}}), 429);
}

TEST_F(AccountsAdminTest, ActiveTokensAreCappedPerUserWith409InTheErrorShape) {
  std::string token = Advertiser("cap@example.com");  // token 1 of 20
  for (int i = 2; i <= 20; ++i) {
    ASSERT_EQ(As(token, Method::kPost, "/admin/v1/tokens", Json::object()).status, 201) << i;
  }
  Reply over = As(token, Method::kPost, "/admin/v1/tokens", Json::object());
  EXPECT_EQ(over.status, 409) << over.raw;
  EXPECT_TRUE(over.body["error"].is_string());
  EXPECT_EQ(Fields(over), std::vector<std::string>{"userId"});
  EXPECT_NE(over.raw.find("20 active tokens"), std::string::npos) << over.raw;
  // The operator issuing for the user hits the same cap; revoking one frees a slot.
  Reply listed = As(token, Method::kGet, "/admin/v1/tokens");
  ASSERT_EQ(listed.body["tokens"].size(), 20u);
  int64_t user = listed.body["tokens"][0]["userId"].get<int64_t>();
  EXPECT_EQ(Op(Method::kPost, "/admin/v1/tokens", {{"userId", user}}).status, 409);
  int64_t newest = listed.body["tokens"][0]["id"].get<int64_t>();
  ASSERT_EQ(As(token, Method::kDelete, "/admin/v1/tokens/" + std::to_string(newest)).status, 200);
  EXPECT_EQ(Op(Method::kPost, "/admin/v1/tokens", {{"userId", user}}).status, 201);
}

TEST_F(AccountsAdminTest, UsersChangeTheirOwnPasswordWithTheCurrentOne) {
  std::string token = Advertiser("self@example.com");
  Reply first = SignIn("self@example.com", kPassword);
  Reply second = SignIn("self@example.com", kPassword);
  ASSERT_EQ(second.status, 201);
  std::string cookie = first.set_cookie.substr(0, first.set_cookie.find(';'));
  std::string other = second.set_cookie.substr(0, second.set_cookie.find(';'));
  std::string csrf = first.body["csrfToken"];
  const std::string kNew = "a-new-password-42";
  Json change = {{"currentPassword", kPassword}, {"password", kNew}};
  // A cookie write needs the CSRF token.
  EXPECT_EQ(
      Call(Method::kPost, "/console/api/password", change.dump(), {{"Cookie", cookie}}).status,
      403);
  // Wrong current password, short new one: 400 naming the field.
  Reply wrong = Call(Method::kPost, "/console/api/password",
                     Json{{"currentPassword", "not-it-at-all"}, {"password", kNew}}.dump(),
                     {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(wrong.status, 400) << wrong.raw;
  EXPECT_EQ(Fields(wrong), std::vector<std::string>{"currentPassword"});
  Reply short_one = Call(Method::kPost, "/console/api/password",
                         Json{{"currentPassword", kPassword}, {"password", "short"}}.dump(),
                         {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(Fields(short_one), std::vector<std::string>{"password"});
  Reply missing = Call(Method::kPost, "/console/api/password", Json{{"password", kNew}}.dump(),
                       {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(Fields(missing), std::vector<std::string>{"currentPassword"});

  Reply changed = Call(Method::kPost, "/console/api/password", change.dump(),
                       {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  ASSERT_EQ(changed.status, 200) << changed.raw;
  EXPECT_EQ(changed.body["endedSessions"], 1);
  EXPECT_EQ(changed.raw.find("argon2"), std::string::npos);
  // This session goes on, the other one ended; the old password no longer signs in.
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie}}).status, 200);
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", other}}).status, 401);
  EXPECT_EQ(SignIn("self@example.com", kPassword).status, 401);
  EXPECT_EQ(SignIn("self@example.com", kNew).status, 201);
  // Issue 39: the bearer tokens are revoked with the old password...
  EXPECT_EQ(changed.body["revokedTokens"], 1);
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 401);
  // ...unless the change asks to keep them.
  Reply fresh = Op(Method::kPost, "/admin/v1/tokens", {{"userId", first.body["user"]["id"]}});
  ASSERT_EQ(fresh.status, 201) << fresh.raw;
  std::string kept = fresh.body["token"];
  Reply keeping = As(kept, Method::kPost, "/console/api/password",
                     {{"currentPassword", kNew}, {"password", kPassword}, {"keepTokens", true}});
  ASSERT_EQ(keeping.status, 200) << keeping.raw;
  EXPECT_EQ(keeping.body["revokedTokens"], 0);
  EXPECT_EQ(As(kept, Method::kGet, "/admin/v1/campaigns").status, 200);
  // The operator token has no password to change.
  EXPECT_EQ(Op(Method::kPost, "/console/api/password", change).status, 403);
}

TEST_F(AccountsAdminTest, GuessingTheCurrentPasswordBacksOff) {
  std::string token = Advertiser("guess@example.com");
  int last = 0;
  for (int i = 0; i < 10 && last != 429; ++i) {
    last =
        As(token, Method::kPost, "/console/api/password",
           {{"currentPassword", "wrong-guess-" + std::to_string(i)}, {"password", "whatever-123"}})
            .status;
    if (last != 429) {
      EXPECT_EQ(last, 400);
    }
  }
  EXPECT_EQ(last, 429);
  // Even the right one waits.
  EXPECT_EQ(As(token, Method::kPost, "/console/api/password",
               {{"currentPassword", kPassword}, {"password", "whatever-123"}})
                .status,
            429);
}

TEST_F(AccountsAdminTest, OperatorSettingAPasswordEndsTheUsersSessions) {
  Advertiser("reset@example.com");
  Reply in = SignIn("reset@example.com", kPassword);
  ASSERT_EQ(in.status, 201);
  std::string cookie = in.set_cookie.substr(0, in.set_cookie.find(';'));
  int64_t id = in.body["user"]["id"].get<int64_t>();
  ASSERT_EQ(
      Op(Method::kPatch, "/admin/v1/users/" + std::to_string(id), {{"email", "reset@example.com"}})
          .status,
      200);
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie}}).status, 200);
  ASSERT_EQ(Op(Method::kPatch, "/admin/v1/users/" + std::to_string(id),
               {{"password", "reset-by-operator-1"}})
                .status,
            200);
  EXPECT_EQ(Call(Method::kGet, "/console/api/session", "", {{"Cookie", cookie}}).status, 401);
}

// Issue 39 item 9: an operator's reset revokes the user's bearer tokens unless keepTokens.
TEST_F(AccountsAdminTest, OperatorResettingAPasswordRevokesTheUsersTokens) {
  std::string token = Advertiser("revoked@example.com");
  Reply me = As(token, Method::kGet, "/admin/v1/tokens");
  ASSERT_EQ(me.status, 200);
  std::string path =
      "/admin/v1/users/" + std::to_string(me.body["tokens"][0]["userId"].get<int64_t>());
  ASSERT_EQ(
      Op(Method::kPatch, path, {{"password", "reset-keeping-1"}, {"keepTokens", true}}).status,
      200);
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 200);
  EXPECT_EQ(Fields(Op(Method::kPatch, path, {{"keepTokens", "yes"}})),
            std::vector<std::string>{"keepTokens"});
  ASSERT_EQ(Op(Method::kPatch, path, {{"password", "reset-revoking-1"}}).status, 200);
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 401);
}

// Issue 39 item 9: tokens expire (90 days by default, or expiresInDays), and an expired token
// stops counting against the cap.
TEST_F(AccountsAdminTest, BearerTokensExpire) {
  std::string token = Advertiser("expiring@example.com");
  Reply listed = As(token, Method::kGet, "/admin/v1/tokens");
  ASSERT_EQ(listed.status, 200);
  const Json& first = listed.body["tokens"][0];
  EXPECT_EQ(first["expiresAt"], "2026-04-01T00:00:00Z");  // kNow (2026-01-01) + 90 days
  Reply day = As(token, Method::kPost, "/admin/v1/tokens", {{"expiresInDays", 1}});
  ASSERT_EQ(day.status, 201) << day.raw;
  EXPECT_EQ(day.body["expiresAt"], "2026-01-02T00:00:00Z");
  for (int bad : {0, 3651}) {
    EXPECT_EQ(Fields(As(token, Method::kPost, "/admin/v1/tokens", {{"expiresInDays", bad}})),
              std::vector<std::string>{"expiresInDays"});
  }
  std::string short_lived = day.body["token"];
  clock_.Advance(hours(24));
  EXPECT_EQ(As(short_lived, Method::kGet, "/admin/v1/campaigns").status, 401);
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 200);
  clock_.Advance(hours(24 * 89));
  EXPECT_EQ(As(token, Method::kGet, "/admin/v1/campaigns").status, 401);
}

}  // namespace
}  // namespace adserver::admin
