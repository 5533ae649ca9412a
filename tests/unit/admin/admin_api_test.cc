#include "admin/admin_api.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "admin/authenticator.h"
#include "common/published.h"
#include "http/router.h"
#include "ingest/snapshot_publisher.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::admin {
namespace {

using Json = nlohmann::json;
using http::Method;

constexpr char kToken[] = "test-admin-token-0123456789";
constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01T00:00:00Z
constexpr char kWallet[] = "0x1111111111111111111111111111111111111111";

struct Reply {
  int status = 0;
  Json body;
  std::string raw;
};

// Routes requests to a real AdminApi on a SQLite file, without a network.
class AdminApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    snapshots_ = std::make_unique<ingest::SnapshotPublisher>(*store_, *store_, catalogs_, activity_,
                                                             ingest::SnapshotOptions{});
    ASSERT_TRUE(snapshots_->LoadNow().ok());
    auth_ = std::make_unique<Authenticator>(AdminOptions{.token = kToken}, nullptr, clock_);
    api_ = std::make_unique<AdminApi>(*store_, *store_, *snapshots_, clock_,
                                      AdminOptions{.token = kToken}, *auth_);
    api_->RegisterRoutes(router_);
  }

  Reply Call(Method method, const std::string& target, const std::string& body = "",
             const std::string& content_type = "application/json",
             const std::string& authorization = std::string("Bearer ") + kToken) {
    return CallRouter(router_, method, target, body, content_type, authorization);
  }

  static Reply CallRouter(const http::Router& router, Method method, const std::string& target,
                          const std::string& body, const std::string& content_type,
                          const std::string& authorization) {
    http::Request request;
    request.method = method;
    request.target = target;
    size_t q = target.find('?');
    request.path = std::string_view(target).substr(0, q);
    if (q != std::string::npos) request.query = std::string_view(target).substr(q + 1);
    if (!authorization.empty()) request.headers.push_back({"Authorization", authorization});
    if (!content_type.empty()) request.headers.push_back({"Content-Type", content_type});
    request.body = body;
    http::Router::Match match = router.Find(request);
    EXPECT_NE(match.handler, nullptr) << target;
    if (!match.handler) return Reply{match.status, Json(), ""};
    EXPECT_EQ(match.options->dispatch, http::Dispatch::kWorker);
    http::Response response = (*match.handler)(request);
    Reply reply{response.status, Json(), response.body};
    if (!response.body.empty()) reply.body = Json::parse(response.body, nullptr, false);
    return reply;
  }

  Reply Post(const std::string& target, const Json& body) {
    return Call(Method::kPost, target, body.dump());
  }
  Reply Patch(const std::string& target, const Json& body) {
    return Call(Method::kPatch, target, body.dump());
  }
  Reply Get(const std::string& target) { return Call(Method::kGet, target); }
  Reply Delete(const std::string& target) { return Call(Method::kDelete, target); }

  static std::vector<std::string> Fields(const Reply& r) {
    std::vector<std::string> fields;
    for (const Json& d : r.body["details"]) fields.push_back(d["field"].get<std::string>());
    return fields;
  }

  int64_t CreateCommunity(const std::string& name = "DeFi Club") {
    Reply r = Post("/admin/v1/communities",
                   {{"name", name}, {"logoUrl", "https://cdn.example/logo.png"}});
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.body["id"].get<int64_t>();
  }
  int64_t CreateProject(const std::string& slug) {
    Reply r = Post("/admin/v1/projects", {{"slug", slug}, {"name", slug + " name"}});
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.body["id"].get<int64_t>();
  }
  Json CampaignBody(int64_t community_id) {
    return Json{{"communityId", community_id},
                {"name", "Launch"},
                {"status", "active"},
                {"pricing", {{"model", "CPM"}, {"bid", 12.5}}},
                {"targeting", {{"projects", {"uniswap"}}}}};
  }
  int64_t CreateCampaign() {
    int64_t community = CreateCommunity();
    CreateProject("uniswap");
    Reply r = Post("/admin/v1/campaigns", CampaignBody(community));
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.body["id"].get<int64_t>();
  }
  Json AdBody(int64_t campaign_id) {
    return Json{{"campaignId", campaign_id},
                {"headline", "Swap smarter"},
                {"content", "**Low fees**\\n* fast\\n* *safe*"},
                {"ctaUrl", "https://app.example/swap"},
                {"ctaLabel", "Swap now"},
                {"images", {{"LANDSCAPE", "https://cdn.example/l.png"}}}};
  }

  testing::TempDir dir_;
  FakeClock clock_{kNow * 1'000'000};
  std::unique_ptr<store::SqliteStore> store_;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
  std::unique_ptr<ingest::SnapshotPublisher> snapshots_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<AdminApi> api_;
  http::Router router_;
};

TEST_F(AdminApiTest, RejectsMissingOrWrongToken) {
  Reply missing = Call(Method::kGet, "/admin/v1/publishers", "", "", "");
  EXPECT_EQ(missing.status, 401);
  EXPECT_TRUE(missing.body["error"].is_string());
  EXPECT_TRUE(missing.body["details"].is_array());
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/publishers", "", "", "Bearer wrong").status, 401);
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/publishers", "", "", kToken).status, 401);
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/publishers", "", "", "Basic abc").status, 401);
  EXPECT_EQ(Call(Method::kGet, "/admin/v1/publishers", "", "",
                 std::string("bearer ") + kToken).status, 200);
}

