#include "app/indexer.h"

#include <filesystem>

#include "app/cluster_indexer.h"
#include "common/check.h"
#include "common/log.h"
#include "common/thread_setup.h"

namespace adserver::app {
namespace {

std::string LegacyCheckpointPath(const std::string& data_dir, int64_t chain) {
  return (std::filesystem::path(data_dir) / ("indexer-" + std::to_string(chain) + ".json"))
      .string();
}

}  // namespace

Result<std::unique_ptr<LiveIndexer>> LiveIndexer::Create(store::LmdbActivityStore& store,
                                                         const std::string& data_dir,
                                                         const IndexerOptions& options,
                                                         ingest::chain::BlockSink* sink) {
  ADS_ASSIGN_OR_RETURN(auto source, ingest::chain::JsonRpcChainSource::Create(options.rpc_url));
  auto indexer =
      std::make_unique<LiveIndexer>(std::move(source), store, store.activity(), options, sink);
  indexer->indexer_.set_legacy_checkpoint_file(LegacyCheckpointPath(data_dir, options.chain_id));
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
    : source_(std::move(source)), indexer_(*source_, registry, ledger, options, sink) {}

IndexerThread::IndexerThread(store::LmdbActivityStore& store, std::string data_dir,
                             IndexerOptions options, ingest::chain::BlockSink* sink)
    : store_(&store), data_dir_(std::move(data_dir)), options_(std::move(options)), sink_(sink) {}

IndexerThread::IndexerThread(std::unique_ptr<ClusterIndexer> cluster)
    : sink_(nullptr), cluster_(std::move(cluster)) {}

IndexerThread::~IndexerThread() { Stop(); }

std::optional<ingest::chain::ChainIndexer::Progress> IndexerThread::progress() const {
  if (cluster_) return cluster_->progress();
  if (!indexer_) return std::nullopt;
  return indexer_->progress();
}

void IndexerThread::Start() {
  if (cluster_) {
    if (Status st = cluster_->Start(); !st.ok()) {
      ADS_LOG(error, "indexer not started; serving goes on", "status", st);
    }
    return;
  }
  ADS_CHECK(!thread_.joinable()) << "IndexerThread started twice";
  Result<std::unique_ptr<LiveIndexer>> indexer =
      LiveIndexer::Create(*store_, data_dir_, options_, sink_);
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

}  // namespace adserver::app
