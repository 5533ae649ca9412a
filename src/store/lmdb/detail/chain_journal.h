#pragma once

// The live indexer's ledger in the LMDB activity index (store::ChainLedger): per chain a
// checkpoint and, for each of the last kJournalDepth applied blocks, the value before the block
// of every (wallet, project, chain) entry it changed ("absent" included). Both are written in
// the same write transaction as the wallets and the change log, so a crash can never leave
// them out of step.

#include <cstdint>
#include <optional>
#include <span>

#include "common/status.h"
#include "store/chain_ledger.h"
#include "store/lmdb/detail/change_log.h"
#include "store/lmdb/detail/lmdb_env.h"
#include "store/lmdb/detail/wallet_values.h"

namespace adserver::store::detail {

class ChainJournal final : public ChainLedger {
 public:
  // Its named databases (keys of the main database too, so their lengths must differ from a
  // wallet key's 20 bytes).
  static constexpr const char* kJournalDbName = "indexer_journal";
  static constexpr const char* kCheckpointDbName = "indexer_checkpoints";

  ChainJournal(LmdbEnv& env, WalletValues& wallets, ChangeLog& changes)
      : env_(env),
        wallets_(wallets),
        changes_(changes),
        journal_(env, kJournalDbName),
        checkpoints_(env, kCheckpointDbName) {}

  // NotFound if the chain has no checkpoint yet.
  Result<ChainCheckpoint> LoadCheckpoint(int64_t chain_id) override;
  // Sets the chain's checkpoint (a first start, or one migrated from a checkpoint file) and
  // replaces its journal with `checkpoint.recent`, whose blocks have nothing to undo. Activity
  // is not touched. InvalidArgument if `recent` is not consecutive up to next_block - 1.
  Status ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint) override;
  // Applies consecutive `blocks` in one write transaction: upserts their rows (per entry the
  // latest day and the summed count), journals the previous values, moves the checkpoint past
  // the last block and drops journal blocks older than kJournalDepth. InvalidArgument (nothing
  // written) for rows of another chain or non-positive ids; Conflict if the first block is not
  // the checkpoint's next block (e.g. another indexer of the same chain moved it).
  Status ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) override;
  // Undoes every journaled block of the chain after `ancestor`, newest first, in one write
  // transaction: restores the previous values (removing entries that were absent, and wallets
  // left empty) and sets next_block to ancestor + 1. Conflict (nothing changed) if the journal
  // does not reach back to block ancestor + 1. A no-op if nothing after `ancestor` is applied.
  // The restored values are absolute: another writer's change to the same entries since the
  // block (an import) is undone with it.
  Status UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) override;

 private:
  // Opens (creating) the two databases, once; outside any write transaction.
  Status Open();
  // Steps inside a write transaction. REQUIRES: Open succeeded.
  Status ApplyBlock(MDB_txn* txn, int64_t chain_id, const IndexedBlock& block);
  // Conflict if `number` is not journaled.
  Status UndoBlock(MDB_txn* txn, int64_t chain_id, uint64_t number);
  Status PruneJournal(MDB_txn* txn, int64_t chain_id, uint64_t newest);
  Status PutCheckpoint(MDB_txn* txn, int64_t chain_id, uint64_t next_block);
  Result<std::optional<uint64_t>> GetCheckpoint(MDB_txn* txn, int64_t chain_id) const;
  // Deletes the chain's journaled blocks numbered before `before` (all: the largest number).
  Status DeleteJournalBefore(MDB_txn* txn, int64_t chain_id, uint64_t before);
  MDB_dbi JournalDbi() const { return *journal_.handle(); }
  MDB_dbi CheckpointDbi() const { return *checkpoints_.handle(); }

  LmdbEnv& env_;
  WalletValues& wallets_;
  ChangeLog& changes_;
  NamedDb journal_;
  NamedDb checkpoints_;
};

}  // namespace adserver::store::detail