TEST_F(AdminApiTest, ACallerBeyondItsRateGets429WithRetryAfter) {
  AdminOptions options{.token = kToken, .rate_limit_per_second = 1, .rate_limit_burst = 2};
  Authenticator limited(options, nullptr, clock_);
  AdminApi api(*store_, *store_, *snapshots_, clock_, options, limited);
  http::Router router;
  api.RegisterRoutes(router);
  auto call = [&] {
    return CallRouter(router, Method::kGet, "/admin/v1/publishers", "", "",
                      std::string("Bearer ") + kToken);
  };
  EXPECT_EQ(call().status, 200);
  EXPECT_EQ(call().status, 200);  // the burst
  http::Request request;
  request.method = Method::kGet;
  request.target = request.path = "/admin/v1/publishers";
  std::string authorization = std::string("Bearer ") + kToken;
  request.headers.push_back({"Authorization", authorization});
  http::Response refused = (*router.Find(request).handler)(request);
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.Header("Retry-After"), "1");
  Json body = Json::parse(refused.body);
  EXPECT_TRUE(body["error"].is_string());
  EXPECT_TRUE(body["details"].is_array());
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(call().status, 200);
}

TEST_F(AdminApiTest, AnAddressGuessingTokensBacksOffWhileOthersGoOn) {
  auto call = [&](const std::string& ip, const std::string& token) {
    http::Request request;
    request.method = Method::kGet;
    request.target = request.path = "/admin/v1/publishers";
    request.remote_ip = ip;
    std::string authorization = "Bearer " + token;
    request.headers.push_back({"Authorization", authorization});
    return (*router_.Find(request).handler)(request);
  };
  // Five failures (as docs/admin-api.md says); the sixth attempt waits.
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(call("192.0.2.7", "guess-" + std::to_string(i)).status, 401);
  http::Response backed_off = call("192.0.2.7", "guess-5");
  EXPECT_EQ(backed_off.status, 429);
  EXPECT_FALSE(backed_off.Header("Retry-After").empty());
  // While backing off, even the right token is refused from that address; others are served.
  EXPECT_EQ(call("192.0.2.7", kToken).status, 429);
  EXPECT_EQ(call("198.51.100.1", kToken).status, 200);
  clock_.Advance(std::chrono::seconds(2));
  EXPECT_EQ(call("192.0.2.7", kToken).status, 200);
}

TEST_F(AdminApiTest, DisabledWhenTokenIsEmpty) {
  Authenticator no_token(AdminOptions{}, nullptr, clock_);
  AdminApi disabled(*store_, *store_, *snapshots_, clock_, AdminOptions{}, no_token);
  http::Router router;
  disabled.RegisterRoutes(router);
  Reply r = CallRouter(router, Method::kGet, "/admin/v1/campaigns", "", "", "Bearer x");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body["error"], "admin API is disabled (set ADSERVER_ADMIN_TOKEN)");
  EXPECT_EQ(CallRouter(router, Method::kPost, "/admin/v1/reload", "", "", "").status, 404);
}

TEST_F(AdminApiTest, PublisherCrud) {
  int64_t community = CreateCommunity();
  Reply created = Post("/admin/v1/publishers", {{"name", "News Site"},
                                                {"allowedOrigins", {"https://news.example"}},
                                                {"blockedCommunities", {community}}});
  ASSERT_EQ(created.status, 201) << created.raw;
  int64_t id = created.body["id"].get<int64_t>();
  EXPECT_EQ(created.body["name"], "News Site");
  EXPECT_EQ(created.body["allowedOrigins"], Json({"https://news.example"}));
  EXPECT_EQ(created.body["blockedCommunities"], Json({community}));
  EXPECT_EQ(created.body["createdAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(created.body["updatedAt"], "2026-01-01T00:00:00Z");

  std::string path = "/admin/v1/publishers/" + std::to_string(id);
  EXPECT_EQ(Get(path).body, created.body);
  Reply list = Get("/admin/v1/publishers");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["publishers"].size(), 1u);

  clock_.Advance(std::chrono::seconds(60));
  Reply patched = Patch(path, {{"name", "Renamed"}});
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["name"], "Renamed");
  EXPECT_EQ(patched.body["allowedOrigins"], Json({"https://news.example"}));  // untouched
  EXPECT_EQ(patched.body["updatedAt"], "2026-01-01T00:01:00Z");

  EXPECT_EQ(Delete(path).status, 204);
  EXPECT_EQ(Get(path).status, 404);
  EXPECT_EQ(Delete(path).status, 404);
  EXPECT_EQ(Patch(path, {{"name", "x"}}).status, 404);
}

TEST_F(AdminApiTest, PublisherValidationNamesEveryField) {
  Reply r = Post("/admin/v1/publishers", {{"name", ""},
                                          {"allowedOrigins", {"https://a.example/path"}},
                                          {"blockedCommunities", {999}},
                                          {"colour", "red"}});
  ASSERT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Fields(r), (std::vector<std::string>{"colour", "name", "allowedOrigins[0]"}));
  Reply types = Post("/admin/v1/publishers", {{"name", 5}, {"allowedOrigins", {"ok", 7}}});
  EXPECT_EQ(Fields(types), (std::vector<std::string>{"name", "allowedOrigins[1]"}));
  Reply unknown = Post("/admin/v1/publishers", {{"name", "P"}, {"blockedCommunities", {999}}});
  EXPECT_EQ(Fields(unknown), std::vector<std::string>{"blockedCommunities[0]"});
  Reply missing = Post("/admin/v1/publishers", Json::object());
  EXPECT_EQ(Fields(missing), std::vector<std::string>{"name"});
}

