#pragma once

// Where an installation keeps its records (issue 41 item 2), behind one interface: the embedded
// default (SQLite and LMDB files in the data directory) or a cluster node (PostgreSQL and Redis
// through cluster::ClusterNode, with the node's LMDB replica of wallet activity and its click
// outbox on local disk). app::Server opens one (Backend::Open) and composes everything else
// from its parts; what differs between the two modes is in backend.cc or behind node().

#include <cstdint>
#include <memory>

#include "app/indexer.h"
#include "cluster/node.h"
#include "common/clock.h"
#include "common/status.h"
#include "config/config.h"
#include "events/advertiser_event_log.h"
#include "events/buffered_click_sink.h"
#include "ingest/chain/block_sink.h"
#include "store/account_store.h"
#include "store/advertiser_events_store.h"
#include "store/events_store.h"
#include "store/exposure_store.h"
#include "store/identity_store.h"
#include "store/lmdb/lmdb_activity_index.h"
#include "store/report_store.h"
#include "store/sqlite/sqlite_event_outbox.h"
#include "store/stores.h"

namespace adserver::app {

class Backend {
 public:
  // Opens every store of `config` (creating the data directory). Cluster mode also connects the
  // node (config.cluster) and catches its activity replica up before it returns, so a new node
  // answers from the cluster's data. `clock` must outlive the result.
  static Result<std::unique_ptr<Backend>> Open(const config::Config& config, const Clock& clock);
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // The system of record: inventory, wallet activity and the decision counters.
  const store::Stores& stores() const { return stores_; }
  // What serving reads wallet activity from: the record itself embedded, the node's replica of
  // PostgreSQL's in cluster mode. Shared with the live indexer (LMDB is opened once).
  const std::shared_ptr<store::LmdbActivityIndex>& activity_index() const { return index_; }
  // Brings activity_index() up to the record now (cluster mode: one replica step; embedded it
  // is the record), so that an admin write is visible when its call returns.
  virtual Status CatchUpActivity() { return OkStatus(); }

  // Clicks, conversions and rollups, and where the click writer commits its batches: the store
  // itself, or in cluster mode a sink that keeps clicks on local disk while PostgreSQL is away.
  store::EventsStore& events() { return *events_; }
  store::ClickSink& click_sink();
  store::AdvertiserEventsStore& advertiser_events() { return *advertiser_events_; }
  // Where POST /v1/events stores: through the outbox's sink in cluster mode.
  const events::AdvertiserEventLog& advertiser_event_log() const { return *advertiser_event_log_; }
  store::ExposureStore& exposures() { return *exposures_; }
  store::ReportStore& reports() { return *reports_; }
  store::AccountStore& accounts() { return *accounts_; }
  store::IdentityStore& identity() { return *identity_; }
  // Clicks and advertiser events waiting in the outbox (0 embedded).
  int64_t clicks_buffered() const;
  int64_t advertiser_events_buffered() const;

  // Cluster mode's node: leases, shared caps, the other nodes' counters, the change follower
  // (null embedded).
  cluster::ClusterNode* node() const { return node_.get(); }

  // The live indexer of `options`, attributing blocks' transactions to `sink` (optional):
  // embedded, one over the data directory's index; in cluster mode one that indexes into
  // PostgreSQL while this node leads the chain (null if none could be made: logged).
  virtual std::unique_ptr<IndexerThread> MakeIndexer(const IndexerOptions& options,
                                                     ingest::chain::BlockSink* sink) = 0;

 protected:
  Backend() = default;
  store::AdvertiserEventSink& advertiser_event_sink();

  // Destroyed in reverse order: the node after every store (its threads are stopped first, by
  // Server::Stop or ~ClusterBackend).
  std::unique_ptr<cluster::ClusterNode> node_;
  store::Stores stores_;
  std::shared_ptr<store::LmdbActivityIndex> index_;
  std::unique_ptr<store::IdentityStore> identity_;
  std::unique_ptr<store::AccountStore> accounts_;
  // Cluster mode: clicks and advertiser events kept while PostgreSQL is unreachable.
  std::unique_ptr<store::SqliteEventOutbox> outbox_;
  std::unique_ptr<store::EventsStore> events_;
  std::unique_ptr<events::BufferedClickSink> buffered_clicks_;
  std::unique_ptr<store::ExposureStore> exposures_;
  std::unique_ptr<store::ReportStore> reports_;
  std::unique_ptr<store::AdvertiserEventsStore> advertiser_events_;
  std::unique_ptr<events::BufferedAdvertiserEventSink> buffered_advertiser_events_;
  std::unique_ptr<events::AdvertiserEventLog> advertiser_event_log_;
};

}  // namespace adserver::app
