// Issue 16: every admin route x every role. The routes come from a router holding every admin
// API, so a route added without a row here fails RouteTableCoversEveryAdminRoute.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "admin/accounts_admin.h"
#include "admin/admin_api.h"
#include "admin/advertiser_events_admin.h"
#include "admin/authenticator.h"
#include "admin/events_admin.h"
#include "admin/identity_admin.h"
#include "admin/reports_admin.h"
#include "common/password.h"
#include "common/published.h"
#include "http/router.h"
#include "identity/identity_service.h"
#include "ingest/snapshot_publisher.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_advertiser_events_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_identity_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::admin {
namespace {

using Json = nlohmann::json;
using http::Method;

constexpr char kToken[] = "test-admin-token-0123456789";
constexpr int64_t kNow = 1'767'225'600;
constexpr char kWallet[] = "0x1111111111111111111111111111111111111111";

// The callers of every row: the operator token, a publisher user of publisher 1 ("A"), an
// advertiser user of community 1 ("X"), and users of another tenant (publisher 2, community 2).
enum Caller { kOperator, kPublisherA, kAdvertiserX, kPublisherB, kAdvertiserY, kCallers };
constexpr const char* kCallerNames[] = {"operator", "publisher A", "advertiser X", "publisher B",
                                        "advertiser Y"};

// Expected outcome per caller: 'O' 2xx, 'F' 403, 'N' 404, 'B' 400, 'P' past the gate (any
// status but 401/403/404: the body decides).
struct Row {
  Method method;
  std::string pattern;  // as registered
  std::string target;   // the request, naming publisher 1 / community 1 objects
  std::string body;
  std::string expected;  // one character per Caller
  std::string content_type = "application/json";
};

Json CampaignBody(int64_t community) {
  return Json{{"communityId", community},
              {"name", "Launch"},
              {"status", "active"},
              {"pricing", {{"model", "CPM"}, {"bid", 12.5}}},
              {"targeting", {{"projects", {"uniswap"}}}}};
}

Json AdBody(int64_t campaign) {
  return Json{{"campaignId", campaign}, {"headline", "Swap smarter"},
              {"content", "Low fees"},  {"ctaUrl", "https://app.example/swap"},
              {"ctaLabel", "Swap now"}, {"images", {{"LANDSCAPE", "https://cdn.example/l.png"}}}};
}

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {Method::kPost, "/admin/v1/publishers", "/admin/v1/publishers",
       R"({"name":"New","allowedOrigins":["https://n.example"]})", "OFFFF"},
      {Method::kGet, "/admin/v1/publishers", "/admin/v1/publishers", "", "OOFOF"},
      {Method::kGet, "/admin/v1/publishers/{id}", "/admin/v1/publishers/1", "", "OONNN"},
      {Method::kPatch, "/admin/v1/publishers/{id}", "/admin/v1/publishers/1",
       R"({"name":"Renamed"})", "OOFNF"},
      {Method::kDelete, "/admin/v1/publishers/{id}", "/admin/v1/publishers/3", "", "OFFFF"},
      {Method::kPost, "/admin/v1/publishers/{id}/keys", "/admin/v1/publishers/1/keys", "{}",
       "OOFNF"},
      {Method::kGet, "/admin/v1/publishers/{id}/keys", "/admin/v1/publishers/1/keys", "", "OONNN"},
      {Method::kDelete, "/admin/v1/publishers/{id}/keys/{keyId}", "/admin/v1/publishers/1/keys/1",
       "", "OOFNF"},
      {Method::kPost, "/admin/v1/communities", "/admin/v1/communities",
       R"({"name":"New","logoUrl":"https://cdn.example/n.png"})", "OFFFF"},
      {Method::kGet, "/admin/v1/communities", "/admin/v1/communities", "", "OOOOO"},
      {Method::kGet, "/admin/v1/communities/{id}", "/admin/v1/communities/1", "", "OOOON"},
      {Method::kPatch, "/admin/v1/communities/{id}", "/admin/v1/communities/1", R"({"name":"X2"})",
       "OFOFN"},
      {Method::kDelete, "/admin/v1/communities/{id}", "/admin/v1/communities/3", "", "OFFFF"},
      {Method::kPost, "/admin/v1/communities/{id}/keys", "/admin/v1/communities/1/keys", "{}",
       "OFOFN"},
      {Method::kGet, "/admin/v1/communities/{id}/keys", "/admin/v1/communities/1/keys", "",
       "ONONN"},
      {Method::kDelete, "/admin/v1/communities/{id}/keys/{keyId}", "/admin/v1/communities/1/keys/1",
       "", "OFOFN"},
      {Method::kPost, "/admin/v1/projects", "/admin/v1/projects",
       R"({"slug":"curve","name":"Curve"})", "OFFFF"},
      {Method::kPost, "/admin/v1/projects/import", "/admin/v1/projects/import", "{}", "PFFFF"},
      {Method::kGet, "/admin/v1/projects", "/admin/v1/projects", "", "OOOOO"},
      {Method::kGet, "/admin/v1/projects/{id}", "/admin/v1/projects/1", "", "OOOOO"},
      {Method::kPatch, "/admin/v1/projects/{id}", "/admin/v1/projects/1", R"({"name":"U"})",
       "OFFFF"},
      {Method::kDelete, "/admin/v1/projects/{id}", "/admin/v1/projects/2", "", "OFFFF"},
      // Issue 39: a community asks an operator to verify a project as its own (an operator
      // names the community: without one, 400).
      {Method::kPost, "/admin/v1/projects/{id}/ownership-requests",
       "/admin/v1/projects/2/ownership-requests", "{}", "BFOFO"},
      {Method::kDelete, "/admin/v1/projects/{id}/ownership-requests/{communityId}",
       "/admin/v1/projects/1/ownership-requests/1", "", "OFOFN"},
      {Method::kGet, "/admin/v1/ownership-requests", "/admin/v1/ownership-requests", "", "OFOFO"},
      {Method::kPost, "/admin/v1/campaigns", "/admin/v1/campaigns", CampaignBody(1).dump(),
       "OFOFB"},
      {Method::kGet, "/admin/v1/campaigns", "/admin/v1/campaigns", "", "OFOFO"},
      {Method::kGet, "/admin/v1/campaigns/{id}", "/admin/v1/campaigns/1", "", "ONONN"},
      {Method::kPatch, "/admin/v1/campaigns/{id}", "/admin/v1/campaigns/1", R"({"name":"C"})",
       "OFOFN"},
      {Method::kDelete, "/admin/v1/campaigns/{id}", "/admin/v1/campaigns/3", "", "OFOFN"},
      {Method::kPost, "/admin/v1/ads", "/admin/v1/ads", AdBody(1).dump(), "OFOFB"},
      {Method::kGet, "/admin/v1/ads", "/admin/v1/ads", "", "OFOFO"},
      {Method::kGet, "/admin/v1/ads/{id}", "/admin/v1/ads/1", "", "ONONN"},
      {Method::kPatch, "/admin/v1/ads/{id}", "/admin/v1/ads/1", R"({"headline":"H"})", "OFOFN"},
      {Method::kDelete, "/admin/v1/ads/{id}", "/admin/v1/ads/1", "", "OFOFN"},
      {Method::kPost, "/admin/v1/activity", "/admin/v1/activity",
       std::string(R"({"wallet":")") + kWallet + R"(","project":"uniswap","chainId":1})", "PFFFF",
       "application/x-ndjson"},
      {Method::kGet, "/admin/v1/activity/{wallet}", std::string("/admin/v1/activity/") + kWallet,
       "", "ONNNN"},
      {Method::kPost, "/admin/v1/reload", "/admin/v1/reload", "", "OFFFF"},
      {Method::kGet, "/admin/v1/clicks", "/admin/v1/clicks?campaignId=1", "", "OOOON"},
      {Method::kGet, "/admin/v1/conversions", "/admin/v1/conversions?campaignId=1", "", "OOOON"},
      {Method::kGet, "/admin/v1/campaigns/{id}/stats", "/admin/v1/campaigns/1/stats", "", "ONONN"},
      {Method::kGet, "/admin/v1/events", "/admin/v1/events?communityId=1", "", "OFOFN"},
      {Method::kGet, "/admin/v1/events/counts", "/admin/v1/events/counts", "", "OFOFO"},
      {Method::kGet, "/admin/v1/identities/by-wallet/{address}",
       std::string("/admin/v1/identities/by-wallet/") + kWallet, "", "ONNNN"},
      {Method::kDelete, "/admin/v1/identities/by-wallet/{address}",
       std::string("/admin/v1/identities/by-wallet/") + kWallet, "", "OFFFF"},
      {Method::kPost, "/admin/v1/users", "/admin/v1/users",
       R"({"email":"new@example.com","password":"0123456789ab","role":"advertiser","communityId":1})",
       "OFFFF"},
      {Method::kGet, "/admin/v1/users", "/admin/v1/users", "", "OFFFF"},
      {Method::kGet, "/admin/v1/users/{id}", "/admin/v1/users/1", "", "ONNNN"},
      {Method::kPatch, "/admin/v1/users/{id}", "/admin/v1/users/1",
       R"({"email":"renamed@example.com"})", "OFFFF"},
      {Method::kDelete, "/admin/v1/users/{id}", "/admin/v1/users/5", "", "OFFFF"},
      {Method::kPost, "/admin/v1/tokens", "/admin/v1/tokens", R"({"userId":1})", "OOFFF"},
      {Method::kGet, "/admin/v1/tokens", "/admin/v1/tokens", "", "OOOOO"},
      {Method::kDelete, "/admin/v1/tokens/{id}", "/admin/v1/tokens/5", "", "OONNN"},
      {Method::kGet, "/admin/v1/reports", "/admin/v1/reports?publisherId=1", "", "OOONO"},
      {Method::kGet, "/admin/v1/reports/ab", "/admin/v1/reports/ab?publisherId=1", "", "PPPNP"},
  };
  return rows;
}

// Every admin API on one SQLite file with publishers 1-3, communities 1-3, projects uniswap (1)
// and aave (2), campaigns 1 (community 1), 2 (community 2), 3 (community 1, no ads), ads 1
// (campaign 1) and 2 (campaign 2), a key per publisher 1/2 and community 1/2, users 1-4 (one
// per non-operator caller) and 5 (spare), tokens 1-4 (theirs) and 5 (user 1's second).
class World {
 public:
  // Opens every store on `db`; `tokens` are the secrets of users 1-4 when `db` was seeded.
  explicit World(const std::string& db, std::vector<std::string> tokens = {})
      : tokens_(std::move(tokens)) {
    inventory_ = Must(store::SqliteStore::Open(db));
    accounts_ = Must(store::SqliteAccountStore::Open(db));
    events_ = Must(store::SqliteEventsStore::Open(db));
    advertiser_events_ = Must(store::SqliteAdvertiserEventsStore::Open(db));
    reports_ = Must(store::SqliteReportStore::Open(db));
    identity_store_ = Must(store::SqliteIdentityStore::Open(db));
    identity::IdentityOptions identity_options;
    identity_options.keys = "1:" + RandomHex(32);
    identities_ =
        Must(identity::IdentityService::Create(identity_store_.get(), clock_, identity_options));
    snapshots_ = std::make_unique<ingest::SnapshotPublisher>(*inventory_, *inventory_, catalogs_,
                                                             activity_, ingest::SnapshotOptions{});
    AdminOptions options{.token = kToken};
    options.password_hash = MinimalPasswordHashOptionsForTest();
    auth_ = std::make_unique<Authenticator>(options, accounts_.get(), clock_);
    admin_ =
        std::make_unique<AdminApi>(*inventory_, *inventory_, *snapshots_, clock_, options, *auth_);
    accounts_api_ = std::make_unique<AccountsAdminApi>(*accounts_, *inventory_, *auth_);
    events_api_ = std::make_unique<EventsAdminApi>(*events_, *inventory_, *auth_);
    advertiser_events_api_ =
        std::make_unique<AdvertiserEventsAdminApi>(*advertiser_events_, *inventory_, *auth_);
    identity_api_ = std::make_unique<IdentityAdminApi>(*identities_, *auth_);
    reports_api_ = std::make_unique<ReportsAdminApi>(*reports_, *inventory_, clock_, *auth_);
    admin_->RegisterRoutes(router_);
    accounts_api_->RegisterRoutes(router_);
    events_api_->RegisterRoutes(router_);
    advertiser_events_api_->RegisterRoutes(router_);
    identity_api_->RegisterRoutes(router_);
    reports_api_->RegisterRoutes(router_);
  }

  void Seed() {
    for (const char* name : {"A", "B", "C"}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/publishers",
                  Json{{"name", name}, {"allowedOrigins", {"https://a.example"}}}.dump()),
             201);
    }
    for (const char* name : {"X", "Y", "Z"}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/communities",
                  Json{{"name", name}, {"logoUrl", "https://cdn.example/l.png"}}.dump()),
             201);
    }
    for (const char* slug : {"uniswap", "aave"}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/projects",
                  Json{{"slug", slug}, {"name", slug}}.dump()),
             201);
    }
    for (int community : {1, 2, 1}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/campaigns", CampaignBody(community).dump()),
             201);
    }
    Expect(Call(kOperator, Method::kPost, "/admin/v1/projects/1/ownership-requests",
                Json{{"communityId", 1}, {"note", "our contracts"}}.dump()),
           201);
    for (int campaign : {1, 2}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/ads", AdBody(campaign).dump()), 201);
    }
    for (int id : {1, 2}) {
      Expect(Call(kOperator, Method::kPost, "/admin/v1/publishers/" + std::to_string(id) + "/keys",
                  "{}"),
             201);
      Expect(Call(kOperator, Method::kPost, "/admin/v1/communities/" + std::to_string(id) + "/keys",
                  "{}"),
             201);
    }
    const std::pair<const char*, Json> users[] = {
        {"pa@example.com", Json{{"role", "publisher"}, {"publisherId", 1}}},
        {"ax@example.com", Json{{"role", "advertiser"}, {"communityId", 1}}},
        {"pb@example.com", Json{{"role", "publisher"}, {"publisherId", 2}}},
        {"ay@example.com", Json{{"role", "advertiser"}, {"communityId", 2}}},
        {"spare@example.com", Json{{"role", "advertiser"}, {"communityId", 1}}}};
    for (const auto& [email, fields] : users) {
      Json body = fields;
      body["email"] = email;
      body["password"] = "0123456789ab";
      Expect(Call(kOperator, Method::kPost, "/admin/v1/users", body.dump()), 201);
    }
    for (int user : {1, 2, 3, 4, 1}) {
      Reply r = Call(kOperator, Method::kPost, "/admin/v1/tokens", Json{{"userId", user}}.dump());
      Expect(r, 201);
      Json body = Json::parse(r.body);
      if (tokens_.size() < 4) tokens_.push_back(body["token"].get<std::string>());
    }
  }

  struct Reply {
    int status = 0;
    std::string body;
  };

  Reply Call(Caller caller, Method method, const std::string& target, const std::string& body,
             const std::string& content_type = "application/json") {
    http::Request request;
    request.method = method;
    request.target = target;
    size_t q = target.find('?');
    request.path = std::string_view(target).substr(0, q);
    if (q != std::string::npos) request.query = std::string_view(target).substr(q + 1);
    std::string authorization =
        "Bearer " + (caller == kOperator ? std::string(kToken) : tokens_.at(caller - 1));
    request.headers.push_back({"Authorization", authorization});
    if (!body.empty()) request.headers.push_back({"Content-Type", content_type});
    request.body = body;
    http::Router::Match match = router_.Find(request);
    if (match.handler == nullptr) return Reply{match.status, "no route"};
    http::Response response = (*match.handler)(request);
    return Reply{response.status, response.body};
  }

  const http::Router& router() const { return router_; }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  template <typename T>
  static T Must(Result<T> result) {
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return std::move(result).value();
  }
  static void Expect(const Reply& r, int status) { ASSERT_EQ(r.status, status) << r.body; }

  FakeClock clock_{kNow * 1'000'000};
  std::unique_ptr<store::SqliteStore> inventory_;
  std::unique_ptr<store::SqliteAccountStore> accounts_;
  std::unique_ptr<store::SqliteEventsStore> events_;
  std::unique_ptr<store::SqliteAdvertiserEventsStore> advertiser_events_;
  std::unique_ptr<store::SqliteReportStore> reports_;
  std::unique_ptr<store::SqliteIdentityStore> identity_store_;
  std::unique_ptr<identity::IdentityService> identities_;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
  std::unique_ptr<ingest::SnapshotPublisher> snapshots_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<AccountsAdminApi> accounts_api_;
  std::unique_ptr<EventsAdminApi> events_api_;
  std::unique_ptr<AdvertiserEventsAdminApi> advertiser_events_api_;
  std::unique_ptr<IdentityAdminApi> identity_api_;
  std::unique_ptr<ReportsAdminApi> reports_api_;
  http::Router router_;
  std::vector<std::string> tokens_;  // of users 1-4 (callers kPublisherA..kAdvertiserY)
};

