#pragma once

#include <memory>
#include <string>

#include "admin/accounts_admin.h"
#include "admin/admin_api.h"
#include "admin/advertiser_events_admin.h"
#include "admin/authenticator.h"
#include "admin/events_admin.h"
#include "admin/identity_admin.h"
#include "admin/reports_admin.h"
#include "app/backend.h"
#include "app/data_dir.h"
#include "app/indexer.h"
#include "cluster/node.h"
#include "common/clock.h"
#include "common/published.h"
#include "common/status.h"
#include "config/config.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "decision/live_state.h"
#include "events/conversion_attributor.h"
#include "events/events_service.h"
#include "events/exposure_recorder.h"
#include "events/ip_blocklist.h"
#include "events/traffic_checks.h"
#include "http/client_ip.h"
#include "http/router.h"
#include "http/server.h"
#include "identity/identity_service.h"
#include "ingest/counter_flusher.h"
#include "ingest/snapshot_publisher.h"
#include "serve/ad_handler.h"
#include "serve/click_handler.h"
#include "serve/events_handler.h"
#include "store/account_store.h"
#include "store/events_store.h"
#include "store/lmdb/lmdb_activity_store.h"
#include "store/lmdb/read_cache_thread.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/stores.h"

namespace adserver::app {

// The composition root of `adserver serve`: owns every long-lived object, declared in
// dependency order so destruction runs in reverse. Start/Stop from one thread.
class Server {
 public:
  // Opens the store, loads the first snapshots and builds routes. Does not listen yet.
  static Result<std::unique_ptr<Server>> Create(const config::Config& config);
  ~Server();

  // Listens and starts background snapshot refresh (and the indexer when configured);
  // /readyz answers 200 afterwards.
  Status Start();
  uint16_t port() const;
  // Graceful: stop accepting, drain in-flight requests, stop the indexer and refresh, close the
  // store.
  void Stop();

  // The system of record's parts (store/stores.h).
  store::InventoryStore& inventory() { return *backend_->stores().inventory; }
  store::ActivityStore& activity_store() { return *backend_->stores().activity; }
  // Clicks, conversions and rollups (the demo writes its generated history here).
  store::EventsStore& events() { return backend_->events(); }
  // Every store the server opened, accounts and reports included (app/backend.h).
  Backend& backend() { return *backend_; }
  // SIGHUP: applies what can change without a restart from `config` (the configuration loaded
  // again): the log level, the identity key ring (when keys are configured), and the IP
  // blocklist files (read again). Logs what it reloaded; a part that fails keeps its previous
  // state and is named in the returned error. Other settings need a restart (logged).
  Status Reload(const config::Config& config);
  // Rebuilds and publishes snapshots now (after writing to store() directly).
  Status RefreshSnapshots() { return snapshots_->RefreshNow(); }

  // Registers an extra route before Start (the demo's creative images).
  http::Router& router() { return router_; }

 private:
  explicit Server(const config::Config& config) : config_(config) {}
  Status Init();
  // /healthz, /metrics (also on metrics.listen) and /readyz.
  void RegisterServiceRoutes();
  http::Response Readyz() const;
  Status InitDecisionState();
  Status InitTraffic();
  // The events stores and services, in four steps: the click log and its service; exposures
  // and conversion attribution (with the counters reconciled); invalid-traffic checks, clicks
  // and the events admin API; reports, with the learned state seeded from them.
  Status InitEvents();
  Status InitClickLog();
  Status InitConversions();
  Status InitClicks();
  Status InitReports();
  std::optional<admin::RateEstimate> RateEstimateOf(int64_t id) const;
  // Cluster mode (issue 37 item 3): adds to this node's counters what it billed and undid
  // after they were last saved, then saves them with their marks at every flush.
  Status ReconcileNodeCounters();
  // Per-placement learning: each pair's last 30 days of the hour rollups (every node's).
  void SeedPlacements();
  // Late conversions (issue 36 item 4): the delays of recent conversions whose window has passed
  // seed the fitted conversion delay; later ones are fed as they are billed if their serve or
  // click is from this process's life (delays_from_), whose impressions the fit knows.
  void SeedConversionDelays();
  int64_t delays_from_ = 0;
  // Counts of one (campaign, publisher) pair reaching the placement feed (and, in cluster mode,
  // the other nodes through PostgreSQL).
  void NotePlacement(const decision::PlacementKey& key, int64_t impressions, int64_t events);
  // A billed click, a billed conversion and a reverted one reaching the live counters.
  void CountClick(const store::ClickRecord& click);
  void CountConversion(const store::ConversionRecord& c);
  void UncountConversion(const store::ConversionRecord& c);
  Status InitAdvertiserEvents();
  Status InitAccounts();
  // Publishes the activity index to serving, with its read cache.
  Status InitActivity();
  Status InitSnapshots();

