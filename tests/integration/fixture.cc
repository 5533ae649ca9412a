#include "integration/fixture.h"

#include <chrono>
#include <ctime>

namespace adserver::testing {
namespace {

std::string Rfc3339DaysAgo(int days) {
  std::time_t t = std::time(nullptr) - static_cast<std::time_t>(days) * 86400;
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Content of exactly 400 characters in spec 2.5 markup.
std::string Content400() {
  std::string s = "**Stake** with Lido. ";
  while (s.size() < 400) s += 'x';
  return s.substr(0, 400);
}

}  // namespace

ServingFixture::ServingFixture(ServerProcess::Options options) {
  server_ = std::make_unique<ServerProcess>(std::move(options));
  if (!server_->Start()) {
    error_ = server_->error();
    return;
  }
  if (!Load() && error_.empty()) error_ = "fixture load failed";
}

HttpResult ServingFixture::Admin(const std::string& method, const std::string& target,
                                 const nlohmann::json& body) {
  HttpClient client = Client();
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", "Bearer " + server_->admin_token()}};
  std::string payload;
  if (!body.is_null()) {
    headers.emplace_back("Content-Type", "application/json");
    payload = body.dump();
  }
  return client.Send(method, target, headers, payload);
}

int64_t ServingFixture::Create(const std::string& target, const nlohmann::json& body) {
  if (!error_.empty()) return 0;
  HttpResult r = Admin("POST", target, body);
  if (r.status != 201) {
    error_ = "POST " + target + " -> " + std::to_string(r.status) + " " + r.body;
    return 0;
  }
  return nlohmann::json::parse(r.body).at("id").get<int64_t>();
}

bool ServingFixture::Load() {
  using nlohmann::json;
  int64_t open = Create("/admin/v1/publishers", {{"name", "Open Publisher"}});
  keys.open_publisher = open;
  int64_t strict = Create("/admin/v1/publishers", {{"name", "Strict Publisher"},
                                                   {"allowedOrigins", {"https://news.example"}}});
  int64_t aave_co = Create("/admin/v1/communities",
                           {{"name", "Aave Co"}, {"logoUrl", "https://cdn.example/aave.png"}});
  int64_t lido_co = Create("/admin/v1/communities",
                           {{"name", "Lido Co"}, {"logoUrl", "https://cdn.example/lido.png"}});
  int64_t blocked_co = Create("/admin/v1/communities",
                              {{"name", "Blocked Co"}, {"logoUrl", "https://cdn.example/b.png"}});
  int64_t blocking = Create("/admin/v1/publishers", {{"name", "Blocking Publisher"},
                                                     {"blockedCommunities", {blocked_co}}});
  if (!error_.empty()) return false;

  auto key = [&](int64_t publisher, bool test) -> json {
    HttpResult r = Admin("POST", "/admin/v1/publishers/" + std::to_string(publisher) + "/keys",
                         {{"test", test}});
    if (r.status != 201) {
      error_ = "key create -> " + std::to_string(r.status) + " " + r.body;
      return json::object();
    }
    return json::parse(r.body);
  };
  keys.open_live = key(open, false).value("key", "");
  keys.open_test = key(open, true).value("key", "");
  json revoked = key(open, false);
  keys.revoked = revoked.value("key", "");
  keys.strict = key(strict, false).value("key", "");
  keys.blocking = key(blocking, false).value("key", "");
  if (!error_.empty()) return false;
  HttpResult rv = Admin("DELETE", "/admin/v1/publishers/" + std::to_string(open) + "/keys/" +
                                      std::to_string(revoked.at("id").get<int64_t>()));
  if (rv.status != 200) error_ = "revoke -> " + std::to_string(rv.status) + " " + rv.body;

  Create("/admin/v1/projects",
         {{"slug", "uniswap"}, {"name", "Uniswap"},
          {"contracts", {{{"chainId", 1}, {"address", "0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD"}}}}});
  Create("/admin/v1/projects",
         {{"slug", "aave"}, {"name", "Aave"},
          {"contracts", {{{"chainId", 1}, {"address", "0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2"}}}}});
  Create("/admin/v1/projects",
         {{"slug", "lido"}, {"name", "Lido"},
          {"contracts", {{{"chainId", 1}, {"address", "0xae7ab96520DE3A18E5e111B5EaAb095312D7fE84"}}}}});
  Create("/admin/v1/projects",
         {{"slug", "usdc"}, {"name", "USD Coin"},
          {"contracts", {{{"chainId", 1}, {"address", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}},
                         {{"chainId", 8453}, {"address", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}}});

  json images = {{"LANDSCAPE", "https://cdn.example/a-landscape.png"},
                 {"LONG_BANNER", "https://cdn.example/a-long.png"},
                 {"SHORT_BANNER", "https://cdn.example/a-short.png"}};
  aave_campaign = Create("/admin/v1/campaigns",
                         {{"communityId", aave_co}, {"name", "Aave for swappers"}, {"status", "active"},
                          {"pricing", {{"model", "CPM"}, {"bid", 10}}},
                          {"targeting", {{"projects", {"uniswap"}}, {"recencyDays", 30}}}});
  aave_ad = Create("/admin/v1/ads", {{"campaignId", aave_campaign},
                                     {"headline", "Earn on Aave"},
                                     {"content", "Supply on **Aave**.\\n* Earn *yield*"},
                                     {"ctaUrl", "https://app.aave.com"},
                                     {"ctaLabel", "Open Aave"},
                                     {"images", images}});
  lido_campaign = Create("/admin/v1/campaigns",
                         {{"communityId", lido_co}, {"name", "Lido for lenders"}, {"status", "active"},
                          {"pricing", {{"model", "CPM"}, {"bid", 5}}},
                          {"targeting", {{"projects", {"aave"}}, {"excludeProjects", {"lido"}}}}});
  lido_ad = Create("/admin/v1/ads", {{"campaignId", lido_campaign},
                                     {"headline", "Stake with Lido"},
                                     {"content", Content400()},
                                     {"ctaUrl", "https://stake.lido.fi"},
                                     {"ctaLabel", "Stake"},
                                     {"images", {{"LANDSCAPE", "https://cdn.example/l.png"}}}});
  blocked_campaign = Create("/admin/v1/campaigns",
                            {{"communityId", blocked_co}, {"name", "Base users"}, {"status", "active"},
                             {"pricing", {{"model", "CPM"}, {"bid", 20}}},
                             {"targeting", {{"projects", {"usdc"}}, {"chains", {8453}}}}});
  Create("/admin/v1/ads", {{"campaignId", blocked_campaign},
                           {"headline", "Bridge to Base"},
                           {"content", "Move USDC to **Base**."},
                           {"ctaUrl", "https://base.example"},
                           {"ctaLabel", "Bridge"},
                           {"images", images}});
  if (!error_.empty()) return false;

  std::string ndjson;
  auto line = [&](const std::string& wallet, const std::string& project, int chain, int days_ago) {
    ndjson += json{{"wallet", wallet}, {"project", project}, {"chainId", chain},
                   {"timestamp", Rfc3339DaysAgo(days_ago)}}.dump() + "\n";
  };
  line(wallets.uniswap, "uniswap", 1, 1);
  line(wallets.aave, "aave", 1, 2);
  line(wallets.aave_and_lido, "aave", 1, 2);
  line(wallets.aave_and_lido, "lido", 1, 50);
  line(wallets.usdc_base, "usdc", 8453, 3);
  line(wallets.usdc_mainnet, "usdc", 1, 3);
  line(wallets.uniswap_stale, "uniswap", 1, 100);
  HttpClient client = Client();
  HttpResult r = client.Send("POST", "/admin/v1/activity",
                             {{"Authorization", "Bearer " + server_->admin_token()},
                              {"Content-Type", "application/x-ndjson"}},
                             ndjson);
  if (r.status != 200 || json::parse(r.body).value("imported", 0) != 7) {
    error_ = "activity import -> " + std::to_string(r.status) + " " + r.body;
    return false;
  }
  return true;
}

}  // namespace adserver::testing