TEST_F(AdminApiTest, RejectsBadBodiesAndContentTypes) {
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/communities", "{not json").status, 400);
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/communities", "[1,2]").status, 400);
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/communities", "").status, 400);
  EXPECT_EQ(Call(Method::kPost, "/admin/v1/communities", R"({"name":"x"})", "text/plain").status,
            415);
  Reply with_charset = Call(Method::kPost, "/admin/v1/communities",
                            R"({"name":"C","logoUrl":"https://x.example/l.png"})",
                            "application/json; charset=utf-8");
  EXPECT_EQ(with_charset.status, 201) << with_charset.raw;
}

TEST_F(AdminApiTest, KeyIsShownOnceAndRevokedAtOnce) {
  Reply pub = Post("/admin/v1/publishers", {{"name", "P"}});
  std::string keys = "/admin/v1/publishers/" + std::to_string(pub.body["id"].get<int64_t>()) +
                     "/keys";
  Reply created = Post(keys, {{"test", true}});
  ASSERT_EQ(created.status, 201) << created.raw;
  std::string key = created.body["key"].get<std::string>();
  EXPECT_EQ(key.size(), 34u);
  EXPECT_EQ(key.substr(0, 4), "spk_");
  EXPECT_EQ(created.body["prefix"], key.substr(0, 8));
  EXPECT_EQ(created.body["test"], true);
  EXPECT_EQ(created.body["createdAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(catalogs_.Current()->api_keys.size(), 1u);

  Reply empty_body = Call(Method::kPost, keys, "", "");
  ASSERT_EQ(empty_body.status, 201) << empty_body.raw;
  EXPECT_EQ(empty_body.body["test"], false);
  EXPECT_NE(empty_body.body["key"], created.body["key"]);

  Reply list = Get(keys);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["keys"].size(), 2u);
  for (const Json& k : list.body["keys"]) {
    EXPECT_FALSE(k.contains("key")) << k.dump();
    EXPECT_TRUE(k["revokedAt"].is_null());
  }
  EXPECT_EQ(list.body["keys"][0]["prefix"], key.substr(0, 8));

  std::string key_path = keys + "/" + std::to_string(created.body["id"].get<int64_t>());
  Reply revoked = Delete(key_path);
  ASSERT_EQ(revoked.status, 200) << revoked.raw;
  EXPECT_EQ(revoked.body["revokedAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(catalogs_.Current()->api_keys.size(), 1u);  // serving no longer knows it
  EXPECT_EQ(Delete(keys + "/99999").status, 404);
  EXPECT_EQ(Delete(keys + "/abc").status, 404);
  EXPECT_EQ(Post("/admin/v1/publishers/4242/keys", Json::object()).status, 404);
  EXPECT_EQ(Get("/admin/v1/publishers/4242/keys").status, 404);
  EXPECT_EQ(Post(keys, {{"test", "yes"}}).status, 400);
}

TEST_F(AdminApiTest, CommunityCrudAndConflictWhileReferenced) {
  int64_t campaign = CreateCampaign();
  Reply c = Get("/admin/v1/campaigns/" + std::to_string(campaign));
  std::string path = "/admin/v1/communities/" + std::to_string(c.body["communityId"].get<int64_t>());
  Reply patched = Patch(path, {{"logoUrl", "https://cdn.example/new.png"}});
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["logoUrl"], "https://cdn.example/new.png");
  EXPECT_EQ(patched.body["name"], "DeFi Club");
  EXPECT_EQ(Patch(path, {{"logoUrl", "ftp://x"}}).status, 400);
  EXPECT_EQ(Get("/admin/v1/communities").body["communities"].size(), 1u);
  EXPECT_EQ(Delete(path).status, 409);
  EXPECT_EQ(Delete("/admin/v1/campaigns/" + std::to_string(campaign)).status, 204);
  EXPECT_EQ(Delete(path).status, 204);
  EXPECT_EQ(Get(path).status, 404);
}

TEST_F(AdminApiTest, ProjectCrudBySlugAndDuplicateConflict) {
  Reply created = Post("/admin/v1/projects",
                       {{"slug", "aave"},
                        {"name", "Aave"},
                        {"category", "lending"},
                        {"contracts",
                         {{{"chainId", 1}, {"address", "0xABCDEF0000000000000000000000000000000001"}}}}});
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.body["contracts"][0]["address"], "0xabcdef0000000000000000000000000000000001");
  EXPECT_TRUE(created.body["logoUrl"].is_null());
  int64_t id = created.body["id"].get<int64_t>();
  EXPECT_EQ(Get("/admin/v1/projects/aave").body["id"], id);
  EXPECT_EQ(Get("/admin/v1/projects/" + std::to_string(id)).body["slug"], "aave");
  EXPECT_EQ(Get("/admin/v1/projects/nope").status, 404);
  EXPECT_EQ(Get("/admin/v1/projects/NOT_A_SLUG").status, 404);

  EXPECT_EQ(Post("/admin/v1/projects", {{"slug", "aave"}, {"name", "Again"}}).status, 409);
  Reply bad = Post("/admin/v1/projects",
                   {{"slug", "Bad Slug"},
                    {"name", "x"},
                    {"contracts", {{{"chainId", 1}, {"address", "0x12"}}, {{"chainId", "1"}}}}});
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(Fields(bad), (std::vector<std::string>{"contracts[0].address", "contracts[1].address",
                                                   "contracts[1].chainId", "slug"}));

  Reply patched = Patch("/admin/v1/projects/aave", {{"name", "Aave V3"}, {"category", nullptr}});
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["name"], "Aave V3");
  EXPECT_TRUE(patched.body["category"].is_null());
  EXPECT_EQ(patched.body["contracts"].size(), 1u);
  EXPECT_EQ(Get("/admin/v1/projects").body["projects"].size(), 1u);
  EXPECT_EQ(Delete("/admin/v1/projects/aave").status, 204);
  EXPECT_EQ(Get("/admin/v1/projects/aave").status, 404);
}

// Issue 38 item 5: a page of matches instead of the whole registry, best first.
TEST_F(AdminApiTest, ProjectSearchAnswersAPageOfMatchesBestFirst) {
  int64_t community = CreateCommunity();
  for (auto [slug, name, address] :
       {std::tuple{"uniswap", "Uniswap", "0x1f98431c8ad98523631ae4a59f267346ea31f984"},
        std::tuple{"uni-bridge", "Bridge of Uni", "0x00000000000000000000000000000000000000b1"},
        std::tuple{"sushi", "SushiSwap", "0x00000000000000000000000000000000000000c1"},
        std::tuple{"unicorn", "Unicorn Land", "0x00000000000000000000000000000000000000d1"},
        std::tuple{"hub", "Community Hub", "0x00000000000000000000000000000000000000e1"}}) {
    ASSERT_EQ(Post("/admin/v1/projects", {{"slug", slug},
                                          {"name", name},
                                          {"contracts", {{{"chainId", 1}, {"address", address}}}}})
                  .status,
              201);
  }
  ASSERT_EQ(Patch("/admin/v1/projects/sushi", {{"ownerCommunityId", community}}).status, 200);
  const auto slugs = [](const Reply& r) {
    std::vector<std::string> out;
    for (const Json& p : r.body["projects"]) out.push_back(p["slug"]);
    return out;
  };
  // Slug or name starting with the text, then containing it ("Community Hub"); ties by name.
  Reply page = Get("/admin/v1/projects?q=UNI&limit=2");
  ASSERT_EQ(page.status, 200) << page.raw;
  EXPECT_EQ(slugs(page), (std::vector<std::string>{"uni-bridge", "unicorn"}));
  EXPECT_EQ(page.body["total"], 4);
  EXPECT_EQ(page.body["nextOffset"], 2);
  page = Get("/admin/v1/projects?q=uni&limit=2&offset=2");
  EXPECT_EQ(slugs(page), (std::vector<std::string>{"uniswap", "hub"}));
  EXPECT_TRUE(page.body["nextOffset"].is_null());
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=uniswap")), (std::vector<std::string>{"uniswap"}));
  // A name with a space (form-encoded), a contract address, the owner's projects, a chain.
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=of+uni")), (std::vector<std::string>{"uni-bridge"}));
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=0x1f98431c")), (std::vector<std::string>{"uniswap"}));
  EXPECT_EQ(slugs(Get("/admin/v1/projects?ownerCommunityId=" + std::to_string(community))),
            (std::vector<std::string>{"sushi"}));
  EXPECT_EQ(Get("/admin/v1/projects?chainId=10").body["total"], 0);
  EXPECT_EQ(Get("/admin/v1/projects?q=zzz").body["projects"].size(), 0u);
  // Without a search parameter, the whole registry as before (no total).
  Reply all = Get("/admin/v1/projects");
  EXPECT_EQ(all.body["projects"].size(), 5u);
  EXPECT_FALSE(all.body.contains("total"));
  Reply bad = Get("/admin/v1/projects?limit=0&offset=-1&chainId=x&ownerCommunityId=0");
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(Fields(bad),
            (std::vector<std::string>{"ownerCommunityId", "chainId", "limit", "offset"}));
}

// Issue 40: imported projects keep their ticker and lists; the search finds them by symbol and
// filters by category and source.
TEST_F(AdminApiTest, ProjectSearchFindsBySymbolAndFiltersByCategoryAndSource) {
  Reply imported = Post("/admin/v1/projects/import",
                        Json::parse(R"j({"name":"t","source":"@scope/list@1.2.0","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USD Coin",
     "symbol":"USDC"},
    {"chainId":137,"address":"0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174",
     "name":"USD Coin (PoS)","symbol":"USDC"}]})j"));
  ASSERT_EQ(imported.status, 200) << imported.raw;
  EXPECT_EQ(imported.body["added"], 1);
  EXPECT_EQ(imported.body["sourcesAdded"], 0);
  ASSERT_EQ(Post("/admin/v1/projects",
                 {{"slug", "my-dex"}, {"name", "My DEX"}, {"category", "dex"}, {"symbol", "MDX"}})
                .status,
            201);
  const auto slugs = [](const Reply& r) {
    std::vector<std::string> out;
    for (const Json& p : r.body["projects"]) out.push_back(p["slug"]);
    return out;
  };
  Reply usdc = Get("/admin/v1/projects?q=usdc");
  ASSERT_EQ(usdc.status, 200) << usdc.raw;
  ASSERT_EQ(slugs(usdc), (std::vector<std::string>{"usd-coin"}));
  EXPECT_EQ(usdc.body["projects"][0]["symbol"], "USDC");
  EXPECT_EQ(usdc.body["projects"][0]["sources"], Json::array({"@scope/list@1.2.0"}));
  EXPECT_EQ(usdc.body["projects"][0]["contracts"].size(), 2u);  // "(PoS)" joined it
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=mdx")), (std::vector<std::string>{"my-dex"}));
  EXPECT_EQ(slugs(Get("/admin/v1/projects?category=DEX")), (std::vector<std::string>{"my-dex"}));
  EXPECT_EQ(slugs(Get("/admin/v1/projects?source=%40scope%2Flist")),
            (std::vector<std::string>{"usd-coin"}));
  EXPECT_EQ(slugs(Get("/admin/v1/projects?source=@scope/list@1.2.0&category=token")),
            (std::vector<std::string>{"usd-coin"}));
  EXPECT_EQ(Get("/admin/v1/projects?source=@scope/list@9").body["total"], 0);
  EXPECT_EQ(Get("/admin/v1/projects/my-dex").body["sources"], Json::array());
  // The search's copy of the registry follows every write (the inventory change counter).
  ASSERT_EQ(Post("/admin/v1/projects", {{"slug", "usdc-vault"}, {"name", "USDC Vault"}}).status,
            201);
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=usdc")),
            (std::vector<std::string>{"usd-coin", "usdc-vault"}));  // more contracts first
  ASSERT_EQ(Patch("/admin/v1/projects/my-dex", {{"symbol", "NEWDX"}}).status, 200);
  EXPECT_EQ(slugs(Get("/admin/v1/projects?q=newdx")), (std::vector<std::string>{"my-dex"}));
  EXPECT_EQ(Get("/admin/v1/projects?q=mdx").body["total"], 0);
  Reply bad =
      Post("/admin/v1/projects", {{"slug", "x"}, {"name", "X"}, {"symbol", std::string(33, 'A')}});
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(Fields(bad), std::vector<std::string>{"symbol"});
  // A picker's short form: no contracts, their count.
  Reply short_form = Get("/admin/v1/projects?q=usdc&fields=summary");
  ASSERT_EQ(short_form.status, 200) << short_form.raw;
  EXPECT_EQ(short_form.body["projects"][0]["slug"], "usd-coin");
  EXPECT_EQ(short_form.body["projects"][0]["contractCount"], 2);
  EXPECT_EQ(short_form.body["projects"][0]["symbol"], "USDC");
  EXPECT_FALSE(short_form.body["projects"][0].contains("contracts"));
  EXPECT_EQ(Fields(Get("/admin/v1/projects?fields=everything")),
            std::vector<std::string>{"fields"});
  Reply long_filter = Get("/admin/v1/projects?category=" + std::string(201, 'a'));
  ASSERT_EQ(long_filter.status, 400);
  EXPECT_EQ(Fields(long_filter), std::vector<std::string>{"category"});
}

