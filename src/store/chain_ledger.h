#pragma once

// Where the live indexer (ingest/chain/chain_indexer.h) writes the blocks it applies: the
// activity they add, an undo journal of the last kJournalDepth blocks and the chain's
// checkpoint, all committed together. The data directory's LMDB index is one
// (store/lmdb/lmdb_activity_index.h); in cluster mode PostgreSQL is
// (store/postgres/postgres_activity_store.h), so that whichever node leads the chain's indexer
// continues where the last one stopped.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

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

// Per chain: a checkpoint and, for each of the last kJournalDepth applied blocks, the value
// before the block of every (wallet, project, chain) entry it changed ("absent" included), both
// written in the same transaction as the activity, so a crash can never leave them out of step.
// Implementations are thread-safe; every call may block on I/O (Unavailable when the backend
// cannot be reached: nothing was written).
class ChainLedger {
 public:
  virtual ~ChainLedger() = default;

  // NotFound if the chain has no checkpoint yet.
  virtual Result<ChainCheckpoint> LoadCheckpoint(int64_t chain_id) = 0;
  // Sets the chain's checkpoint (a first start, or one migrated from a checkpoint file) and
  // replaces its journal with `checkpoint.recent`, whose blocks have nothing to undo. Activity
  // is not touched. InvalidArgument if `recent` is not consecutive up to next_block - 1.
  virtual Status ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint) = 0;
  // Applies consecutive `blocks` in one transaction: upserts their rows (last_seen = max,
  // count = sum), journals the previous values, moves the checkpoint past the last block and
  // drops journal blocks older than kJournalDepth. InvalidArgument (nothing written) for rows of
  // another chain or non-positive ids; Conflict (nothing written) if the first block is not the
  // checkpoint's next block (e.g. another indexer of the same chain moved it).
  virtual Status ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) = 0;
  // Undoes every journaled block of the chain after `ancestor`, newest first, in one
  // transaction: restores the previous values (removing entries that were absent) and sets
  // next_block to ancestor + 1. Conflict (nothing changed) if the journal does not reach back
  // to block ancestor + 1. A no-op if nothing after `ancestor` is applied. The restored values
  // are absolute: another writer's change to the same entries since the block (an import) is
  // undone with it.
  virtual Status UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) = 0;
};

}  // namespace adserver::store