// One seeded database, copied for each case (seeding through the API takes longer than the
// case itself). Closing the seeding World checkpoints the WAL into the file.
struct Seeded {
  testing::TempDir dir;
  std::vector<std::string> tokens;
};
const Seeded& Template() {
  static const Seeded* seeded = [] {
    auto* s = new Seeded;
    World world(s->dir.File("ads.db"));
    world.Seed();
    s->tokens = world.tokens();
    return s;
  }();
  return *seeded;
}

bool Matches(char expected, int status) {
  switch (expected) {
    case 'O':
      return status >= 200 && status < 300;
    case 'F':
      return status == 403;
    case 'N':
      return status == 404;
    case 'B':
      return status == 400;
    case 'P':
      return status != 401 && status != 403 && status != 404;
  }
  return false;
}

TEST(AdminScopeTableTest, RouteTableCoversEveryAdminRoute) {
  testing::TempDir dir;
  World world(dir.File("ads.db"));
  std::set<std::pair<Method, std::string>> in_table;
  for (const Row& row : Rows()) {
    ASSERT_EQ(row.expected.size(), size_t{kCallers}) << row.pattern;
    EXPECT_TRUE(in_table.insert({row.method, row.pattern}).second) << "twice: " << row.pattern;
  }
  std::set<std::pair<Method, std::string>> registered;
  for (const http::Router::RouteInfo& route : world.router().Routes()) {
    if (!route.pattern.starts_with("/admin/")) continue;
    registered.insert({route.method, route.pattern});
    EXPECT_TRUE(in_table.contains({route.method, route.pattern}))
        << "admin route without a scope row in this table: " << http::MethodName(route.method)
        << " " << route.pattern;
  }
  for (const Row& row : Rows()) {
    EXPECT_TRUE(registered.contains({row.method, row.pattern}))
        << "row for a route that is not registered: " << row.pattern;
  }
}

