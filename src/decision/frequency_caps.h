#pragma once

// Per-person frequency-cap counters: impressions of a campaign per (wallet, campaign) in a
// window of H hours that opens at the pair's first impression and closes H hours later (the
// next impression after that opens a new window). Lock-free and bounded: a fixed table of
// 16-byte entries probed linearly over kProbe slots; when those are all taken, the entry whose
// window opened longest ago is evicted, so that pair's count starts again from zero (the cap
// can then be exceeded for an evicted person; size the table for the active audience).
// Thread-safe. Pure: time is passed in (Unix seconds). Not persisted: a restart forgets caps.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "common/address.h"

namespace adserver::decision {

class FrequencyCaps {
 public:
  static constexpr size_t kProbe = 16;
  // `capacity` is rounded up to a power of two (at least kProbe).
  explicit FrequencyCaps(size_t capacity = 1 << 20);
  ~FrequencyCaps();
  FrequencyCaps(const FrequencyCaps&) = delete;
  FrequencyCaps& operator=(const FrequencyCaps&) = delete;

  // Impressions of `campaign_id` to `wallet` in its current window of `hours` (0 if none).
  uint32_t Count(const Address& wallet, int64_t campaign_id, int32_t hours, int64_t now) const;
  // The largest Count over `wallets` (the person is capped by any of their wallets).
  uint32_t MaxCount(std::span<const Address> wallets, int64_t campaign_id, int32_t hours,
                    int64_t now) const;
  // Counts one impression for each wallet.
  void Record(std::span<const Address> wallets, int64_t campaign_id, int32_t hours, int64_t now);
  // Raises the pair's count in its current window to at least `count` (the cluster-wide count,
  // decision/shared_caps.h); opens a window at `now` when none is open. Never lowers it.
  void RaiseTo(const Address& wallet, int64_t campaign_id, int32_t hours, uint32_t count,
               int64_t now);

  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  struct Entry;
  void RecordOne(const Address& wallet, int64_t campaign_id, int32_t hours, int64_t now);
  // The entry of `key` (taken, or evicting the oldest of its probe window).
  Entry* Slot(uint64_t key, int64_t now);
  uint32_t CountKey(uint64_t key, int32_t hours, int64_t now) const;

  size_t mask_;
  std::unique_ptr<Entry[]> entries_;
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace adserver::decision
