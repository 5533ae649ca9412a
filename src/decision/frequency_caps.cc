#include "decision/frequency_caps.h"

#include <algorithm>

namespace adserver::decision {
namespace {

// FNV-1a over the wallet bytes and the campaign id; never 0 (0 marks an empty entry).
uint64_t KeyOf(const Address& wallet, int64_t campaign_id) {
  uint64_t h = 1469598103934665603ULL;
  for (uint8_t b : wallet.bytes) h = (h ^ b) * 1099511628211ULL;
  auto c = static_cast<uint64_t>(campaign_id);
  for (int i = 0; i < 8; ++i) h = (h ^ ((c >> (8 * i)) & 0xff)) * 1099511628211ULL;
  h ^= h >> 29;
  return h == 0 ? 1 : h;
}

// Window start (Unix seconds, 32 bits) and count (32 bits).
uint64_t Pack(int64_t start, uint32_t count) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(start)) << 32) | count;
}
int64_t StartOf(uint64_t v) { return static_cast<int64_t>(v >> 32); }
uint32_t CountOf(uint64_t v) { return static_cast<uint32_t>(v); }

bool Open(uint64_t v, int32_t hours, int64_t now) {
  return CountOf(v) > 0 && now - StartOf(v) < int64_t{hours} * 3600;
}

}  // namespace

struct FrequencyCaps::Entry {
  std::atomic<uint64_t> key{0};
  std::atomic<uint64_t> value{0};
};

FrequencyCaps::FrequencyCaps(size_t capacity) {
  size_t n = kProbe;
  while (n < capacity) n <<= 1;
  mask_ = n - 1;
  entries_ = std::make_unique<Entry[]>(n);
}

FrequencyCaps::~FrequencyCaps() = default;

uint32_t FrequencyCaps::Count(const Address& wallet, int64_t campaign_id, int32_t hours,
                              int64_t now) const {
  uint64_t key = KeyOf(wallet, campaign_id);
  for (size_t i = 0; i < kProbe; ++i) {
    const Entry& e = entries_[(key + i) & mask_];
    if (e.key.load(std::memory_order_acquire) != key) continue;
    uint64_t v = e.value.load(std::memory_order_acquire);
    return Open(v, hours, now) ? CountOf(v) : 0;
  }
  return 0;
}

uint32_t FrequencyCaps::MaxCount(std::span<const Address> wallets, int64_t campaign_id,
                                 int32_t hours, int64_t now) const {
  uint32_t best = 0;
  for (const Address& w : wallets) best = std::max(best, Count(w, campaign_id, hours, now));
  return best;
}

void FrequencyCaps::Record(std::span<const Address> wallets, int64_t campaign_id, int32_t hours,
                           int64_t now) {
  for (const Address& w : wallets) RecordOne(w, campaign_id, hours, now);
}

void FrequencyCaps::RecordOne(const Address& wallet, int64_t campaign_id, int32_t hours,
                              int64_t now) {
  uint64_t key = KeyOf(wallet, campaign_id);
  Entry* target = nullptr;
  Entry* oldest = nullptr;
  for (size_t i = 0; i < kProbe && target == nullptr; ++i) {
    Entry& e = entries_[(key + i) & mask_];
    uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == key) {
      target = &e;
    } else if (k == 0) {
      if (e.key.compare_exchange_strong(k, key, std::memory_order_acq_rel) || k == key) {
        target = &e;
      }
    } else if (oldest == nullptr || StartOf(e.value.load(std::memory_order_relaxed)) <
                                        StartOf(oldest->value.load(std::memory_order_relaxed))) {
      oldest = &e;
    }
  }
  if (target == nullptr) {
    // Probe window full: evict the entry whose window opened first.
    evictions_.fetch_add(1, std::memory_order_relaxed);
    oldest->value.store(Pack(now, 0), std::memory_order_relaxed);
    oldest->key.store(key, std::memory_order_release);
    target = oldest;
  }
  uint64_t v = target->value.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next = Open(v, hours, now) ? Pack(StartOf(v), CountOf(v) + 1) : Pack(now, 1);
    if (target->value.compare_exchange_weak(v, next, std::memory_order_acq_rel)) return;
  }
}

}  // namespace adserver::decision
