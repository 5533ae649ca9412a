#pragma once

#include <cstddef>
#include <cstdint>

namespace adserver::serve {

struct ServeOptions {
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