  config::Config config_;
  const Clock& clock_ = SystemClock::Get();
  // Every store, embedded or a cluster node's (app/backend.h); before everything that uses them.
  std::unique_ptr<Backend> backend_;
  // Cluster mode's node (null embedded): backend_->node().
  cluster::ClusterNode* cluster_ = nullptr;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
  std::unique_ptr<ingest::SnapshotPublisher> snapshots_;
  // The live EVM indexer when configured ([indexer]); writes activity to the backend's index.
  std::unique_ptr<IndexerThread> indexer_;
  // The serving read cache of the wallet index (store/lmdb/wallet_table.h).
  std::unique_ptr<store::ReadCacheThread> read_cache_;
  // Decision engine live state (issue 4): budgets, counters, caps; persisted by flusher_.
  std::unique_ptr<decision::LiveState> live_;
  std::unique_ptr<ingest::CounterFlusher> flusher_;
  serve::DecisionHooks decision_hooks_;
  // Identity tokens (cookies, localIds) and the erasure list.
  std::unique_ptr<identity::IdentityService> identity_;
  // The gate of every admin route (users, tokens and console sessions: issue 16), which the
  // admin APIs below use.
  std::unique_ptr<admin::Authenticator> authenticator_;
  std::unique_ptr<admin::AccountsAdminApi> accounts_admin_;
  // Invalid-traffic checks of clicks and advertiser events (issue 18): trusted proxies, the
  // operator's IP blocklists (reloaded by their own thread) and the checks with their rate table.
  http::TrustedProxies trusted_proxies_;
  std::unique_ptr<events::IpBlocklist> blocklist_;
  std::unique_ptr<events::TrafficChecks> traffic_;
  // Clicks and serving counters (issue 15).
  std::unique_ptr<events::EventsService> events_;
  std::unique_ptr<serve::ClickHandler> clicks_;
  // Exposures and the conversion attribution the indexer feeds.
  std::unique_ptr<events::ExposureRecorder> exposures_;
  std::unique_ptr<events::ConversionAttributor> conversions_;
  std::unique_ptr<serve::AdHandler> ads_;
  std::unique_ptr<admin::AdminApi> admin_;
  std::unique_ptr<admin::IdentityAdminApi> identity_admin_;
  std::unique_ptr<admin::EventsAdminApi> events_admin_;
  // Reports (issue 16).
  std::unique_ptr<admin::ReportsAdminApi> reports_admin_;
  // Advertiser events (POST /v1/events, issue 15).
  std::unique_ptr<serve::EventsHandler> advertiser_events_;
  std::unique_ptr<admin::AdvertiserEventsAdminApi> advertiser_events_admin_;
  http::Router router_;
  std::unique_ptr<http::Server> http_;
  // GET /metrics: on router_ for the operator, and alone on metrics_router_ without
  // authentication at config.metrics.listen (metrics_http_, when set).
  std::string RenderMetricsNow() const;
  http::Router metrics_router_;
  std::unique_ptr<http::Server> metrics_http_;
  std::atomic<uint64_t> conversions_billed_{0};
  std::atomic<uint64_t> conversions_reverted_{0};
  std::atomic<bool> ready_{false};
  bool stopped_ = false;
};

}  // namespace adserver::app
