#include "decision/frequency_caps.h"

#include <algorithm>
#include <cstring>

namespace adserver::decision {
namespace {

// A hash of all 20 wallet bytes and the campaign id (not a byte loop: a 50-wallet person is
// checked for every capped candidate); never 0 (0 marks an empty entry).
uint64_t KeyOf(const Address& wallet, int64_t campaign_id) {
  uint64_t h = HashAddress(wallet, static_cast<uint64_t>(campaign_id) * 0x9E3779B97F4A7C15ULL);
  return h == 0 ? 1 : h;
}

// Batch size of MaxCount's prefetched lookups.
constexpr size_t kBatch = 64;

// Window start (Unix seconds, 32 bits) and count (32 bits).
uint64_t PackWindow(int64_t start, uint32_t count) {
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

uint32_t FrequencyCaps::CountKey(uint64_t key, int32_t hours, int64_t now) const {
  for (size_t i = 0; i < kProbe; ++i) {
    const Entry& e = entries_[(key + i) & mask_];
    uint64_t k = e.key.load(std::memory_order_acquire);
    // Entries are never emptied and a key takes the first empty slot of its probe window, so
    // an empty slot ends the search.
    if (k == 0) return 0;
    if (k != key) continue;
    uint64_t v = e.value.load(std::memory_order_acquire);
    return Open(v, hours, now) ? CountOf(v) : 0;
  }
  return 0;
}

uint32_t FrequencyCaps::Count(const Address& wallet, int64_t campaign_id, int32_t hours,
                              int64_t now) const {
  return CountKey(KeyOf(wallet, campaign_id), hours, now);
}

uint32_t FrequencyCaps::MaxCount(std::span<const Address> wallets, int64_t campaign_id,
                                 int32_t hours, int64_t now) const {
  uint32_t best = 0;
  uint64_t keys[kBatch];
  for (size_t begin = 0; begin < wallets.size(); begin += kBatch) {
    const size_t n = std::min(kBatch, wallets.size() - begin);
    // Every key's first slot is requested before any is read: the misses overlap.
    for (size_t k = 0; k < n; ++k) {
      keys[k] = KeyOf(wallets[begin + k], campaign_id);
      __builtin_prefetch(&entries_[keys[k] & mask_]);
    }
    for (size_t k = 0; k < n; ++k) best = std::max(best, CountKey(keys[k], hours, now));
  }
  return best;
}

void FrequencyCaps::Record(std::span<const Address> wallets, int64_t campaign_id, int32_t hours,
                           int64_t now) {
  for (const Address& w : wallets) RecordOne(w, campaign_id, hours, now);
}

FrequencyCaps::Entry* FrequencyCaps::Slot(uint64_t key, int64_t now) {
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
    oldest->value.store(PackWindow(now, 0), std::memory_order_relaxed);
    oldest->key.store(key, std::memory_order_release);
    target = oldest;
  }
  return target;
}

void FrequencyCaps::RecordOne(const Address& wallet, int64_t campaign_id, int32_t hours,
                              int64_t now) {
  Entry* target = Slot(KeyOf(wallet, campaign_id), now);
  uint64_t v = target->value.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next =
        Open(v, hours, now) ? PackWindow(StartOf(v), CountOf(v) + 1) : PackWindow(now, 1);
    if (target->value.compare_exchange_weak(v, next, std::memory_order_acq_rel)) return;
  }
}

void FrequencyCaps::RaiseTo(const Address& wallet, int64_t campaign_id, int32_t hours,
                            uint32_t count, int64_t now) {
  if (count == 0) return;
  Entry* target = Slot(KeyOf(wallet, campaign_id), now);
  uint64_t v = target->value.load(std::memory_order_relaxed);
  for (;;) {
    const bool open = Open(v, hours, now);
    if (open && CountOf(v) >= count) return;
    uint64_t next = open ? PackWindow(StartOf(v), count) : PackWindow(now, count);
    if (target->value.compare_exchange_weak(v, next, std::memory_order_acq_rel)) return;
  }
}

}  // namespace adserver::decision
