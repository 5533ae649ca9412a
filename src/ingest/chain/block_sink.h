#pragma once

// How the live indexer tells others (conversion attribution) what it committed: the blocks it
// applied with the interactions it recorded, and the blocks a reorg undid. Plain values only.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "ingest/chain/chain_types.h"

namespace adserver::ingest::chain {

// One interaction the indexer recorded: a transaction sent to a registry contract, or a log a
// registry contract emitted in a transaction, attributed to the transaction's sender. Counted
// once per transaction and project, as in the activity index.
struct ChainInteraction {
  Address wallet;  // the transaction's sender
  int64_t project_id = 0;
  int64_t chain_id = 0;
  Hash32 tx_hash;
  // Absent when the transaction was sent to one of the project's contracts; otherwise the
  // lowest index of the project's logs in the transaction.
  std::optional<uint64_t> log_index;
  uint64_t block_number = 0;
  int64_t block_time = 0;  // the block's timestamp, Unix seconds
  bool operator==(const ChainInteraction&) const = default;
};

// A block the indexer applied.
struct AppliedBlock {
  uint64_t number = 0;
  Hash32 hash;
  int64_t timestamp = 0;  // Unix seconds
  // False when the indexer applies blocks as soon as they appear (confirmations == 0): such a
  // block is more likely than a confirmed one to be undone later (OnReverted).
  bool confirmed = false;
  std::vector<ChainInteraction> interactions;  // in transaction order
  bool operator==(const AppliedBlock&) const = default;
};

// A block a reorg undid.
struct RevertedBlock {
  uint64_t number = 0;
  Hash32 hash;
  bool operator==(const RevertedBlock&) const = default;
};

// Notified by the indexer, on its thread. OnApplied runs BEFORE the LMDB commit of the blocks,
// so a crash can never leave applied blocks the sink did not see: after a crash between the
// two, or when the commit fails, the indexer offers the same heights again (the same blocks or,
// after a reorg, others), so OnApplied must be idempotent per block and must drop what it
// recorded for a height whose block has changed. An error from OnApplied stops the commit: the
// indexer retries the step with backoff. OnReverted runs after the undo is committed.
// Implementations must not throw, should return quickly (indexing waits for them), and are
// called from one thread at a time.
class BlockSink {
 public:
  virtual ~BlockSink() = default;
  // `blocks` are about to be applied, consecutive, oldest first. Not OK: nothing is applied.
  virtual Status OnApplied(int64_t chain_id, std::span<const AppliedBlock> blocks) = 0;
  // `blocks` were undone (a reorg abandoned them), newest first; their interactions no longer
  // count. The new branch's blocks follow in later OnApplied calls.
  virtual void OnReverted(int64_t chain_id, std::span<const RevertedBlock> blocks) = 0;
};

}  // namespace adserver::ingest::chain
