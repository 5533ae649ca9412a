#include "events/wallet_anomalies.h"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace adserver::events {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

int64_t Floor(int64_t now, int64_t seconds) { return now - ((now % seconds) + seconds) % seconds; }

}  // namespace

WalletAnomalies::WalletAnomalies(const WalletAnomalyLimits& limits)
    : limits_(limits),
      entries_(std::bit_ceil(std::max<size_t>(limits.entries, 2))),
      stripes_(std::make_unique<std::mutex[]>(kStripes)) {
  // A per-process seed: which wallets share entries cannot be planned from outside.
  randombytes_buf(seed_.data(), sizeof(seed_));
}

uint64_t WalletAnomalies::KeyOf(const Address& wallet) const {
  uint64_t a, b;
  uint32_t c;
  std::memcpy(&a, wallet.bytes.data(), 8);
  std::memcpy(&b, wallet.bytes.data() + 8, 8);
  std::memcpy(&c, wallet.bytes.data() + 16, 4);
  uint64_t key = Mix(a ^ seed_[0]) ^ Mix(b ^ seed_[1]) * 31 ^ Mix(c + seed_[0] + seed_[1]);
  return key == 0 ? 1 : key;  // 0 marks a free entry
}

WalletAnomalies::Verdict WalletAnomalies::Serve(std::span<const Address> wallets,
                                                int64_t publisher_id, int64_t now) {
  const bool rate_on = limits_.serves_per_minute > 0;
  const bool publishers_on = limits_.max_publishers > 0 && limits_.publishers_seconds > 0;
  if (!rate_on && !publishers_on) return Verdict::kNone;
  const uint64_t publisher_bit = uint64_t{1} << (Mix(static_cast<uint64_t>(publisher_id)) % 64);
  const int64_t minute = Floor(now, 60);
  const int64_t window = publishers_on ? Floor(now, limits_.publishers_seconds) : 0;
  Verdict verdict = Verdict::kNone;
  for (const Address& wallet : wallets) {
    const uint64_t key = KeyOf(wallet);
    // The pair (2i, 2i + 1) shares a stripe.
    const size_t pair = (key & (entries_.size() - 1)) & ~size_t{1};
    std::lock_guard<std::mutex> lock(stripes_[(pair / 2) % kStripes]);
    Entry* entry = entries_[pair].key == key       ? &entries_[pair]
                   : entries_[pair + 1].key == key ? &entries_[pair + 1]
                                                   : nullptr;
    if (entry == nullptr) {
      entry = entries_[pair].last_seen <= entries_[pair + 1].last_seen ? &entries_[pair]
                                                                       : &entries_[pair + 1];
      *entry = Entry{.key = key};
    }
    entry->last_seen = now;
    if (entry->minute != minute) {
      entry->minute = minute;
      entry->serves = 0;
    }
    if (entry->serves < UINT32_MAX) ++entry->serves;
    if (entry->window != window) {
      entry->window = window;
      entry->publishers = 0;
    }
    entry->publishers |= publisher_bit;
    if (verdict != Verdict::kNone) continue;  // every wallet is still counted
    if (rate_on && entry->serves > static_cast<uint64_t>(limits_.serves_per_minute)) {
      verdict = Verdict::kServeRate;
    } else if (publishers_on &&
               std::popcount(entry->publishers) > limits_.max_publishers) {
      verdict = Verdict::kPublishers;
    }
  }
  return verdict;
}

}  // namespace adserver::events
