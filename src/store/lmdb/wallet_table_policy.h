#pragma once

// When the serving wallet table (store/lmdb/wallet_table.h) of WalletReadCache is rebuilt:
// the changes the published table lacks, and the times of the rules of ReadCacheOptions on an
// injected clock. No LMDB, no file: the index tells it what happened, it answers
// NeedsRebuild. Split out of LmdbActivityIndex by role (issue 41 item 1).
//
// Thread-safety: the On* calls come from the index's maintenance (under its cache mutex,
// OnRebuildAttempt under its rebuild mutex); NeedsRebuild and bulk_pending may be read from any
// thread. Every field is an atomic.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/clock.h"

namespace adserver::store {

// The serving read cache (WalletReadCache::Enable).
struct ReadCacheOptions {
  // Wallets changed since the table was built that are read from LMDB instead; past this many
  // the table is rebuilt.
  size_t max_recent_wallets = 100'000;
  // A stale table is rebuilt at most this often (a bulk import in progress changes the index
  // faster than a table can follow it).
  std::chrono::milliseconds min_rebuild_interval{10'000};
  // After a bulk change, the rebuild waits until the index has not changed for this long (an
  // import commits every few seconds: a table built in between would be stale at once)...
  // Meanwhile the table keeps answering: wallets a bulk change wrote keep their values of
  // before it until the rebuilt table is published, and wallets changed one by one (blocks,
  // small imports) are read from LMDB as always. Reading every lookup from LMDB instead made
  // an import's end saturate a busy event loop (issue 18 item 9).
  std::chrono::milliseconds quiet_period{2'000};
  // ...or until this long after the bulk change, whichever comes first (a live indexer may
  // never leave the index quiet).
  std::chrono::milliseconds max_stale{60'000};
  // A table of at least this many wallets keeps answering through a bulk change (see
  // quiet_period); a smaller one is dropped instead and LMDB answers every lookup until the
  // rebuild, fresh at once and still cheap at that size (a first import into a new server, a
  // demo, the tests).
  size_t min_wallets_kept_through_bulk = 100'000;
  // Serve from a copy of the table in anonymous memory (WalletTable::LoadIntoMemory) once it
  // is published; false = serve from the file's mapping (less RSS, slower random lookups).
  bool in_memory = true;
};

class WalletTablePolicy {
 public:
  // Before Configure: the defaults on the system clock.
  WalletTablePolicy() = default;
  WalletTablePolicy(const WalletTablePolicy&) = delete;
  WalletTablePolicy& operator=(const WalletTablePolicy&) = delete;

  // Sets the rules and the clock (which must outlive the policy). Before the maintenance runs.
  void Configure(const ReadCacheOptions& options, const Clock& clock);
  const ReadCacheOptions& options() const { return options_; }

  // A table was opened at start-up with `recent` wallets changed since it.
  void OnOpened(size_t recent);
  // The index is at change `counter` while no table answers: the quiet period restarts when it
  // moved.
  void OnChangeWithoutTable(uint64_t counter);
  // The index is at change `counter` while a table answers: writes during a pending bulk
  // change restart the quiet period.
  void OnChangeWithTable(uint64_t counter);
  // A bulk change (no wallet list) the table lacks; the table keeps answering until rebuilt,
  // once the writes pause for quiet_period or max_stale after the first such change.
  void OnBulkChange(uint64_t counter);
  // The published view now holds `recent` wallets changed since its table.
  void OnRecent(size_t recent);
  // The table was dropped at change `counter` (LMDB answers every lookup): stale from now.
  void OnDropped(uint64_t counter);
  // A rebuild begins, or its table is written: min_rebuild_interval counts from here.
  void OnRebuildAttempt();
  // A table was rebuilt: `current` when it lacks no change but `recent` wallets. Then either
  // OnPublished (it answers) or OnDropped (it lacks a change it cannot follow).
  void OnRebuilt(bool current, size_t recent);
  // The rebuilt table answers lookups.
  void OnPublished() { table_in_view_ = true; }

  // True when the table is missing, stale or has too many changed wallets, the last rebuild is
  // min_rebuild_interval old and, after a bulk change, the writes paused (or max_stale).
  bool NeedsRebuild() const;
  // A bulk change is not in the table yet.
  bool bulk_pending() const { return bulk_pending_.load(); }

 private:
  int64_t NowMillis() const { return clock_->SteadyMicros() / 1000; }

  ReadCacheOptions options_;
  const Clock* clock_ = &SystemClock::Get();
  // "Long ago" (whatever the machine's uptime) until set; times are the clock's steady ms.
  static constexpr int64_t kLongAgo = std::numeric_limits<int64_t>::min() / 2;
  std::atomic<bool> table_stale_{true};
  std::atomic<bool> table_in_view_{false};          // lookups are answered from a table
  std::atomic<int64_t> last_rebuild_ms_{kLongAgo};  // when the last rebuild began or ended
  std::atomic<int64_t> stale_since_ms_{kLongAgo};   // first bulk change the view lacks
  std::atomic<bool> bulk_pending_{false};           // rebuild when the writes pause
  std::atomic<int64_t> last_change_ms_{kLongAgo};   // when the change counter last moved
  std::atomic<uint64_t> last_counter_{0};           // the change counter seen last
};

}  // namespace adserver::store
