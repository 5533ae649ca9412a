#pragma once

#include <ostream>
#include <string>

#include "common/clock.h"
#include "common/password.h"
#include "common/status.h"
#include "http/router.h"
#include "store/account_store.h"
#include "store/store.h"

namespace adserver::app {

struct DemoKeys {
  std::string live_key;
  std::string test_key;
  // A synthetic wallet that gets an ad from the demo campaigns.
  std::string wallet;
};

// Seeds a demo dataset into an empty store: a publisher, communities, real mainnet projects
// (Uniswap, Aave, Lido, USDC, ...), campaigns targeting them with ads in every format, and
// `wallets` synthetic wallets with activity (deterministic from `seed`). When the store already
// holds the demo publisher, only mints a fresh live and test key for it (keys are stored
// hashed, so earlier ones can't be shown again). `base_url` ("http://127.0.0.1:8080") is where
// the demo's creative images are served from.
Result<DemoKeys> SeedDemo(store::Store& store, const Clock& clock, const std::string& base_url,
                          int wallets = 3000, uint64_t seed = 7);

// Serves the demo's creative images: GET /demo/creatives/{name} (SVG, generated).
void RegisterDemoCreatives(http::Router& router);

// The demo's operator for the console (issue 16): kDemoOperatorEmail with a fresh random
// password on every --demo start (passwords are stored hashed, so an earlier one cannot be shown
// again). Creates the user, or sets the new password of the existing one.
inline constexpr char kDemoOperatorEmail[] = "operator@demo.adserver.local";
Result<std::string> SeedDemoOperator(store::AccountStore& accounts, const Clock& clock,
                                     const PasswordHashOptions& hashing = {});

// Prints the keys and working curl commands for both API variants, and, when
// `operator_password` is not empty, the console URL with the demo operator's sign-in.
void PrintDemoBanner(std::ostream& out, const DemoKeys& keys, const std::string& base_url,
                     const std::string& operator_password = "");

}  // namespace adserver::app
