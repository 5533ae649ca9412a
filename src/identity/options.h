#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace adserver::identity {

// 13 months (395 days) in seconds: the longest cookie lifetime and the default retention.
inline constexpr int64_t kThirteenMonthsSeconds = 395LL * 86400;

// At most this many wallets per identity (the most recently presented are kept).
inline constexpr size_t kMaxWalletsPerIdentity = 50;

// Length of the longest token (cookie value or localId) sealed with `max_wallets` wallets:
// base64url without padding of 1 + 24 + 16 + 8 + 1 + 24 * n + 16 bytes.
constexpr size_t MaxTokenChars(size_t max_wallets) {
  size_t bytes = 1 + 24 + 16 + 8 + 1 + 24 * max_wallets + 16;
  return bytes / 3 * 4 + (bytes % 3 == 0 ? 0 : bytes % 3 + 1);
}

struct IdentityOptions {
  // Name of the identity cookie of /v1/ads; the partitioned (CHIPS) twin is named
  // `<cookie_name>_p`.
  std::string cookie_name = "adserver_id";
  // Max-Age of both cookies, seconds (at most 13 months). A sealed value older than this
  // (sealing time is inside it) is no identity even if the browser still sends it.
  int64_t cookie_max_age_seconds = kThirteenMonthsSeconds;
  // A cookie whose wallets did not change is re-sealed (sliding Max-Age, refreshed link
  // times) only once it is older than this; 0 = on every consented request.
  int64_t cookie_refresh_seconds = 86400;
  // Wallet links not presented for this long are dropped when a token is opened; a localId
  // is valid this long after it was (re-)issued; erasures are remembered this long.
  int64_t retention_seconds = kThirteenMonthsSeconds;
  // Most wallets one identity keeps (1..50); bounds the token size (MaxTokenChars).
  size_t max_wallets = kMaxWalletsPerIdentity;
  // Key ring text: entries `<id>:<64 hex chars>` (id 1..255) separated by commas or new lines;
  // the first entry is the active (sealing) key, the others are still accepted. A secret:
  // comes from ADSERVER_IDENTITY_KEYS or ADSERVER_IDENTITY_KEYS_FILE, never logged. Empty =
  // a random key for this process only (cookies do not survive a restart).
  std::string keys;
  // How often the erasure list is synchronised with the store (erasures made by the CLI or
  // another process on the same database become effective within this interval).
  std::chrono::milliseconds flush_interval{1000};
  // How often erasures older than the retention period are pruned.
  std::chrono::milliseconds sweep_interval{3'600'000};
};

}  // namespace adserver::identity