TEST_F(AdminApiTest, CampaignRoundTripsSlugsMoneyAndTimes) {
  int64_t community = CreateCommunity();
  CreateProject("uniswap");
  CreateProject("aave");
  Json body = CampaignBody(community);
  body["startsAt"] = "2026-02-01T00:00:00+01:00";
  body["endsAt"] = "2026-03-01T00:00:00Z";
  body["pricing"] = {{"model", "CPC"}, {"bid", "0.000001"}};
  body["budget"] = {{"total", 1000}, {"daily", "12.5"}};
  body["targeting"] = {{"projects", {"uniswap"}},
                       {"excludeProjects", {"aave"}},
                       {"chains", {1, 10}},
                       {"recencyDays", 30}};
  body["frequencyCap"] = {{"count", 3}, {"hours", 24}};
  Reply created = Post("/admin/v1/campaigns", body);
  ASSERT_EQ(created.status, 201) << created.raw;
  const Json& c = created.body;
  EXPECT_EQ(c["startsAt"], "2026-01-31T23:00:00Z");
  EXPECT_EQ(c["endsAt"], "2026-03-01T00:00:00Z");
  EXPECT_EQ(c["pricing"], Json({{"model", "CPC"}, {"bid", 0.000001}}));
  EXPECT_EQ(c["budget"]["total"], 1000);
  EXPECT_EQ(c["budget"]["daily"], 12.5);
  EXPECT_EQ(c["targeting"]["projects"], Json({"uniswap"}));
  EXPECT_EQ(c["targeting"]["excludeProjects"], Json({"aave"}));
  EXPECT_EQ(c["targeting"]["chains"], Json({1, 10}));
  EXPECT_EQ(c["targeting"]["recencyDays"], 30);
  EXPECT_EQ(c["frequencyCap"], Json({{"count", 3}, {"hours", 24}}));
  EXPECT_EQ(c["explore"], true);  // issue 36 item 9: follows the server's setting by default
  EXPECT_EQ(catalogs_.Current()->campaigns.size(), 1u);

  std::string path = "/admin/v1/campaigns/" + std::to_string(c["id"].get<int64_t>());
  Reply greedy = Patch(path, {{"explore", false}});
  ASSERT_EQ(greedy.status, 200) << greedy.raw;
  EXPECT_EQ(greedy.body["explore"], false);
  EXPECT_FALSE(catalogs_.Current()->campaigns.at(0).explore);
  EXPECT_EQ(Fields(Patch(path, {{"explore", "off"}})), std::vector<std::string>{"explore"});
  Reply paused = Patch(path, {{"status", "paused"}});
  ASSERT_EQ(paused.status, 200) << paused.raw;
  EXPECT_EQ(paused.body["status"], "paused");
  EXPECT_EQ(paused.body["budget"], c["budget"]);
  EXPECT_EQ(catalogs_.Current()->campaigns.size(), 0u);  // serving sees the pause at once

  Reply cleared = Patch(path, {{"budget", nullptr}, {"frequencyCap", nullptr}, {"endsAt", nullptr},
                               {"pricing", {{"bid", 3}}}});
  ASSERT_EQ(cleared.status, 200) << cleared.raw;
  EXPECT_EQ(cleared.body["budget"], Json({{"total", nullptr}, {"daily", nullptr}}));
  EXPECT_TRUE(cleared.body["frequencyCap"].is_null());
  EXPECT_TRUE(cleared.body["endsAt"].is_null());
  EXPECT_EQ(cleared.body["pricing"], Json({{"model", "CPC"}, {"bid", 3}}));
  EXPECT_EQ(Get(path).body, cleared.body);
  EXPECT_EQ(Get("/admin/v1/campaigns").body["campaigns"].size(), 1u);
}

