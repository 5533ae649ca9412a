#pragma once

// The live EVM indexer: follows a node over JSON-RPC and records wallet interactions with
// registry contracts into the data directory's activity index. Run by `adserver index`, or on
// its own thread inside `adserver serve` when the configuration has an [indexer] section.

#include <atomic>
#include <string>
#include <thread>

#include "common/status.h"
#include "ingest/indexer_options.h"
#include "store/lmdb/lmdb_activity_store.h"

namespace adserver::app {

using IndexerOptions = ingest::IndexerOptions;

// Runs until `stop` is set. Interactions: a transaction to a registry contract (wallet = from)
// and a log emitted by one (wallet = the transaction's from), counted once per transaction and
// project. Each batch of blocks is applied in one LMDB write transaction together with its
// undo journal and the chain's checkpoint (see LmdbActivityIndex::ApplyBlocks), so a restart
// resumes exactly where the last commit left off. A block whose parent hash does not match, or
// a tip the node no longer has, is a reorg: the indexer finds the common ancestor and undoes
// the abandoned blocks newest first before following the new branch. A legacy checkpoint file
// DATA_DIR/indexer-<chainId>.json is read once when the index has no checkpoint for the chain.
// Node errors are retried with exponential backoff (100 ms to 5 s). Returns a Status for
// unrecoverable errors only: a reorg deeper than the journal (nothing is changed), or the
// registry cannot be read at start.
Status RunIndexer(const std::string& data_dir, const IndexerOptions& options,
                  const std::atomic<bool>& stop);
// The same on an already open data directory (LMDB must not be opened twice in one process).
// `store` must outlive the call.
Status RunIndexer(store::LmdbActivityStore& store, const std::string& data_dir,
                  const IndexerOptions& options, const std::atomic<bool>& stop);

// RunIndexer on its own thread (inside `serve`; never on an event loop). An unrecoverable
// error is logged and ends the thread; serving goes on. Start and Stop from one thread.
class IndexerThread {
 public:
  // `store` must outlive this object.
  IndexerThread(store::LmdbActivityStore& store, std::string data_dir, IndexerOptions options);
  ~IndexerThread();
  IndexerThread(const IndexerThread&) = delete;
  IndexerThread& operator=(const IndexerThread&) = delete;

  void Start();
  // Asks the indexer to stop after its current step (at most one JSON-RPC timeout) and joins
  // it. Idempotent.
  void Stop();

 private:
  store::LmdbActivityStore& store_;
  std::string data_dir_;
  IndexerOptions options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace adserver::app
