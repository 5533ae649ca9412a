#pragma once

// Memory-mapped wallet activity index (LMDB): the system of record for wallet activity and the
// index serving reads. Key = the 20-byte wallet, value = its interactions
// (detail/activity_codec.h).

#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "decision/activity_index.h"
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

// Blocks of the undo journal kept per chain: a reorg deeper than this cannot be undone.
inline constexpr uint64_t kJournalDepth = 64;

// One block as the live indexer applies it.
struct IndexedBlock {
  uint64_t number = 0;
  std::string hash;
  std::string parent_hash;
  // The block's interactions; every row must have the chain id given to ApplyBlocks.
  std::vector<ActivityRecord> rows;
};

// A journaled (undoable) block.
struct BlockRef {
  uint64_t number = 0;
  std::string hash;
  std::string parent_hash;  // empty if unknown (blocks migrated from a checkpoint file)
  bool operator==(const BlockRef&) const = default;
};

// Where the live indexer of one chain stands; committed with the activity it wrote.
struct ChainCheckpoint {
  // The next block to apply.
  uint64_t next_block = 0;
  // The journaled blocks, consecutive, oldest first, the last one next_block - 1 (at most
  // kJournalDepth; empty right after a start).
  std::vector<BlockRef> recent;
};

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
  // Number of wallets (reads the B-tree header).
  size_t wallet_count() const override;

  // Upserts rows: per (wallet, project, chain) last-seen day = max, count = sum. Commits every
  // `wallets_per_commit` wallets. Rows with a non-positive project or chain id are
  // InvalidArgument (nothing written).
  Status Record(const std::vector<ActivityRecord>& rows);
  // Loads wallets in strictly increasing byte order into an EMPTY index with MDB_APPEND
  // (fully packed pages). `next` fills the next wallet and its interactions and returns false
  // at the end. Conflict if the index is not empty or the order is violated.
  Status LoadSorted(const std::function<bool(Address&, std::vector<decision::Interaction>&)>& next);

  Result<std::vector<ActivityRecord>> ForWallet(const Address& wallet) const;
  Status Scan(const std::function<void(const ActivityRecord&)>& fn) const;
  // The id of the last committed write transaction (any process), so it also moves when
  // blocks are applied or undone. Cheap.
  uint64_t ChangeCounter() const;

  // Live indexer (undo journal). Per chain: a checkpoint and, for each of the last
  // kJournalDepth applied blocks, the value before the block of every (wallet, project, chain)
  // entry it changed ("absent" included). Both are written in the same write transaction as
  // the activity, so a crash can never leave them out of step.

  // NotFound if the chain has no checkpoint yet.
  Result<ChainCheckpoint> LoadCheckpoint(int64_t chain_id);
  // Sets the chain's checkpoint (a first start, or one migrated from a checkpoint file) and
  // replaces its journal with `checkpoint.recent`, whose blocks have nothing to undo. Activity
  // is not touched. InvalidArgument if `recent` is not consecutive up to next_block - 1.
  Status ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint);
  // Applies consecutive `blocks` in one write transaction: upserts their rows as Record does,
  // journals the previous values, moves the checkpoint past the last block and drops journal
  // blocks older than kJournalDepth. InvalidArgument (nothing written) for rows of another chain
  // or non-positive ids; Conflict if the first block is not the checkpoint's next block (e.g.
  // another indexer of the same chain moved it).
  Status ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks);
  // Undoes every journaled block of the chain after `ancestor`, newest first, in one write
  // transaction: restores the previous values (removing entries that were absent, and wallets
  // left empty) and sets next_block to ancestor + 1. Conflict (nothing changed) if the journal
  // does not reach back to block ancestor + 1. A no-op if nothing after `ancestor` is applied.
  // The restored values are absolute: another writer's change to the same entries since the
  // block (an import) is undone with it.
  Status UndoBlocksAfter(int64_t chain_id, uint64_t ancestor);

  struct Stats {
    uint64_t wallets = 0;
    uint64_t pages = 0;  // B-tree pages in use (branch + leaf + overflow)
    uint64_t page_size = 0;
    uint64_t file_bytes = 0;  // data.mdb size on disk
  };
  Result<Stats> GetStats() const;

 private:
  struct ThreadReader;
  LmdbActivityIndex(MDB_env* env, MDB_dbi dbi, const LmdbOptions& options);
  // This thread's reader for this index, created on first use.
  ThreadReader& Reader() const;
  Status WriteWallets(MDB_txn* txn, const std::vector<ActivityRecord>& sorted, size_t begin,
                      size_t end);
  // The wallet's stored interactions (empty if none) into `items`.
  Status ReadWallet(MDB_txn* txn, const Address& wallet,
                    std::vector<decision::Interaction>& items) const;
  // Stores `items` (sorted) as the wallet's value, or deletes the wallet if empty.
  Status WriteWallet(MDB_txn* txn, const Address& wallet,
                     std::span<const decision::Interaction> items);
  // Opens (creating) the journal's named databases, once.
  Status OpenJournal();
  // Journal steps inside a write transaction; REQUIRES: the journal databases are open.
  Status ApplyBlock(MDB_txn* txn, int64_t chain_id, const IndexedBlock& block);
  // Conflict if `number` is not journaled.
  Status UndoBlock(MDB_txn* txn, int64_t chain_id, uint64_t number);
  Status PruneJournal(MDB_txn* txn, int64_t chain_id, uint64_t newest);
  Status PutCheckpoint(MDB_txn* txn, int64_t chain_id, uint64_t next_block);
  Result<std::optional<uint64_t>> GetCheckpoint(MDB_txn* txn, int64_t chain_id) const;
  Status DeleteJournal(MDB_txn* txn, int64_t chain_id);
  // Number of named databases (journal) recorded in the main database (not wallets).
  uint64_t NamedDatabaseCount(MDB_txn* txn) const;

  MDB_env* env_;
  MDB_dbi dbi_;
  LmdbOptions options_;
  uint64_t id_;  // distinguishes instances in the per-thread reader cache
  std::string path_;
  mutable std::mutex readers_mu_;
  mutable std::vector<std::unique_ptr<ThreadReader>> readers_;  // guarded by readers_mu_
  std::mutex journal_mu_;
  bool journal_open_ = false;   // guarded by journal_mu_
  MDB_dbi journal_dbi_ = 0;     // set once journal_open_
  MDB_dbi checkpoint_dbi_ = 0;  // set once journal_open_
};

}  // namespace adserver::store