TEST_F(AdminApiTest, CampaignValidationNamesJsonFields) {
  int64_t community = CreateCommunity();
  CreateProject("uniswap");
  Json body = CampaignBody(community);
  body["status"] = "running";
  body["startsAt"] = "2026-03-01T00:00:00Z";
  body["endsAt"] = "2026-02-01T00:00:00Z";
  body["pricing"] = {{"model", "CPX"}, {"bid", 0}};
  body["budget"] = {{"total", 10}, {"daily", 20}};
  body["targeting"] = {{"projects", {"uniswap", "unknown-project"}}, {"recencyDays", 0}};
  body["frequencyCap"] = {{"count", 1}};
  Reply r = Post("/admin/v1/campaigns", body);
  ASSERT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Fields(r), (std::vector<std::string>{
                           "status", "pricing.model", "targeting.projects[1]",
                           "frequencyCap.hours", "endsAt", "pricing.bid", "budget.daily",
                           "targeting.recencyDays"}));

  Reply missing = Post("/admin/v1/campaigns", Json::object());
  EXPECT_EQ(Fields(missing), (std::vector<std::string>{"communityId", "name", "status", "pricing",
                                                       "targeting"}));
  Json unknown_community = CampaignBody(4242);
  EXPECT_EQ(Fields(Post("/admin/v1/campaigns", unknown_community)),
            std::vector<std::string>{"communityId"});
  EXPECT_EQ(Patch("/admin/v1/campaigns/4242", {{"status", "paused"}}).status, 404);
}

