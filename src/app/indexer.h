#pragma once

// The live EVM indexer (ingest/chain/chain_indexer.h) over a node's JSON-RPC, as `adserver
// index` runs it, or on its own thread inside `adserver serve` when the configuration has an
// [indexer] section. In cluster mode it runs on the node leading the chain
// (cluster/indexer.h; OpenClusterIndexer below connects it).

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cluster/indexer.h"
#include "common/status.h"
#include "ingest/chain/block_sink.h"
#include "ingest/chain/chain_indexer.h"
#include "ingest/chain/indexer_options.h"
#include "ingest/chain/json_rpc_chain_source.h"
#include "store/chain_ledger.h"
#include "store/inventory_store.h"
#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::app {

using IndexerOptions = ingest::chain::IndexerOptions;

// A ChainIndexer reading the node at options.rpc_url into the data directory's activity index,
// migrating the checkpoint file of earlier versions (DATA_DIR/indexer-<chainId>.json) once.
// Run and Stop as ChainIndexer's: Run on one thread, Stop from any.
class LiveIndexer final : public ingest::chain::ChainIndexer {
 public:
  // InvalidArgument if options.rpc_url is not http://host[:port][/path]. `registry`, `index`
  // (of an already open data directory: LMDB must not be opened twice in one process) and
  // `sink` (optional) must outlive the result.
  static Result<std::unique_ptr<LiveIndexer>> Create(store::InventoryStore& registry,
                                                     store::LmdbActivityIndex& index,
                                                     const std::string& data_dir,
                                                     const IndexerOptions& options,
                                                     ingest::chain::BlockSink* sink = nullptr);
  // The same over any registry and ledger (cluster mode: PostgreSQL's), with no checkpoint
  // file. `registry`, `ledger` and `sink` (optional) must outlive the result.
  static Result<std::unique_ptr<LiveIndexer>> Create(store::InventoryStore& registry,
                                                     store::ChainLedger& ledger,
                                                     const IndexerOptions& options,
                                                     ingest::chain::BlockSink* sink = nullptr);
  LiveIndexer(std::unique_ptr<ingest::chain::JsonRpcChainSource> source,
              store::InventoryStore& registry, store::ChainLedger& ledger,
              const IndexerOptions& options, ingest::chain::BlockSink* sink);

  ~LiveIndexer() override;

 private:
  std::unique_ptr<ingest::chain::JsonRpcChainSource> source_;  // the ChainIndexer's source
};

// A LiveIndexer on its own thread (inside `serve`; never on an event loop). An unrecoverable
// error is logged and ends the thread; serving goes on. Start and Stop from one thread.
class IndexerThread {
 public:
  // `registry`, `index` and `sink` (optional) must outlive this object.
  IndexerThread(store::InventoryStore& registry, store::LmdbActivityIndex& index,
                std::string data_dir, IndexerOptions options,
                ingest::chain::BlockSink* sink = nullptr);
  // Cluster mode: the node contends for the chain's leadership and indexes while it leads
  // (cluster::ClusterIndexer; null: none could be made, nothing runs); progress() is nullopt
  // while another node leads.
  explicit IndexerThread(std::unique_ptr<cluster::ClusterIndexer> cluster);
  ~IndexerThread();
  IndexerThread(const IndexerThread&) = delete;
  IndexerThread& operator=(const IndexerThread&) = delete;

  // Starts the thread; a bad rpc_url is logged and starts nothing.
  void Start();
  // The indexer's progress; nullopt if Start started nothing. Any thread, after Start returned.
  std::optional<ingest::chain::ChainIndexer::Progress> progress() const;
  // Stops the indexer after its current step (at most one JSON-RPC timeout; a poll or backoff
  // wait ends at once) and joins it. Idempotent.
  void Stop();

 private:
  store::InventoryStore* registry_ = nullptr;  // embedded
  store::LmdbActivityIndex* index_ = nullptr;
  std::string data_dir_;
  IndexerOptions options_;
  ingest::chain::BlockSink* sink_;
  std::unique_ptr<LiveIndexer> indexer_;
  std::thread thread_;
  const bool cluster_mode_ = false;
  std::unique_ptr<cluster::ClusterIndexer> cluster_;  // cluster mode: runs instead of the above
};

// Cluster mode: a contender for the chain's leadership over PostgreSQL's advisory lock at
// `database_url`, each term indexing the chain's JSON-RPC into `ledger` (PostgreSQL's) with
// `registry` (the cluster's inventory) and `sink` (optional), which must outlive it.
// InvalidArgument for a bad options.rpc_url.
Result<std::unique_ptr<cluster::ClusterIndexer>> OpenClusterIndexer(
    store::InventoryStore& registry, store::ChainLedger& ledger, const std::string& database_url,
    const IndexerOptions& options, ingest::chain::BlockSink* sink = nullptr,
    cluster::ClusterIndexerOptions cluster = {});

}  // namespace adserver::app
