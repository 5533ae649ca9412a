#pragma once

// GET /metrics (issue 19): the Prometheus text exposition of a running server, gathered at
// scrape time from counters the components keep per thread or per event loop (the ad path
// gains no shared atomic), gauges read from their owners and the process's /proc entries.

#include <atomic>
#include <cstdint>
#include <string>

#include "common/published.h"
#include "decision/activity_index.h"
#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/live_state.h"
#include "events/events_service.h"
#include "http/server.h"
#include "identity/identity_service.h"
#include "ingest/snapshot_publisher.h"
#include "serve/ad_handler.h"
#include "serve/events_handler.h"
#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::cluster {
class ClusterPlacements;
}
namespace adserver::store {
class ReadCacheThread;
}

namespace adserver::app {

class IndexerThread;

// What a scrape reads; null members are left out (a component that is not running).
struct MetricsSources {
  const http::Server* http = nullptr;
  const serve::AdHandler* ads = nullptr;
  const events::EventsService* events = nullptr;
  const serve::EventsHandler* advertiser_events = nullptr;
  const Published<decision::Catalog>* catalogs = nullptr;
  const Published<decision::ActivityIndex>* activity = nullptr;
  const ingest::SnapshotPublisher* snapshots = nullptr;
  const store::WalletReadCache* wallet_table = nullptr;  // with the wallet table
  const store::ReadCacheThread* read_cache = nullptr;
  const IndexerThread* indexer = nullptr;
  int64_t chain_id = 0;
  const identity::IdentityService* identity = nullptr;
  const std::atomic<uint64_t>* conversions_billed = nullptr;
  const std::atomic<uint64_t>* conversions_reverted = nullptr;
  const std::atomic<uint64_t>* conversions_over_budget = nullptr;  // optional
  // Spend per campaign ([metrics] campaign_spend; one series per campaign): null = off.
  const decision::BudgetLedger* ledger = nullptr;
  // The decision engine's learned state (per-placement learning's pairs against their limit).
  const decision::LiveState* live = nullptr;
  // Cluster mode: the per-placement counts shared with the other nodes (null = not shared).
  const cluster::ClusterPlacements* shared_placements = nullptr;
};

// The whole exposition (text format 0.0.4).
std::string RenderMetrics(const MetricsSources& sources);

// Content-Type of the exposition.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace adserver::app