TEST_F(AdminApiTest, MoneyIsConvertedExactly) {
  int64_t community = CreateCommunity();
  CreateProject("uniswap");
  auto bid_reply = [&](const Json& bid) {
    Json body = CampaignBody(community);
    body["pricing"]["bid"] = bid;
    return Post("/admin/v1/campaigns", body);
  };
  struct Case {
    Json in;
    Json out;
  };
  for (const Case& ok : {Case{12.5, 12.5}, Case{"12.50", 12.5}, Case{0.1, 0.1}, Case{"7", 7},
                         Case{3, 3}, Case{"0.000001", 0.000001}, Case{1.23456, 1.23456},
                         Case{"999999999.999999", 999999999.999999}}) {
    Reply r = bid_reply(ok.in);
    ASSERT_EQ(r.status, 201) << ok.in.dump() << " " << r.raw;
    EXPECT_EQ(r.body["pricing"]["bid"], ok.out) << ok.in.dump();
  }
  for (const Json& bad : {Json(-1), Json("-1"), Json(0.0000001), Json("0.0000001"),
                          Json(1e10), Json("1000000000"), Json("1e3"), Json("abc"), Json(""),
                          Json(".5"), Json("5."), Json(true), Json(nullptr), Json::array()}) {
    Reply r = bid_reply(bad);
    EXPECT_EQ(r.status, 400) << bad.dump();
    EXPECT_EQ(Fields(r), std::vector<std::string>{"pricing.bid"}) << bad.dump();
  }
  EXPECT_EQ(Fields(bid_reply(0)), std::vector<std::string>{"pricing.bid"});  // must be > 0
}

TEST_F(AdminApiTest, AdCrudAndListByCampaign) {
  int64_t campaign = CreateCampaign();
  Reply created = Post("/admin/v1/ads", AdBody(campaign));
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.body["images"], Json({{"LANDSCAPE", "https://cdn.example/l.png"},
                                          {"LONG_BANNER", nullptr},
                                          {"SHORT_BANNER", nullptr}}));
  EXPECT_EQ(created.body["weight"], 1);
  EXPECT_EQ(created.body["status"], "active");
  EXPECT_EQ(catalogs_.Current()->ads.size(), 1u);

  Json text_only = AdBody(campaign);
  text_only["images"] = Json::object();
  text_only["weight"] = 5;
  text_only["status"] = "paused";
  ASSERT_EQ(Post("/admin/v1/ads", text_only).status, 201);

  Reply all = Get("/admin/v1/ads?campaignId=" + std::to_string(campaign));
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body["ads"].size(), 2u);
  EXPECT_EQ(Get("/admin/v1/ads").body["ads"].size(), 2u);
  EXPECT_EQ(Get("/admin/v1/ads?campaignId=4242").body["ads"].size(), 0u);
  EXPECT_EQ(Get("/admin/v1/ads?campaignId=x").status, 400);

  std::string path = "/admin/v1/ads/" + std::to_string(created.body["id"].get<int64_t>());
  Reply patched = Patch(path, {{"images", {{"LANDSCAPE", nullptr}, {"SHORT_BANNER",
                                                                    "https://cdn.example/s.png"}}},
                               {"headline", "New headline"}});
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["images"], Json({{"LANDSCAPE", nullptr},
                                          {"LONG_BANNER", nullptr},
                                          {"SHORT_BANNER", "https://cdn.example/s.png"}}));
  EXPECT_EQ(patched.body["content"], created.body["content"]);
  EXPECT_EQ(Patch(path, {{"campaignId", campaign + 1}}).status, 400);
  EXPECT_EQ(Delete(path).status, 204);
  EXPECT_EQ(Get(path).status, 404);
}

TEST_F(AdminApiTest, AdValidationAndMarkupRules) {
  int64_t campaign = CreateCampaign();
  Json body = AdBody(campaign);
  body["headline"] = "**Bold headline**";
  body["content"] = "<b>html</b>";
  body["ctaUrl"] = "javascript:alert(1)";
  body["ctaLabel"] = "A label that is far too long for a button";
  body["images"] = {{"LANDSCAPE", "not-a-url"}, {"NO_IMAGE", "https://x.example/a.png"}};
  body["weight"] = 0;
  Reply r = Post("/admin/v1/ads", body);
  ASSERT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Fields(r), (std::vector<std::string>{"images.NO_IMAGE", "headline", "content", "ctaUrl",
                                                 "ctaLabel", "images.LANDSCAPE", "weight"}));

  Json no_images = AdBody(campaign);
  no_images.erase("images");
  EXPECT_EQ(Fields(Post("/admin/v1/ads", no_images)), std::vector<std::string>{"images"});
  Json unknown_campaign = AdBody(4242);
  EXPECT_EQ(Fields(Post("/admin/v1/ads", unknown_campaign)),
            std::vector<std::string>{"campaignId"});

  struct Case {
    const char* content;
    bool ok;
  };
  for (const Case& c : {Case{"**bold** and *italic* and __under__", true},
                        Case{"* one\\n* two", true}, Case{"line\\nbreak", true},
                        Case{"***both***", true}, Case{"**unclosed", false},
                        Case{"raw\nnewline", false}, Case{"[link](https://x.example)", false},
                        Case{"# heading", false}, Case{"`code`", false},
                        Case{"![img](https://x.example/a.png)", false},
                        Case{"**a *b** c*", false}, Case{"<i>x</i>", false}}) {
    Json ad = AdBody(campaign);
    ad["content"] = c.content;
    Reply reply = Post("/admin/v1/ads", ad);
    EXPECT_EQ(reply.status, c.ok ? 201 : 400) << c.content << " " << reply.raw;
    if (!c.ok) {
      EXPECT_EQ(Fields(reply), std::vector<std::string>{"content"}) << c.content;
    }
  }
  Json long_content = AdBody(campaign);
  long_content["content"] = std::string(401, 'x');
  EXPECT_EQ(Fields(Post("/admin/v1/ads", long_content)), std::vector<std::string>{"content"});
  long_content["content"] = std::string(400, 'x');
  EXPECT_EQ(Post("/admin/v1/ads", long_content).status, 201);
}

