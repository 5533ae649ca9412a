#include "app/backend.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>

#include "app/data_dir.h"
#include "cluster/activity_replica.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/lmdb/lmdb_exposure_store.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_advertiser_events_store.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_exposure_store.h"
#include "store/postgres/postgres_report_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_advertiser_events_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_identity_store.h"
#include "store/sqlite/sqlite_report_store.h"

namespace adserver::app {
namespace {

// The event stores' own connections only append and aggregate: a small page cache each, so
// that their memory does not grow with the tables (the default is 8 MiB per connection).
store::SqliteOptions EventsConnectionOptions() {
  store::SqliteOptions options;
  options.cache_size_kib = 1024;
  return options;
}

// The data directory's SQLite and LMDB files.
class EmbeddedBackend final : public Backend {
 public:
  Status Open(const config::Config& config) {
    data_dir_ = config.data_dir;
    const std::string db = DatabasePath(data_dir_);
    ADS_ASSIGN_OR_RETURN(EmbeddedStore embedded, OpenEmbeddedStore(data_dir_));
    stores_ = embedded.stores();
    index_ = embedded.activity->activity_index();
    ADS_ASSIGN_OR_RETURN(identity_, store::SqliteIdentityStore::Open(db));
    ADS_ASSIGN_OR_RETURN(accounts_, store::SqliteAccountStore::Open(db, EventsConnectionOptions()));
    ADS_ASSIGN_OR_RETURN(events_, store::SqliteEventsStore::Open(db, EventsConnectionOptions(),
                                                                 config.events.synchronous_full));
    ADS_ASSIGN_OR_RETURN(exposures_, store::LmdbExposureStore::Open(
                                         ExposureIndexPath(data_dir_),
                                         {.map_size_bytes = config.events.exposure_map_bytes}));
    // Reports read the rollups on a connection of their own.
    ADS_ASSIGN_OR_RETURN(reports_, store::SqliteReportStore::Open(db));
    ADS_ASSIGN_OR_RETURN(advertiser_events_,
                         store::SqliteAdvertiserEventsStore::Open(db, EventsConnectionOptions()));
    return OkStatus();
  }

  std::unique_ptr<IndexerThread> MakeIndexer(const IndexerOptions& options,
                                             ingest::chain::BlockSink* sink) override {
    return std::make_unique<IndexerThread>(*stores_.inventory, *index_, data_dir_, options, sink);
  }

 private:
  std::string data_dir_;
};

// PostgreSQL (inventory, activity, events, exposures, reports, accounts, identity) and Redis
// through the cluster node; the data directory keeps the node's LMDB replica of activity and
// the outbox of clicks and advertiser events.
class ClusterBackend final : public Backend {
 public:
  ~ClusterBackend() override {
    if (node_) node_->Stop();  // its threads step the replica below
  }

