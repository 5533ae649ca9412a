#pragma once

// Wallet-set anomalies of served impressions (issue 18 item 1): a wallet served more often than
// N times a minute, or under more than M publishers within a window, is a sign of a script or a
// farmed wallet list, and the impression is invalid. Counted per wallet in a table of fixed size
// (two candidate entries per wallet in one cache line, the least recently used one reused), so
// that any number of wallets cannot grow memory; a forgotten wallet is under-counted, never
// wrongly flagged. Each serving thread has its own table (ThreadShards): no lock, no cache line
// shared between cores on the ad path. A connection's requests meet in one thread; a wallet
// whose serves are spread over N threads is under-counted up to N times, never over-counted.
// Thread-safe.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/address.h"
#include "common/thread_shards.h"

namespace adserver::events {

struct WalletAnomalyLimits {
  int64_t serves_per_minute = 120;  // 0 = off
  int64_t max_publishers = 20;      // 0 = off; at most 64
  int64_t publishers_seconds = 3600;
  size_t entries = size_t{1} << 16;  // per serving thread
};

class WalletAnomalies {
 public:
  enum class Verdict : uint8_t { kNone, kServeRate, kPublishers };

  explicit WalletAnomalies(const WalletAnomalyLimits& limits);

  // Counts one serve of each wallet under `publisher_id` at `now` (Unix seconds) and returns the
  // first limit a wallet is over, checking the rate before the publishers.
  Verdict Serve(std::span<const Address> wallets, int64_t publisher_id, int64_t now);

  // Entries of each thread's table.
  size_t entries() const { return pairs_ * 2; }

 private:
  // 32 bytes: a wallet's two candidates share one cache line. Times are in minutes since the
  // epoch (32 bits last beyond the year 10000).
  struct alignas(32) Entry {
    uint64_t key = 0;         // 0 = free
    uint64_t publishers = 0;  // bit (hash of publisher id) % 64 of each publisher served under
    uint32_t last_seen = 0;   // minute of the last serve
    uint32_t minute = 0;      // the minute `serves` counts
    uint32_t window = 0;      // first minute of the window `publishers` covers
    uint32_t serves = 0;
  };
  static_assert(sizeof(Entry) == 32);
  uint64_t KeyOf(const Address& wallet) const;

  const WalletAnomalyLimits limits_;
  std::array<uint64_t, 2> seed_;
  struct alignas(64) Pair {
    Entry entry[2];
  };
  struct Shard {
    std::vector<Pair> pairs;  // made on the thread's first serve
  };
  const size_t pairs_;
  ThreadShards<Shard> shards_;
};

}  // namespace adserver::events