TEST_F(AdminApiTest, ActivityImportAndLookup) {
  CreateProject("uniswap");
  std::string good = std::string(R"({"wallet":")") + kWallet +
                     R"(","project":"uniswap","chainId":1,"timestamp":"2025-12-01T10:00:00Z"})";
  std::string ndjson = good + "\n{bad json\n" + good + "\n" +
                       R"({"wallet":"0x1","project":"uniswap","chainId":1,"timestamp":"x"})" + "\n";
  Reply wrong_type = Call(Method::kPost, "/admin/v1/activity", ndjson, "application/json");
  EXPECT_EQ(wrong_type.status, 415);
  Reply r = Call(Method::kPost, "/admin/v1/activity", ndjson, "application/x-ndjson");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["imported"], 2);
  EXPECT_EQ(r.body["rejected"], 2);
  ASSERT_EQ(r.body["errors"].size(), 2u);
  EXPECT_EQ(r.body["errors"][0]["line"], 2);
  EXPECT_EQ(r.body["errors"][1]["line"], 4);
  EXPECT_TRUE(r.body["errors"][0]["message"].is_string());

  Reply a = Get(std::string("/admin/v1/activity/") + kWallet);
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body["wallet"], kWallet);
  ASSERT_EQ(a.body["interactions"].size(), 1u);
  EXPECT_EQ(a.body["interactions"][0],
            Json({{"project", "uniswap"}, {"chainId", 1}, {"lastSeen", "2025-12-01T10:00:00Z"},
                  {"count", 2}}));
  EXPECT_EQ(activity_.Current()->wallet_count(), 1u);
  Reply bad_wallet = Get("/admin/v1/activity/0x12");
  EXPECT_EQ(bad_wallet.status, 400);
  EXPECT_EQ(Fields(bad_wallet), std::vector<std::string>{"wallet"});
}

// Activity uploads in the bulk CLI's shapes, through an AdminApi with an import ledger.
class ActivityUploadTest : public AdminApiTest {
 protected:
  static constexpr char kUsdc[] = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
  static constexpr char kOther[] = "0x2222222222222222222222222222222222222222";

  void SetUp() override {
    AdminApiTest::SetUp();
    api_ =
        std::make_unique<AdminApi>(*store_, *store_, *snapshots_, clock_,
                                   AdminOptions{.token = kToken,
                                                .max_decompressed_bytes = 1 << 20,
                                                .import_ledger_path = dir_.File("imports.ledger")},
                                   *auth_);
    router_ = http::Router();
    api_->RegisterRoutes(router_);
    Reply p = Post("/admin/v1/projects", {{"slug", "usdc"},
                                          {"name", "USD Coin"},
                                          {"contracts", {{{"chainId", 1}, {"address", kUsdc}}}}});
    ASSERT_EQ(p.status, 201) << p.raw;
  }

  Reply Upload(const std::string& target, const std::string& body,
               const std::string& content_type = "text/csv", const std::string& encoding = "") {
    http::Request request;
    request.method = Method::kPost;
    request.target = target;
    size_t q = target.find('?');
    request.path = std::string_view(target).substr(0, q);
    if (q != std::string::npos) request.query = std::string_view(target).substr(q + 1);
    std::string authorization = std::string("Bearer ") + kToken;
    request.headers.push_back({"Authorization", authorization});
    request.headers.push_back({"Content-Type", content_type});
    if (!encoding.empty()) request.headers.push_back({"Content-Encoding", encoding});
    request.body = body;
    http::Router::Match match = router_.Find(request);
    EXPECT_NE(match.handler, nullptr);
    http::Response response = (*match.handler)(request);
    return Reply{response.status, Json::parse(response.body, nullptr, false), response.body};
  }

  int64_t Count(const std::string& wallet) {
    Reply a = Get("/admin/v1/activity/" + wallet);
    EXPECT_EQ(a.status, 200) << a.raw;
    return a.body["interactions"].empty() ? 0 : a.body["interactions"][0]["count"].get<int64_t>();
  }

  static std::string Gzip(const std::string& content) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, content.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
    z.avail_in = static_cast<uInt>(content.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }

  std::string TokenTransfersCsv() {
    return std::string("token_address,from_address,to_address,value,block_timestamp\n") + kUsdc +
           "," + kWallet + "," + kOther + ",5,2025-12-20 10:00:00 UTC\n" +
           "0x3333333333333333333333333333333333333333," + kWallet + "," + kOther +
           ",5,2025-12-20 10:00:00 UTC\n" + "not,enough\n";
  }
};

