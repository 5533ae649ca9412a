#pragma once

// A running adserver with a known dataset, built through the real admin API over HTTP.

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "integration/server_process.h"
#include "support/http_client.h"

namespace adserver::testing {

// Wallets of the dataset and what they did (see fixture.cc for the whole story).
struct FixtureWallets {
  // Used Uniswap yesterday → Aave campaign (CPM 10).
  std::string uniswap = "0x1111111111111111111111111111111111111111";
  // Used Aave → Lido campaign, whose ad content is exactly 400 characters (current only).
  std::string aave = "0x2222222222222222222222222222222222222222";
  // Used Aave and Lido → excluded from the Lido campaign → no fill.
  std::string aave_and_lido = "0x3333333333333333333333333333333333333333";
  // Used USDC on Base (8453) → the campaign of the "Blocked Co" community (chains [8453]).
  std::string usdc_base = "0x4444444444444444444444444444444444444444";
  // Used USDC on mainnet only → chain filter → no fill.
  std::string usdc_mainnet = "0x5555555555555555555555555555555555555555";
  // Never seen.
  std::string unknown = "0x6666666666666666666666666666666666666666";
  // Used Uniswap 100 days ago (campaign recency is 30 days) → no fill.
  std::string uniswap_stale = "0x7777777777777777777777777777777777777777";
};

struct FixtureKeys {
  std::string open_live;     // publisher without allowed origins
  std::string open_test;     // test key of the same publisher
  std::string revoked;       // revoked key of the same publisher
  std::string strict;        // publisher allowing only https://news.example
  std::string blocking;      // publisher blocking the "Blocked Co" community
  int64_t open_publisher = 0;
};

// A [traffic] section turning the invalid-traffic checks off (no user agent needed, no
// too-fast window, no rate limits), for tests about other things that click or post events in
// quick succession from one address without a User-Agent (invalid_traffic_test covers them).
inline constexpr char kTrafficChecksOff[] =
    "[traffic]\nrequire_user_agent = false\nmin_click_delay_ms = 0\n"
    "require_same_user_agent = false\ncheck_click_origin = false\nclick_limits = []\n"
    "event_limits = []\n";

class ServingFixture {
 public:
  // Starts the server (with `options`) and loads the dataset; check ok() / error().
  explicit ServingFixture(ServerProcess::Options options = {});
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  ServerProcess& server() { return *server_; }
  HttpClient Client() { return HttpClient("127.0.0.1", server_->port()); }
  // Admin call with the bearer token; body is JSON.
  HttpResult Admin(const std::string& method, const std::string& target,
                   const nlohmann::json& body = nullptr);

  FixtureKeys keys;
  FixtureWallets wallets;
  int64_t aave_campaign = 0;   // targets uniswap
  int64_t lido_campaign = 0;   // targets aave, excludes lido
  int64_t blocked_campaign = 0;
  int64_t aave_ad = 0;
  int64_t lido_ad = 0;

 private:
  bool Load();
  int64_t Create(const std::string& target, const nlohmann::json& body);
  std::unique_ptr<ServerProcess> server_;
  std::string error_;
};

}  // namespace adserver::testing
