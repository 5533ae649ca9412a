#include "events/wallet_anomalies.h"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "common/splitmix64.h"

namespace adserver::events {
namespace {

int64_t Floor(int64_t now, int64_t seconds) { return now - ((now % seconds) + seconds) % seconds; }

}  // namespace

WalletAnomalies::WalletAnomalies(const WalletAnomalyLimits& limits)
    : limits_(limits),
      pairs_(std::bit_ceil(std::max<size_t>(limits.entries, 2)) / 2) {
  // A per-process seed: which wallets share entries cannot be planned from outside.
  randombytes_buf(seed_.data(), sizeof(seed_));
}

uint64_t WalletAnomalies::KeyOf(const Address& wallet) const {
  uint64_t a, b;
  uint32_t c;
  std::memcpy(&a, wallet.bytes.data(), 8);
  std::memcpy(&b, wallet.bytes.data() + 8, 8);
  std::memcpy(&c, wallet.bytes.data() + 16, 4);
  uint64_t key = Fmix64(a ^ seed_[0]) ^ Fmix64(b ^ seed_[1]) * 31 ^ Fmix64(c + seed_[0] + seed_[1]);
  return key == 0 ? 1 : key;  // 0 marks a free entry
}

WalletAnomalies::Verdict WalletAnomalies::Serve(std::span<const Address> wallets,
                                                int64_t publisher_id, int64_t now) {
  const bool rate_on = limits_.serves_per_minute > 0;
  const bool publishers_on = limits_.max_publishers > 0 && limits_.publishers_seconds > 0;
  if (!rate_on && !publishers_on) return Verdict::kNone;
  const uint64_t publisher_bit = uint64_t{1} << (Fmix64(static_cast<uint64_t>(publisher_id)) % 64);
  const auto minute = static_cast<uint32_t>(Floor(now, 60) / 60);
  const auto window =
      publishers_on ? static_cast<uint32_t>(Floor(now, limits_.publishers_seconds) / 60) : 0;
  std::vector<Pair>& pairs = shards_.Local().pairs;
  if (pairs.empty()) pairs.resize(pairs_);
  const size_t mask = pairs_ - 1;
  // Wallets' lines are fetched together first, so that a request's misses overlap.
  constexpr size_t kBatch = 16;
  uint64_t keys[kBatch];
  Verdict verdict = Verdict::kNone;
  for (size_t begin = 0; begin < wallets.size(); begin += kBatch) {
    const size_t n = std::min(kBatch, wallets.size() - begin);
    for (size_t k = 0; k < n; ++k) {
      keys[k] = KeyOf(wallets[begin + k]);
      __builtin_prefetch(&pairs[keys[k] & mask], 1);
    }
    for (size_t k = 0; k < n; ++k) {
      const uint64_t key = keys[k];
      const size_t index = key & mask;
      Pair& pair = pairs[index];
      Entry* entry = pair.entry[0].key == key   ? &pair.entry[0]
                     : pair.entry[1].key == key ? &pair.entry[1]
                                                : nullptr;
      if (entry == nullptr) {
        entry = pair.entry[0].last_seen <= pair.entry[1].last_seen ? &pair.entry[0]
                                                                   : &pair.entry[1];
        *entry = Entry{.key = key};
      }
      entry->last_seen = minute;
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
      } else if (publishers_on && std::popcount(entry->publishers) > limits_.max_publishers) {
        verdict = Verdict::kPublishers;
      }
    }
  }
  return verdict;
}

}  // namespace adserver::events
