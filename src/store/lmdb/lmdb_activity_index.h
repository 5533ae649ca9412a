#pragma once

// Memory-mapped wallet activity index (LMDB): the system of record for wallet activity and the
// index serving reads. Key = the 20-byte wallet, value = its interactions
// (detail/activity_codec.h). One role per class: the environment (detail/lmdb_env.h), the
// wallets inside a write transaction (detail/wallet_values.h), the change log
// (detail/change_log.h), the live indexer's ledger (detail/chain_journal.h), the replica
// position (detail/replica_position.h) and the serving read cache (wallet_read_cache.h); this
// class owns them, reads wallets (per-thread readers, the cache's view) and writes them.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/address.h"
#include "common/mutex.h"
#include "common/status.h"
#include "decision/activity_index.h"
#include "store/activity_store.h"
#include "store/chain_ledger.h"
#include "store/lmdb/detail/chain_journal.h"
#include "store/lmdb/detail/change_log.h"
#include "store/lmdb/detail/lmdb_env.h"
#include "store/lmdb/detail/replica_position.h"
#include "store/lmdb/detail/wallet_values.h"
#include "store/lmdb/wallet_read_cache.h"
#include "store/records.h"

namespace adserver::store {

struct LmdbOptions {
  // Upper bound of the memory map (virtual address space, not disk: the file grows as needed).
  uint64_t map_size_bytes = uint64_t{1} << 40;
  // Wallets written per write transaction by Record (bounds the writer's dirty pages).
  size_t wallets_per_commit = 50'000;
  // Skip fsync at commit (bulk loads, benchmarks); a crash may lose the last commits.
  bool no_sync = false;
};

// `row` as the index stores it: last_seen as its day, ids and count clamped to 32 bits.
decision::Interaction StoredInteraction(const ActivityRecord& row);

// The LMDB activity index. Thread-safe. Readers (LookupAll, Lookup) never lock or wait: each
// thread keeps one read-only transaction that is renewed for each lookup batch and reset after
// it, so every batch sees the latest commit of any process and never pins old pages for long.
// Values are decoded straight from the mapped pages into a per-thread buffer (no read(), no
// allocation once warm). Writers are serialised by LMDB's own lock (also across processes).
class LmdbActivityIndex final : public decision::ActivityIndex {
 public:
  // Opens (creating) the environment in directory `dir`. Unavailable if it cannot.
  static Result<std::shared_ptr<LmdbActivityIndex>> Open(const std::string& dir,
                                                         const LmdbOptions& options = {});
  ~LmdbActivityIndex() override;
  LmdbActivityIndex(const LmdbActivityIndex&) = delete;
  LmdbActivityIndex& operator=(const LmdbActivityIndex&) = delete;

  std::span<const decision::Interaction> Lookup(const Address& wallet) const override;
  void LookupAll(std::span<const Address> wallets, const Sink& sink) const override;
  // Prefetches from the wallet table when one is published (WalletTable::Prefetch).
  void Prefetch(std::span<const Address> wallets) const override;
  // Number of wallets (reads the B-tree header).
  size_t wallet_count() const override;

  // Upserts rows: per (wallet, project, chain) last-seen day = max, count = sum. Commits every
  // `wallets_per_commit` wallets. Rows with a non-positive project or chain id are
  // InvalidArgument (nothing written).
  Status Record(const std::vector<ActivityRecord>& rows);
  // Fills the next wallet and its interactions; returns false at the end.
  using SortedSource = std::function<bool(Address&, std::vector<decision::Interaction>&)>;
  // Loads wallets in strictly increasing byte order into an EMPTY index with MDB_APPEND
  // (fully packed pages). Conflict if the index is not empty or the order is violated.
  Status LoadSorted(const SortedSource& next);

  // Replica of PostgreSQL's activity (cluster mode, cluster/activity_replica.h): the index follows
  // a change log and remembers the log position it reflects, written in the same transaction
  // as the changes it covers.

  // A SortedSource that may fail (a snapshot read from the network): an error ends the load,
  // records no position and is returned; what earlier transactions committed stays.
  using FallibleSortedSource =
      std::function<Result<bool>(Address&, std::vector<decision::Interaction>&)>;

