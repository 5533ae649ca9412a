#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace adserver::serve {

struct ServeOptions {
  // Where this server is reached from the internet, e.g. "https://ads.example.com" (config key
  // http.public_url, ADSERVER_PUBLIC_URL): live keys' ads link to {public_url}/v1/click/{token}.
  // Never taken from a request's Host header. Empty: `serve` uses http://<listen address> and
  // warns at start-up.
  std::string public_url;
  // Longest accepted adUnitId, in bytes.
  size_t max_ad_unit_id_bytes = 256;
  // Longest accepted localId (earlier variant), in bytes. At least the longest localId the
  // server issues (identity::MaxTokenChars(identity.max_wallets): 1688 for 50 wallets).
  size_t max_local_id_bytes = 2048;
  // Seed of the per-thread tie-break RNGs (thread i uses seed + i), so runs are reproducible.
  uint64_t rng_seed = 42;
  // Access-Control-Max-Age of preflight answers, seconds.
  int cors_max_age_seconds = 600;
};

}  // namespace adserver::serve