TEST(AdminScopeTableTest, EachRouteAnswersEachRoleAsItsScopeSays) {
  for (const Row& row : Rows()) {
    for (int caller = 0; caller < kCallers; ++caller) {
      // A fresh copy per call: a successful write must not change the next caller's case.
      const Seeded& seeded = Template();
      ASSERT_EQ(seeded.tokens.size(), 4u);
      testing::TempDir dir;
      std::filesystem::copy_file(seeded.dir.File("ads.db"), dir.File("ads.db"));
      World world(dir.File("ads.db"), seeded.tokens);
      World::Reply r = world.Call(static_cast<Caller>(caller), row.method, row.target, row.body,
                                  row.content_type);
      EXPECT_TRUE(Matches(row.expected[caller], r.status))
          << http::MethodName(row.method) << " " << row.target << " as " << kCallerNames[caller]
          << ": expected '" << row.expected[caller] << "', got " << r.status << " "
          << r.body.substr(0, 200);
    }
  }
}

TEST(AdminScopeTableTest, WithoutCredentialsEveryAdminRouteIs401) {
  testing::TempDir dir;
  World world(dir.File("ads.db"));
  world.Seed();
  for (const Row& row : Rows()) {
    http::Request request;
    request.method = row.method;
    request.target = row.target;
    request.path = std::string_view(row.target).substr(0, row.target.find('?'));
    http::Router::Match match = world.router().Find(request);
    ASSERT_NE(match.handler, nullptr) << row.target;
    EXPECT_EQ((*match.handler)(request).status, 401) << row.target;
  }
}

}  // namespace
}  // namespace adserver::admin