TEST_F(ActivityUploadTest, BigQueryCsvIsImportedWithTheCliSummary) {
  Reply r = Upload("/admin/v1/activity", TokenTransfersCsv());
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["shape"], "bigquery.token_transfers");
  EXPECT_EQ(r.body["rows"], 3);
  EXPECT_EQ(r.body["interactions"], 2);
  EXPECT_EQ(r.body["imported"], 2);
  EXPECT_EQ(r.body["unknownContract"], 1);
  EXPECT_EQ(r.body["rejected"], 1);
  EXPECT_EQ(r.body["errors"][0]["line"], 4);
  EXPECT_EQ(r.body["alreadyImported"], false);
  EXPECT_EQ(Count(kWallet), 1);
  EXPECT_EQ(Count(kOther), 1);
}

TEST_F(ActivityUploadTest, ResendingTheSameContentDoesNotDoubleCount) {
  ASSERT_EQ(Upload("/admin/v1/activity", TokenTransfersCsv()).status, 200);
  // Same content gzip-compressed (by header and by magic alone): the ledger knows it.
  Reply again = Upload("/admin/v1/activity", Gzip(TokenTransfersCsv()), "text/csv", "gzip");
  ASSERT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(again.body["alreadyImported"], true);
  EXPECT_EQ(again.body["imported"], 0);
  EXPECT_EQ(again.body["interactions"], 2);
  Reply magic = Upload("/admin/v1/activity", Gzip(TokenTransfersCsv()), "application/gzip");
  EXPECT_EQ(magic.body["alreadyImported"], true);
  EXPECT_EQ(Count(kWallet), 1);
  Reply forced = Upload("/admin/v1/activity?force=true", TokenTransfersCsv());
  EXPECT_EQ(forced.body["alreadyImported"], false);
  EXPECT_EQ(Count(kWallet), 2);
}

TEST_F(ActivityUploadTest, OwnNdjsonKeepsItsRulesAndIsIdempotentToo) {
  std::string line = std::string(R"({"wallet":")") + kWallet +
                     R"(","project":"usdc","chainId":1,"timestamp":"2025-12-01T10:00:00Z"})";
  std::string body = line + "\n" + R"({"wallet":")" + kWallet +
                     R"(","project":"nope","chainId":1,"timestamp":"2025-12-01T10:00:00Z"})" + "\n";
  Reply r = Upload("/admin/v1/activity", body, "application/x-ndjson");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["imported"], 1);
  EXPECT_EQ(r.body["rejected"], 1);  // unknown slug: still a rejected line
  EXPECT_EQ(r.body["shape"], "adserver");
  Reply gz = Upload("/admin/v1/activity", Gzip(body), "application/x-ndjson", "gzip");
  EXPECT_EQ(gz.body["alreadyImported"], true) << gz.raw;
  EXPECT_EQ(Count(kWallet), 1);
}

TEST_F(ActivityUploadTest, MappedColumnsAndChainFromTheQuery) {
  std::string csv = std::string("sender,pool,day\n") + kWallet + "," + kUsdc + ",2025-12-20\n";
  Reply r = Upload(
      "/admin/v1/activity?map=wallet%3Dsender&map=contract=pool&map=time=day&chain_id=1", csv);
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["interactions"], 1);
  EXPECT_EQ(Count(kWallet), 1);
  Reply unmapped = Upload("/admin/v1/activity", std::string("sender,pool\n") + kWallet + ",x\n");
  EXPECT_EQ(unmapped.status, 400);
  EXPECT_EQ(Fields(unmapped), std::vector<std::string>{"map"});
  Reply missing = Upload("/admin/v1/activity?map=wallet=nobody", csv);
  EXPECT_EQ(Fields(missing), std::vector<std::string>{"map"});
}

TEST_F(ActivityUploadTest, BadParametersAndBodiesAreClearErrors) {
  Reply bad = Upload("/admin/v1/activity?map=colour=x&chain_id=-1&foo=1", "a\n");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Fields(bad), (std::vector<std::string>{"map", "chain_id", "foo"}));
  Reply not_gzip = Upload("/admin/v1/activity", TokenTransfersCsv(), "text/csv", "gzip");
  EXPECT_EQ(not_gzip.status, 400);
  EXPECT_EQ(Fields(not_gzip), std::vector<std::string>{"body"});
  Reply corrupt = Upload("/admin/v1/activity", Gzip(TokenTransfersCsv()).substr(0, 30));
  EXPECT_EQ(corrupt.status, 400);
  EXPECT_EQ(Fields(corrupt), std::vector<std::string>{"body"});
  Reply bomb = Upload("/admin/v1/activity", Gzip(TokenTransfersCsv() + std::string(2 << 20, '\n')));
  EXPECT_EQ(bomb.status, 413) << bomb.raw;
  EXPECT_EQ(Fields(bomb), std::vector<std::string>{"body"});
  EXPECT_EQ(Upload("/admin/v1/activity", "x", "text/csv", "br").status, 415);
  EXPECT_EQ(Upload("/admin/v1/activity", "x", "multipart/form-data").status, 415);
  Reply empty = Upload("/admin/v1/activity", "");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(Count(kWallet), 0);
}

TEST_F(AdminApiTest, ReloadAndNotFoundMapping) {
  Reply reload = Call(Method::kPost, "/admin/v1/reload", "", "");
  EXPECT_EQ(reload.status, 200);
  EXPECT_EQ(reload.body, Json({{"ok", true}}));
  for (const char* path : {"/admin/v1/publishers/77", "/admin/v1/communities/77",
                           "/admin/v1/campaigns/77", "/admin/v1/ads/77", "/admin/v1/ads/abc",
                           "/admin/v1/campaigns/-1", "/admin/v1/projects/77"}) {
    Reply r = Get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_TRUE(r.body["error"].is_string()) << path;
  }
}

}  // namespace
}  // namespace adserver::admin
