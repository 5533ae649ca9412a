#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace adserver::identity {

// 13 months (395 days) in seconds: the longest cookie lifetime and the default retention.
inline constexpr int64_t kThirteenMonthsSeconds = 395LL * 86400;

struct IdentityOptions {
  // Name of the identity cookie of /v1/ads; the partitioned (CHIPS) twin is named
  // `<cookie_name>_p`.
  std::string cookie_name = "adserver_id";
  // Max-Age of both cookies, seconds (at most 13 months). A sealed value older than this
  // (sealing time is inside it) is no identity even if the browser still sends it.
  int64_t cookie_max_age_seconds = kThirteenMonthsSeconds;
  // Identities and wallet links not seen for this long are forgotten (background sweep; they
  // are treated as unknown from that moment on, before the sweep runs).
  int64_t retention_seconds = kThirteenMonthsSeconds;
  // Key ring text: entries `<id>:<64 hex chars>` (id 1..255) separated by commas or new lines;
  // the first entry is the active (sealing) key, the others are still accepted. A secret:
  // comes from ADSERVER_IDENTITY_KEYS or ADSERVER_IDENTITY_KEYS_FILE, never logged. Empty =
  // a random key for this process only (cookies do not survive a restart).
  std::string keys;
  // How often changed identities are written to the store (write-behind batch interval).
  std::chrono::milliseconds flush_interval{1000};
  // How often the retention sweep runs.
  std::chrono::milliseconds sweep_interval{3'600'000};
};

}  // namespace adserver::identity