  // The recorded position; nullopt if none (never a replica, or a load cut short).
  Result<std::optional<uint64_t>> ReplicaPosition();
  // LoadSorted (into an EMPTY index), then records `position` in a last transaction (rows are
  // committed every 20 x wallets_per_commit wallets: an index left midway has no position).
  Status LoadSorted(const FallibleSortedSource& next, uint64_t position);
  // Sets each value's (wallet, project, chain) entry as given (removed: deleted; the last
  // value wins for a key given twice) and records `position`, in one write transaction.
  // InvalidArgument (nothing written) for non-positive ids.
  Status PutReplicaValues(std::span<const ActivityValue> values, uint64_t position);
  // Makes the index hold exactly the wallets `next` yields (strictly increasing order; any
  // others are deleted), writing only the wallets that differ, then records `position`. For a
  // non-empty index (LoadSorted takes an empty one); lookups go on meanwhile and see old and
  // new wallets mixed until it ends. The position is cleared first, so an index left midway
  // has none. Conflict if the order is violated.
  Status ReplaceSorted(const FallibleSortedSource& next, uint64_t position);

  Result<std::vector<ActivityRecord>> ForWallet(const Address& wallet) const;
  Status Scan(const std::function<void(const ActivityRecord&)>& fn) const;
  // The id of the last committed write transaction (any process), so it also moves when
  // blocks are applied or undone. Cheap.
  uint64_t ChangeCounter() const;

  // The live indexer's ledger (detail/chain_journal.h): checkpoints and the undo journal of the
  // last kJournalDepth blocks, written in the same transactions as the activity.
  ChainLedger& chain_ledger() { return journal_; }

  // The serving read cache (wallet_read_cache.h): lookups read its published view.
  WalletReadCache& read_cache() { return cache_; }
  const WalletReadCache& read_cache() const { return cache_; }

  struct Stats {
    uint64_t wallets = 0;
    uint64_t pages = 0;  // B-tree pages in use (branch + leaf + overflow)
    uint64_t page_size = 0;
    uint64_t file_bytes = 0;  // data.mdb size on disk
  };
  Result<Stats> GetStats() const;

 private:
  struct ThreadReader;
  LmdbActivityIndex(std::unique_ptr<detail::LmdbEnv> env, const LmdbOptions& options);
  // This thread's reader for this index, created on first use.
  ThreadReader& Reader() const;
  Status WriteWallets(MDB_txn* txn, const std::vector<ActivityRecord>& sorted, size_t begin,
                      size_t end);
  Status LoadSortedImpl(const FallibleSortedSource& next, std::optional<uint64_t> position);
  // ReplaceSorted's step: makes the stored wallets after `low` up to `high` (to the end if
  // null) those of `chunk` (sorted, encoded values).
  Status ReplaceRange(MDB_txn* txn, const std::optional<Address>& low, const Address* high,
                      const std::vector<std::pair<Address, std::string>>& chunk);
  // Number of named databases (journal) recorded in the main database (not wallets).
  uint64_t NamedDatabaseCount(MDB_txn* txn) const;

  void LookupLmdb(MDB_txn* txn, const Address& wallet, std::vector<decision::Interaction>& out,
                  bool renewed) const;

  // The environment and its main database (the wallets); closed after everything below.
  std::unique_ptr<detail::LmdbEnv> env_;
  MDB_dbi dbi_;
  LmdbOptions options_;
  uint64_t id_;  // distinguishes instances in the per-thread reader cache
  mutable Mutex readers_mu_;
  mutable std::vector<std::unique_ptr<ThreadReader>> readers_ ADS_GUARDED_BY(readers_mu_);
  // Wallets changed by each write transaction, written with it (the read cache's source).
  detail::ChangeLog changes_;
  // The wallets inside write transactions (each write noted in changes_).
  detail::WalletValues wallets_;
  // The live indexer's checkpoints and undo journal.
  detail::ChainJournal journal_;
  // Cluster mode's replica position, written with the changes it covers.
  detail::ReplicaPosition replica_;

  // The serving read cache over the wallets and the change log.
  WalletReadCache cache_;
};

}  // namespace adserver::store
