#pragma once

// Records exposures (a live key's ad served to a person, for campaigns with a conversion rule)
// off the request path: the serving thread appends to its own buffer (an uncontended lock,
// no allocation once the buffer has grown) and a background thread writes the buffers to the
// ExposureStore every `flush_interval`, looking up each wallet's prior interactions with the
// campaign's conversion projects there (for the `new`/`returning` kinds). It also expires
// exposures older than the longest conversion window in use: a sweep over the store starts
// once per `expire_interval` and advances `expire_step_records` records per flush, so no
// single write transaction grows with the store.
// Buffers are bounded: beyond `max_pending_per_thread` exposures a thread's new ones are
// dropped and counted (dropped()), never blocking a request. Writes the store refuses as
// Unavailable are retried at the next flush, up to `max_retry_writes`. Thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/address.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/thread_shards.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "store/exposure_store.h"

namespace adserver::events {

struct ExposureRecorderOptions {
  // Exposures are written this often; a conversion's block lands long after its exposure.
  std::chrono::milliseconds flush_interval{500};
  std::chrono::seconds expire_interval{3600};
  // The first sweep starts this long after Start() (a restart may follow a long stop).
  std::chrono::milliseconds first_expiry_after{5000};
  // Records an expiry step visits per flush (one short write transaction each): 8192 every
  // 500 ms sweeps 10 M (wallet, campaign) records in about 10 minutes.
  size_t expire_step_records = 8192;
  size_t max_pending_per_thread = 65536;
  // Wallets buffered per thread at most (an exposure carries up to 50): bounds the buffers'
  // memory (20 bytes each) when requests carry many wallets.
  size_t max_pending_wallets_per_thread = 262144;
  // Exposures are kept this long when no campaign has a longer window (days, at most 30).
  int32_t default_window_days = 14;
  // A (wallet, campaign) exposed again within this many seconds of its last written exposure
  // is not written again: attribution windows are days, clicks are found by person
  // (events/attribution.h), and a page reloaded every few seconds would otherwise cost a store
  // write per load. Remembered in a 2-way set-associative table of `max_recent` slots (rounded
  // up to a power of two, at least 2; 16 bytes each, allocated once): a pair whose slots other
  // pairs took since is written again, which costs a write, never an exposure.
  int64_t coalesce_seconds = 600;
  size_t max_recent = size_t{1} << 18;
  // Writes the store could not take (Unavailable: PostgreSQL down in cluster mode, a full LMDB
  // map) are kept for the next flush, up to this many; beyond, they are dropped and counted.
  size_t max_retry_writes = 262144;
};

class ExposureRecorder {
 public:
  // Every argument must outlive the recorder.
  ExposureRecorder(store::ExposureStore& store, const Published<decision::Catalog>& catalogs,
                   const Published<decision::ActivityIndex>& activity, const Clock& clock,
                   ExposureRecorderOptions options = {});
  ~ExposureRecorder();
  ExposureRecorder(const ExposureRecorder&) = delete;
  ExposureRecorder& operator=(const ExposureRecorder&) = delete;

  // One exposure of `campaign_id` to every wallet of `wallets` (at most 50). Request path.
  void Record(int64_t campaign_id, const store::ExposureEntry& entry,
              std::span<const Address> wallets);

  void Start();
  // Writes what is buffered now (the background thread does this every flush_interval).
  Status FlushNow();
  // Stops the thread after writing everything buffered. Idempotent.
  void Stop();
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Exposures not written because their pair was written within coalesce_seconds.
  int64_t coalesced() const { return coalesced_.load(std::memory_order_relaxed); }
  // Records deleted by expiry since start.
  int64_t expired() const { return expired_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    int64_t campaign_id = 0;
    store::ExposureEntry entry;
    uint32_t first_wallet = 0;
    uint32_t wallet_count = 0;
  };
  struct Buffer {
    std::vector<Pending> exposures;
    std::vector<Address> wallets;
    void clear() {
      exposures.clear();
      wallets.clear();
    }
  };
  struct Shard {
    Mutex mu;
    Buffer buffer ADS_GUARDED_BY(mu);
  };
  void Run();
  // Advances the expiry sweep by one step, starting a new one when due. Background thread.
  void ExpireStep(std::chrono::steady_clock::time_point now);

  store::ExposureStore& store_;
  const Published<decision::Catalog>& catalogs_;
  const Published<decision::ActivityIndex>& activity_;
  const Clock& clock_;
  const ExposureRecorderOptions options_;
  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> coalesced_{0};
  std::atomic<int64_t> expired_{0};
  // One slot of the coalescing table: a pair's 64-bit fingerprint (0: empty) and when it was
  // last written.
  struct RecentSlot {
    uint64_t pair = 0;
    int64_t written_at = 0;
  };
  std::vector<RecentSlot> recent_ ADS_GUARDED_BY(flush_mu_);
  // Writes a failed flush left for the next one.
  std::vector<store::ExposureWrite> retry_ ADS_GUARDED_BY(flush_mu_);
  ThreadShards<Shard> shards_;
  Mutex flush_mu_;  // serialises flushes
  Mutex mu_;
  CondVar cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  bool started_ = false;
  std::thread thread_;
  // The expiry sweep (background thread only).
  std::chrono::steady_clock::time_point next_sweep_{};
  bool sweeping_ = false;
  int64_t sweep_cutoff_ = 0;
  std::string sweep_after_;
};

}  // namespace adserver::events
