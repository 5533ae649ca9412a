#pragma once

// The activity index's serving read cache. A WalletTable (wallet_table.h) built from the index at
// LMDB transaction T answers lookups, except for the wallets written after T, which are read
// from LMDB. Every write transaction that changes wallets logs them (or, for bulk writes,
// "anything may have changed") in the change log kept in the same environment
// (detail/change_log.h), so any process's writes are seen: Refresh reads the log past the table
// and publishes the set of changed wallets. Lookups take the published view with no lock
// (Current). Without a current table (none yet, a bulk write, the log pruned past it) every
// lookup reads LMDB until Rebuild has run. When to rebuild is WalletTablePolicy's.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "common/address.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/status.h"
#include "store/lmdb/detail/change_log.h"
#include "store/lmdb/detail/lmdb_env.h"
#include "store/lmdb/wallet_table.h"
#include "store/lmdb/wallet_table_policy.h"

namespace adserver::store {

struct ReadCacheStatus {
  bool table = false;      // lookups are answered from a table
  uint64_t table_txn = 0;  // the LMDB transaction the table reflects
  uint64_t table_wallets = 0;
  bool table_in_memory = false;  // the table is a copy in memory, not the file's mapping
  uint64_t covered_txn = 0;      // the change log is read up to here
  uint64_t recent_wallets = 0;   // changed since the table: read from LMDB
  bool bulk_pending = false;     // a bulk change is not in the table yet (rebuild pending)
};

class WalletReadCache {
 public:
  // What lookups read: a table and the wallets changed after it (read from LMDB).
  struct View {
    std::shared_ptr<const WalletTable> table;  // null: every lookup reads LMDB
    uint64_t covered_txn = 0;
    std::unordered_set<Address, AddressHash> recent;
  };

  // Over the index's environment, its wallets' database and its change log.
  WalletReadCache(detail::LmdbEnv& env, MDB_dbi wallets, detail::ChangeLog& changes)
      : env_(env), wallets_(wallets), changes_(changes) {}

  // Turns the cache on, with the table file `wallets.table` in the index directory; opens the
  // file if one is there and still current. Never builds: the caller runs Rebuild when
  // NeedsRebuild says so. The rebuild intervals (ReadCacheOptions' periods) are measured on
  // `clock`'s SteadyMicros, which must outlive the cache.
  Status Enable(const ReadCacheOptions& options = {}, const Clock& clock = SystemClock::Get());
  // Catches the published view up with the change log (cheap when nothing changed). Called
  // every poll interval by one maintenance thread.
  Status Refresh();
  // With ReadCacheOptions::in_memory, replaces a published mapped table by its in-memory copy
  // (nothing to do otherwise). Called by the maintenance thread after Refresh; the copy is made
  // without holding up lookups or refreshes.
  Status LoadIntoMemory();
  // True if the table is missing, stale or has too many changed wallets, and the minimum
  // interval since the last rebuild has passed.
  bool NeedsRebuild() const;
  // Writes a new table from one read transaction (seconds for millions of wallets; lookups go
  // on meanwhile), publishes it and catches up with the log. Stops early with Unavailable
  // (nothing published, no file left) once `*cancel` is set.
  Status Rebuild(const std::atomic<bool>* cancel = nullptr);
  ReadCacheStatus GetStatus() const;

  // Lookups: the published view (null while the cache is off or before a view). No lock.
  std::shared_ptr<const View> Current() const { return enabled_ ? view_.Current() : nullptr; }

 private:
  // How far CatchUp brought a view (kLost: the table is unusable).
  using CatchUpResult = detail::ChangeLog::CatchUp;
  // Reads the change log after `view.covered_txn` into `view` (a copy of the current one);
  // unless kLost, `view.covered_txn` is then the newest transaction.
  Result<CatchUpResult> CatchUp(View& view);
  // Publishes `view`; the one it replaces is freed on this thread (ReleaseWhenUnused).
  void PublishView(std::shared_ptr<const View> view);
  IndexIdentity Identity() const;
  std::string TablePath() const;

  detail::LmdbEnv& env_;
  MDB_dbi wallets_;
  detail::ChangeLog& changes_;
  Published<View> view_;
  bool enabled_ = false;      // set by Enable before lookups start
  WalletTablePolicy policy_;  // when the table is rebuilt (configured by Enable)
  // The mapped table whose in-memory copy failed (used by the maintenance thread only).
  std::weak_ptr<const WalletTable> load_failed_;
  mutable Mutex cache_mu_;  // serialises Refresh and publishing
  Mutex rebuild_mu_;        // one Rebuild at a time
};

}  // namespace adserver::store