  Status Open(const config::Config& config, const Clock& clock) {
    const store::ClusterOptions& cluster = config.cluster;
    const std::string& url = cluster.database_url;
    url_ = url;
    const std::string node_id =
        cluster.node_id.empty() ? cluster::DefaultNodeId(config.http.listen) : cluster.node_id;
    ADS_ASSIGN_OR_RETURN(ClusterStore opened, OpenClusterStore(url));
    pg_ = opened.postgres;
    pg_activity_ = opened.activity;
    ADS_ASSIGN_OR_RETURN(node_, cluster::ClusterNode::Open(cluster, node_id, clock));
    // The node's counters belong to node_ (the aliasing constructor: no ownership).
    stores_ = {
        pg_, pg_activity_,
        std::shared_ptr<store::CampaignCounterStore>(std::shared_ptr<void>(), &node_->counters())};
    // The node's replica of wallet activity: serving reads it, never PostgreSQL.
    ADS_RETURN_IF_ERROR(CreateDataDirectory(config.data_dir));
    ADS_ASSIGN_OR_RETURN(index_,
                         store::LmdbActivityIndex::Open(ActivityIndexPath(config.data_dir)));
    node_->PruneActivityLog(
        [this](int64_t cutoff) { return pg_activity_->PruneChangesBefore(cutoff); });
    // Bootstrapped (or caught up) before serving: a new node answers from the cluster's data.
    replica_ = std::make_unique<cluster::ActivityReplica>(*pg_activity_, *index_);
    ADS_RETURN_IF_ERROR(CatchUpActivity());
    node_->FollowActivity([this] { return CatchUpActivity(); }, std::chrono::milliseconds(250));
    ADS_ASSIGN_OR_RETURN(identity_, store::PostgresStore::Open(url));
    ADS_ASSIGN_OR_RETURN(accounts_, store::PostgresStore::Open(url));
    ADS_ASSIGN_OR_RETURN(auto events, store::PostgresEventsStore::Open(url));
    events->SetNodeId(node_->node_id());
    events_ = std::move(events);
    ADS_ASSIGN_OR_RETURN(
        outbox_, store::SqliteEventOutbox::Open(
                     (std::filesystem::path(config.data_dir) / "event-outbox.db").string()));
    buffered_clicks_ = std::make_unique<events::BufferedClickSink>(*events_, *outbox_,
                                                                   cluster.max_buffered_clicks);
    // Exposures: every node's, so that a conversion is attributed to an ad whichever node
    // served it.
    ADS_ASSIGN_OR_RETURN(exposures_, store::PostgresExposureStore::Open(url));
    ADS_ASSIGN_OR_RETURN(reports_, store::PostgresReportStore::Open(url));
    ADS_ASSIGN_OR_RETURN(advertiser_events_, store::PostgresAdvertiserEventsStore::Open(url));
    buffered_advertiser_events_ = std::make_unique<events::BufferedAdvertiserEventSink>(
        *advertiser_events_, *outbox_, cluster.max_buffered_clicks);
    node_->DeliverBuffered([this] {
      if (buffered_advertiser_events_->buffered() == 0) return;
      Result<int64_t> delivered = buffered_advertiser_events_->Deliver(1000);
      if (!delivered.ok() && delivered.status().code() != Code::kUnavailable) {
        ADS_LOG(warn, "buffered advertiser events not delivered; retrying", "status",
                delivered.status());
      }
    });
    ADS_LOG(info, "cluster mode", "node", node_id, "data", config.data_dir);
    return OkStatus();
  }

  Status CatchUpActivity() override {
    MutexLock lock(replica_mu_);
    return replica_->Step();
  }

  std::unique_ptr<IndexerThread> MakeIndexer(const IndexerOptions& options,
                                             ingest::chain::BlockSink* sink) override {
    Result<std::unique_ptr<cluster::ClusterIndexer>> leader =
        OpenClusterIndexer(*pg_, *pg_activity_, url_, options, sink);
    if (!leader.ok()) {
      ADS_LOG(error, "indexer not started; serving goes on", "status", leader.status());
    }
    return std::make_unique<IndexerThread>(leader.ok() ? std::move(*leader) : nullptr);
  }

 private:
  std::string url_;
  std::shared_ptr<store::PostgresStore> pg_;
  std::shared_ptr<store::PostgresActivityStore> pg_activity_;
  // Stepped by the node's replica thread and by admin writes (read-your-writes), one at a time.
  Mutex replica_mu_;
  std::unique_ptr<cluster::ActivityReplica> replica_ ADS_PT_GUARDED_BY(replica_mu_);
};

}  // namespace

Result<std::unique_ptr<Backend>> Backend::Open(const config::Config& config, const Clock& clock) {
  std::unique_ptr<Backend> backend;
  if (config.cluster.enabled()) {
    auto cluster = std::unique_ptr<ClusterBackend>(new ClusterBackend());
    ADS_RETURN_IF_ERROR(cluster->Open(config, clock));
    backend = std::move(cluster);
  } else {
    auto embedded = std::unique_ptr<EmbeddedBackend>(new EmbeddedBackend());
    ADS_RETURN_IF_ERROR(embedded->Open(config));
    backend = std::move(embedded);
  }
  backend->advertiser_event_log_ = std::make_unique<events::AdvertiserEventLog>(
      *backend->advertiser_events_, backend->advertiser_event_sink());
  return backend;
}

Backend::~Backend() = default;

store::ClickSink& Backend::click_sink() {
  if (buffered_clicks_) return *buffered_clicks_;
  return *events_;
}

store::AdvertiserEventSink& Backend::advertiser_event_sink() {
  if (buffered_advertiser_events_) return *buffered_advertiser_events_;
  return *advertiser_events_;
}

int64_t Backend::clicks_buffered() const {
  return buffered_clicks_ ? buffered_clicks_->buffered() : 0;
}

int64_t Backend::advertiser_events_buffered() const {
  return buffered_advertiser_events_ ? buffered_advertiser_events_->buffered() : 0;
}

}  // namespace adserver::app
