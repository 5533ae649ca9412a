#pragma once

// The live EVM indexer: follows a chain (ChainSource) and records wallet interactions with
// registry contracts into a ChainLedger (the data directory's LMDB activity index, or in
// cluster mode PostgreSQL), telling an optional BlockSink what it committed. app/indexer.h runs it
// over JSON-RPC for `adserver index` and, on its own thread, inside `adserver serve`.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/address.h"
#include "common/mutex.h"
#include "common/status.h"
#include "ingest/chain/block_sink.h"
#include "ingest/chain/chain_source.h"
#include "ingest/chain/indexer_options.h"

namespace adserver::store {
class InventoryStore;
class ChainLedger;
struct ChainCheckpoint;
}  // namespace adserver::store

namespace adserver::ingest::chain {

// Where an indexer stands, for the health page: the source's head seen by the last step and the
// next block to apply (both 0 before the first step).
struct IndexerProgress {
  uint64_t head = 0;
  uint64_t next_block = 0;
};

// An indexer that runs on a thread of its own: Run on that thread, Stop and progress from any.
// ChainIndexer is one; cluster mode runs one per term of the chain's leadership
// (cluster::TermIndexer).
class RunnableIndexer {
 public:
  virtual ~RunnableIndexer() = default;
  // Indexes until stopped (OK) or an unrecoverable error.
  virtual Status Run() = 0;
  virtual void Stop() = 0;
  virtual IndexerProgress progress() const = 0;
};

// Interactions: a transaction to a registry contract (wallet = from) and a log emitted by one
// (wallet = the transaction's from), counted once per transaction and project. Blocks are
// applied `confirmations` behind the head, each batch in one write transaction together
// with its undo journal and the chain's checkpoint (ChainLedger::ApplyBlocks), so a
// restart resumes exactly where the last commit left off. A block whose parent hash does not
// match, or a tip the source no longer has, is a reorg: the indexer finds the common ancestor
// and undoes the abandoned blocks newest first (UndoBlocksAfter) before following the new
// branch. Source errors are retried with exponential backoff (options.min_backoff to
// max_backoff). Run on one thread; Stop from any.
class ChainIndexer : public RunnableIndexer {
 public:
  // `source`, `registry` (the projects and their contracts, reloaded every 5 s), `ledger` and
  // `sink` must outlive this object. A null `sink` notifies nobody.
  ChainIndexer(ChainSource& source, store::InventoryStore& registry, store::ChainLedger& ledger,
               IndexerOptions options, BlockSink* sink = nullptr);
  ~ChainIndexer() override;
  ChainIndexer(const ChainIndexer&) = delete;
  ChainIndexer& operator=(const ChainIndexer&) = delete;

  // A checkpoint file of earlier versions (text "next\n(block hash\n)*"), read once when the
  // ledger has no checkpoint for the chain. Call before Run.
  void set_legacy_checkpoint_file(std::string path) { legacy_checkpoint_path_ = std::move(path); }

  // Follows the source until Stop(). Returns OK once stopped, or the Status of an
  // unrecoverable error: the registry cannot be read at start, or a reorg deeper than the undo
  // journal (Conflict; the index is left unchanged).
  Status Run() override;
  // Makes Run return after its current step (at most one source call), waking it at once from
  // a poll or backoff wait. Run returns at once if Stop came first. Idempotent, thread-safe.
  void Stop() override;

  // Run's parts, for tests that drive the indexer step by step.

  // Loads the chain's registry contracts. Run calls it at start and every 5 s.
  Status LoadRegistry();
  // One step: applies the next batch of blocks, or undoes the blocks a reorg abandoned, or
  // checks that the last applied block is still on the source's chain. Returns true if it
  // changed the index (step again at once), false when caught up. Errors are worth retrying
  // unless fatal() is set.
  Result<bool> Step();
  // Set when the index cannot follow the source any more (a reorg deeper than the journal).
  const Status& fatal() const { return fatal_; }

  using Progress = IndexerProgress;
  // Thread-safe (read while Run steps on its thread).
  Progress progress() const override {
    return {.head = head_.load(std::memory_order_relaxed),
            .next_block = next_block_.load(std::memory_order_relaxed)};
  }
  // Waits until Run is inside a poll or backoff wait (blocked until Stop or the wait's end);
  // false if that did not happen within `deadline`.
  bool WaitUntilWaitingForTest(std::chrono::seconds deadline);

 private:
  // The chain's checkpoint; on the first run, one made from the legacy file, from_block or
  // the head.
  Result<store::ChainCheckpoint> LoadOrStartCheckpoint(uint64_t head);
  Result<bool> Apply(std::span<const ChainBlock> blocks);
  // The interactions of `block` with registry contracts, once per transaction and project.
  std::vector<ChainInteraction> Interactions(const ChainBlock& block) const;
  Result<bool> CheckTip(const store::ChainCheckpoint& cp);
  Result<bool> Rewind(const store::ChainCheckpoint& cp);
  // The newest journaled block (or the parent of the oldest) the source still has; nullopt if
  // the fork is deeper than the journal.
  Result<std::optional<uint64_t>> FindCommonAncestor(const store::ChainCheckpoint& cp);
  void NotifyReverted(const store::ChainCheckpoint& cp, uint64_t ancestor);
  // Waits `duration` unless stopped first; returns true if stopped.
  bool WaitUnlessStopped(std::chrono::milliseconds duration);
  bool stopped();

  ChainSource& source_;
  store::InventoryStore& registry_;
  store::ChainLedger& ledger_;
  const IndexerOptions options_;
  BlockSink* const sink_;
  std::string legacy_checkpoint_path_;
  // The chain's registry contracts -> project id; emitters_ lists the same addresses.
  std::unordered_map<Address, int64_t, AddressHash> contracts_;
  std::vector<Address> emitters_;
  Status fatal_;
  std::atomic<uint64_t> head_{0};        // progress(): written by Step
  std::atomic<uint64_t> next_block_{0};  // progress(): written by Step

  Mutex mu_;
  CondVar stop_cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  bool waiting_ ADS_GUARDED_BY(mu_) = false;  // Run is in WaitUnlessStopped
};

}  // namespace adserver::ingest::chain
