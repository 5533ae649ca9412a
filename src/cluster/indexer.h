#pragma once

// The live indexer in cluster mode (issue 17 item 4): every node configured with a chain's
// [indexer] contends for that chain's leadership (store/postgres/pg_leader_lock.h, checked about
// every second), and only the leader runs the indexer. It writes each block to PostgreSQL
// (PostgresActivityStore as the ChainLedger: the block's activity, its undo values and the
// chain's checkpoint in one transaction), which every node's replica follows, its own included;
// the leader's LMDB index is written by its replica only, like any other node's. A node that
// loses leadership stops its indexer at once: its ledger refuses writes from that moment, and
// PostgreSQL's checkpoint lets no block be applied twice even if two nodes briefly both lead.
// When the leader dies, another node takes the lock within a check interval of PostgreSQL ending
// the dead session (at once for a killed process, ~5 s for a vanished machine) and continues
// from PostgreSQL's checkpoint, reorg undo included (the journal is PostgreSQL's).
//
// The lock and each term's indexer come through ports (IndexerPorts; issue 41 item 2):
// app::OpenClusterIndexer connects PostgreSQL's lock and the JSON-RPC indexer, tests fakes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"
#include "ingest/chain/chain_indexer.h"
#include "store/chain_ledger.h"
#include "store/leader_lock.h"

namespace adserver::cluster {

struct ClusterIndexerOptions {
  // How often a node checks (or, leading, confirms) the chain's leadership.
  std::chrono::milliseconds lead_check{1000};
};

// One term's indexer (app::LiveIndexer: a ChainIndexer over the chain's JSON-RPC). Run on one
// thread, Stop and progress from any; Run's Conflict (a reorg deeper than the journal) is fatal.
using TermIndexer = ingest::chain::RunnableIndexer;

struct IndexerPorts {
  // Opens the leadership lock of `key` (ClusterIndexer::LeaderKey) on a session of its own.
  std::function<Result<std::unique_ptr<store::LeaderLock>>(int64_t key)> open_lock;
  // A term's indexer writing through `ledger` (which refuses writes once this node no longer
  // leads).
  std::function<Result<std::unique_ptr<TermIndexer>>(store::ChainLedger& ledger)> make_indexer;
};

// A contender for one chain's indexer. Start and Stop from one thread; leading() and
// progress() from any.
class ClusterIndexer {
 public:
  // The advisory lock key of chain `chain_id`'s indexer leadership: a fixed prefix ("adsx") and
  // the chain id's low 32 bits (the activity index keeps chain ids in 32 bits).
  static int64_t LeaderKey(int64_t chain_id);

  // `ledger` (PostgreSQL's, the cluster's) must outlive this object.
  ClusterIndexer(store::ChainLedger& ledger, int64_t chain_id, IndexerPorts ports,
                 ClusterIndexerOptions cluster = {});
  ~ClusterIndexer();
  ClusterIndexer(const ClusterIndexer&) = delete;
  ClusterIndexer& operator=(const ClusterIndexer&) = delete;

  // Starts contending on a thread of its own.
  void Start();
  // Stops the indexer if leading (after its current step; its ledger refuses writes at once),
  // then gives leadership up so another node takes over at its next check. Idempotent.
  void Stop();

  bool leading() const { return leading_.load(std::memory_order_acquire); }
  // The indexer's progress while this node leads; nullopt otherwise.
  std::optional<ingest::chain::ChainIndexer::Progress> progress() const;
  // Terms led since Start (a node that lost leadership and took it back counts twice).
  uint64_t terms() const { return terms_.load(std::memory_order_relaxed); }

 private:
  // The ledger as the indexer sees it: writes are refused once this node no longer leads.
  class FencedLedger final : public store::ChainLedger {
   public:
    FencedLedger(store::ChainLedger& ledger, const std::atomic<bool>& leading, int64_t chain_id)
        : ledger_(ledger), leading_(leading), chain_id_(chain_id) {}
    Result<store::ChainCheckpoint> LoadCheckpoint(int64_t chain_id) override {
      return ledger_.LoadCheckpoint(chain_id);
    }
    Status ResetCheckpoint(int64_t chain_id, const store::ChainCheckpoint& checkpoint) override;
    Status ApplyBlocks(int64_t chain_id, std::span<const store::IndexedBlock> blocks) override;
    Status UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) override;

   private:
    Status CheckLeading() const;
    store::ChainLedger& ledger_;
    const std::atomic<bool>& leading_;
    const int64_t chain_id_;
  };

  // The contender thread: checks leadership every lead_check, starting and stopping the indexer.
  void Contend();
  // One check; `lock` is (re)opened when missing.
  bool CheckLeadership(std::unique_ptr<store::LeaderLock>& lock);
  void StartIndexer();
  void StopIndexer();
  // Waits `duration` unless stopped first; returns true if stopped.
  bool WaitUnlessStopped(std::chrono::milliseconds duration);

  const int64_t chain_id_;
  const IndexerPorts ports_;
  const ClusterIndexerOptions cluster_;
  std::atomic<bool> leading_{false};
  std::atomic<uint64_t> terms_{0};
  FencedLedger ledger_;

  mutable Mutex mu_;
  CondVar stop_cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  std::shared_ptr<TermIndexer> indexer_ ADS_GUARDED_BY(mu_);  // this term's, null when not leading
  // The indexer's Run on its thread (contender thread only); ended_ set when Run returned, and
  // fatal_ when it returned a Conflict (a reorg deeper than the journal: a human must act).
  std::thread worker_;
  std::atomic<bool> ended_{false};
  std::atomic<bool> fatal_{false};
  std::thread contender_;
};

}  // namespace adserver::cluster
