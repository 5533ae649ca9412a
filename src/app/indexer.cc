#include "app/indexer.h"

#include <filesystem>

#include "common/check.h"
#include "common/log.h"
#include "common/thread_setup.h"
#include "store/postgres/pg_leader_lock.h"

namespace adserver::app {
namespace {

std::string LegacyCheckpointPath(const std::string& data_dir, int64_t chain) {
  return (std::filesystem::path(data_dir) / ("indexer-" + std::to_string(chain) + ".json"))
      .string();
}

}  // namespace

Result<std::unique_ptr<LiveIndexer>> LiveIndexer::Create(store::InventoryStore& registry,
                                                         store::LmdbActivityIndex& index,
                                                         const std::string& data_dir,
                                                         const IndexerOptions& options,
                                                         ingest::chain::BlockSink* sink) {
  ADS_ASSIGN_OR_RETURN(auto source, ingest::chain::JsonRpcChainSource::Create(options.rpc_url));
  auto indexer = std::make_unique<LiveIndexer>(std::move(source), registry, index.chain_ledger(), options, sink);
  indexer->set_legacy_checkpoint_file(LegacyCheckpointPath(data_dir, options.chain_id));
  return indexer;
}

Result<std::unique_ptr<LiveIndexer>> LiveIndexer::Create(store::InventoryStore& registry,
                                                         store::ChainLedger& ledger,
                                                         const IndexerOptions& options,
                                                         ingest::chain::BlockSink* sink) {
  ADS_ASSIGN_OR_RETURN(auto source, ingest::chain::JsonRpcChainSource::Create(options.rpc_url));
  return std::make_unique<LiveIndexer>(std::move(source), registry, ledger, options, sink);
}

LiveIndexer::LiveIndexer(std::unique_ptr<ingest::chain::JsonRpcChainSource> source,
                         store::InventoryStore& registry, store::ChainLedger& ledger,
                         const IndexerOptions& options, ingest::chain::BlockSink* sink)
    : ChainIndexer(*source, registry, ledger, options, sink), source_(std::move(source)) {}

LiveIndexer::~LiveIndexer() = default;

IndexerThread::IndexerThread(store::InventoryStore& registry, store::LmdbActivityIndex& index,
                             std::string data_dir, IndexerOptions options,
                             ingest::chain::BlockSink* sink)
    : registry_(&registry),
      index_(&index),
      data_dir_(std::move(data_dir)),
      options_(std::move(options)),
      sink_(sink) {}

IndexerThread::IndexerThread(std::unique_ptr<cluster::ClusterIndexer> cluster)
    : sink_(nullptr), cluster_mode_(true), cluster_(std::move(cluster)) {}

IndexerThread::~IndexerThread() { Stop(); }

std::optional<ingest::chain::ChainIndexer::Progress> IndexerThread::progress() const {
  if (cluster_mode_) return cluster_ ? cluster_->progress() : std::nullopt;
  if (!indexer_) return std::nullopt;
  return indexer_->progress();
}

void IndexerThread::Start() {
  if (cluster_mode_) {
    if (cluster_) cluster_->Start();
    return;
  }
  ADS_CHECK(!thread_.joinable()) << "IndexerThread started twice";
  Result<std::unique_ptr<LiveIndexer>> indexer =
      LiveIndexer::Create(*registry_, *index_, data_dir_, options_, sink_);
  if (!indexer.ok()) {
    ADS_LOG(error, "indexer not started; serving goes on", "status", indexer.status());
    return;
  }
  indexer_ = std::move(*indexer);
  thread_ = std::thread([this] {
    // Catching up on many blocks must not starve serving.
    NameThisThread("indexer");
    LowerThisThreadPriority();
    Status status = indexer_->Run();
    if (!status.ok()) ADS_LOG(error, "indexer stopped; serving goes on", "status", status);
  });
}

void IndexerThread::Stop() {
  if (cluster_) cluster_->Stop();
  if (indexer_) indexer_->Stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<cluster::ClusterIndexer>> OpenClusterIndexer(
    store::InventoryStore& registry, store::ChainLedger& ledger, const std::string& database_url,
    const IndexerOptions& options, ingest::chain::BlockSink* sink,
    cluster::ClusterIndexerOptions cluster) {
  // A bad URL fails here, not at every term.
  ADS_RETURN_IF_ERROR(ingest::chain::JsonRpcChainSource::Create(options.rpc_url).status());
  cluster::IndexerPorts ports{
      .open_lock = [database_url](int64_t key) -> Result<std::unique_ptr<store::LeaderLock>> {
        ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PgLeaderLock> lock,
                             store::PgLeaderLock::Open(database_url, key));
        return std::unique_ptr<store::LeaderLock>(std::move(lock));
      },
      .make_indexer = [&registry, options, sink](store::ChainLedger& fenced)
          -> Result<std::unique_ptr<cluster::TermIndexer>> {
        ADS_ASSIGN_OR_RETURN(std::unique_ptr<LiveIndexer> indexer,
                             LiveIndexer::Create(registry, fenced, options, sink));
        return std::unique_ptr<cluster::TermIndexer>(std::move(indexer));
      }};
  return std::make_unique<cluster::ClusterIndexer>(ledger, options.chain_id, std::move(ports),
                                                   cluster);
}

}  // namespace adserver::app
