#pragma once

// Wallet-set anomalies of served impressions (issue 18 item 1): a wallet served more often than
// N times a minute, or under more than M publishers within a window, is a sign of a script or a
// farmed wallet list, and the impression is invalid. Counted per wallet in a table of fixed size
// (two candidate entries per wallet, the least recently used one reused), so that any number of
// wallets cannot grow memory; a forgotten wallet is under-counted, never wrongly flagged.
// Thread-safe: entries are guarded by striped mutexes held for a few instructions.

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "common/address.h"

namespace adserver::events {

struct WalletAnomalyLimits {
  int64_t serves_per_minute = 120;  // 0 = off
  int64_t max_publishers = 20;      // 0 = off; at most 64
  int64_t publishers_seconds = 3600;
  size_t entries = size_t{1} << 18;
};

class WalletAnomalies {
 public:
  enum class Verdict : uint8_t { kNone, kServeRate, kPublishers };

  explicit WalletAnomalies(const WalletAnomalyLimits& limits);

  // Counts one serve of each wallet under `publisher_id` at `now` (Unix seconds) and returns the
  // first limit a wallet is over, checking the rate before the publishers.
  Verdict Serve(std::span<const Address> wallets, int64_t publisher_id, int64_t now);

  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t key = 0;  // 0 = free
    int64_t last_seen = 0;
    int64_t minute = 0;  // start of the minute `serves` counts
    int64_t window = 0;  // start of the window `publishers` covers
    uint64_t publishers = 0;  // bit (hash of publisher id) % 64 of each publisher served under
    uint32_t serves = 0;
  };
  static constexpr size_t kStripes = 256;
  uint64_t KeyOf(const Address& wallet) const;

  const WalletAnomalyLimits limits_;
  std::array<uint64_t, 2> seed_;
  std::vector<Entry> entries_;  // guarded by stripes_[(index / 2) % kStripes]
  std::unique_ptr<std::mutex[]> stripes_;
};

}  // namespace adserver::events
