#include "app/server.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <system_error>

#include "app/metrics_endpoint.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "common/mutex.h"
#include "console/console.h"
#include "events/served_counters.h"
#include "serve/ad_render.h"
#include "store/lmdb/lmdb_activity_store.h"
#include "store/postgres/postgres_report_store.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_identity_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "store/sqlite/sqlite_store.h"

namespace adserver::app {
namespace {
// Upper bound of the wallet table's change-log poll (see Server::Init).
constexpr std::chrono::milliseconds kReadCachePoll{50};

// The body of /readyz. walletTable: lookups are answered from the wallet table ("ready") or, while
// it is being built, from LMDB ("building"); both are correct, the first is faster.
// walletTableInMemory: the table is served from its in-memory copy (fastest).
// walletTableBulkPending (only when true): a bulk change (an import) is in LMDB but not yet in the
// table, which answers with those wallets' earlier values until it is rebuilt. indexer (with
// [indexer]): the chain, the node's head at the last step, the next block to apply and the lag
// (blocks behind the head, confirmations included), for the console's health page. `table` is
// null without the wallet table, `indexer` without [indexer].
std::string ReadyBody(const store::WalletReadCache* table_cache, const IndexerThread* indexer,
                      int64_t chain_id) {
  std::string body = R"({"status":"ready","walletTable":)";
  if (table_cache == nullptr) {
    body += R"("off")";
  } else {
    store::ReadCacheStatus table = table_cache->GetStatus();
    body +=
        table.table ? R"("ready","walletTableInMemory":)" : R"("building","walletTableInMemory":)";
    body += table.table_in_memory ? "true" : "false";
    if (table.table && table.bulk_pending) body += R"(,"walletTableBulkPending":true)";
  }
  if (std::optional<ingest::chain::ChainIndexer::Progress> progress =
          indexer ? indexer->progress() : std::nullopt) {
    uint64_t lag = progress->next_block == 0 || progress->head + 1 < progress->next_block
                       ? 0
                       : progress->head + 1 - progress->next_block;
    body += R"(,"indexer":[{"chainId":)" + std::to_string(chain_id) + R"(,"head":)" +
            std::to_string(progress->head) + R"(,"nextBlock":)" +
            std::to_string(progress->next_block) + R"(,"lag":)" + std::to_string(lag) + "}]";
  }
  return body + "}";
}

}  // namespace


namespace {
// The per-placement learning key of a served impression, click or conversion: rows counted
// under events::kOtherAdUnit (adUnitIds past the serving counters' limit) are the publisher's.
decision::PlacementKey PlacementOf(int64_t campaign_id, int64_t publisher_id,
                                   std::string_view ad_unit_id) {
  return {campaign_id, publisher_id,
          ad_unit_id == events::kOtherAdUnit ? 0 : decision::AdUnitKey(ad_unit_id)};
}

// "https://ads.example:8443/x" -> "https://ads.example:8443"; "" for anything else.
std::string PublicOrigin(const std::string& public_url) {
  size_t scheme = public_url.find("://");
  if (scheme == std::string::npos) return "";
  return public_url.substr(0, public_url.find('/', scheme + 3));
}
}  // namespace


Result<std::unique_ptr<Server>> Server::Create(const config::Config& config) {
  std::unique_ptr<Server> server(new Server(config));
  ADS_RETURN_IF_ERROR(server->Init());
  return server;
}

// Budgets, counters and caps (issue 4): recovered from the store before serving.
Status Server::InitDecisionState() {
  decision_hooks_.options = config_.decision;
  live_ = std::make_unique<decision::LiveState>(config_.live, decision_hooks_.options);
  flusher_ = std::make_unique<ingest::CounterFlusher>(*backend_->stores().counters, live_->ledger);
  ADS_RETURN_IF_ERROR(flusher_->Recover());
  // Impressions without clicks or conversions lower learned rates; only a recompute lowers the
  // per-campaign lift ceilings the auction prunes with (clicks raise them at once).
  // Embedded, the flushes follow the conversions of other processes (CounterFlusher::SetMarks,
  // set in InitEvents).
  flusher_->SetTick([this] {
    if (auto catalog = catalogs_.Current()) {
      decision::RecomputeRateLift(*live_, *catalog, clock_.NowSeconds());
    }
  });
  if (auto catalog = catalogs_.Current()) {
    decision::RecomputeRateLift(*live_, *catalog, clock_.NowSeconds());
  }
  if (cluster_) {
    cluster_->Attach(*live_, catalogs_, [this] { snapshots_->NotifyChanged(); });
    cluster_->SyncNow();  // leases held before the first request
  }
  decision_hooks_.live = live_.get();
  if (!config_.admin.token.empty()) decision_hooks_.admin_token_hash = Sha256(config_.admin.token);
  return OkStatus();
}

// Clicks, serving counters and the click redirect (issue 15). After InitDecisionState: billed
// clicks feed the live counters.
Status Server::InitEvents() {
  ADS_RETURN_IF_ERROR(InitClickLog());
  ADS_RETURN_IF_ERROR(InitConversions());
  ADS_RETURN_IF_ERROR(InitClicks());
  return InitReports();
}

// The click log and its service: batches go to the backend's click sink.
Status Server::InitClickLog() {
  ADS_ASSIGN_OR_RETURN(
      events_, events::EventsService::Create(backend_->events(), backend_->click_sink(), clock_,
                                             config_.events));
  events_->SetOnBilled([this](const store::ClickRecord& click) { CountClick(click); });
  // Per-placement learning (issue 36 item 5): valid impressions per (campaign, publisher).
  events_->SetOnServed([this](std::span<const store::RollupRow> rows) {
    for (const store::RollupRow& row : rows) {
      if (row.campaign_id == 0 || row.fills <= 0) continue;
      NotePlacement(PlacementOf(row.campaign_id, row.publisher_id, row.ad_unit_id), row.fills, 0);
    }
  });
  return OkStatus();
}

Status Server::InitConversions() {
  exposures_ = std::make_unique<events::ExposureRecorder>(backend_->exposures(), catalogs_,
                                                          activity_, clock_);
  conversions_ = std::make_unique<events::ConversionAttributor>(
      backend_->exposures(), backend_->events(), catalogs_, clock_,
      [this](const store::ConversionRecord& c) {
        conversions_billed_.fetch_add(1, std::memory_order_relaxed);
        CountConversion(c);
      },
      [this](const store::ConversionRecord& c) {
        conversions_reverted_.fetch_add(1, std::memory_order_relaxed);
        UncountConversion(c);
      });
  // Conversions bill up to the total budget (issue 37), as the decisions count spend (this
  // node's counters, and in cluster mode the other nodes' as last read).
  conversions_->SetSpentTotals([this](std::unordered_map<int64_t, Micros>& spent) {
    const int64_t now = clock_.NowSeconds();
    for (auto& [campaign, micros] : spent) micros = live_->Read(campaign, now).total_spend;
    return OkStatus();
  });
  // Exposures still buffered when a block lands are written first, so that a transaction
  // right after its serve is attributed like any other.
  conversions_->SetBeforeAttribution([this] {
    Status flushed = exposures_->FlushNow();
    if (!flushed.ok()) ADS_LOG(warn, "exposures not written", "error", flushed.message());
  });
  // Spend lost with the last counter flush (kill -9) comes back from the committed events;
  // conversions other processes record from now on reach the counters through the tick.
  // Not in cluster mode: there the counters are each node's own and the cluster's the sum over
  // nodes, so a conversion is billed only by the node that recorded it (following the others'
  // would bill it once more on every node).
  // Issue 37: from the marks the counters were saved at, so that what other processes billed
  // and reverted while no server ran (and what a kill -9 lost) reaches the counters exactly.
  if (!cluster_) {
    ADS_ASSIGN_OR_RETURN(std::optional<store::CounterMarks> marks,
                         backend_->stores().counters->LoadCounterMarks());
    ADS_RETURN_IF_ERROR(conversions_->StartFollowing(marks));
    flusher_->SetMarks([this](const std::function<void(const store::CounterMarks&)>& take) {
      return conversions_->Snapshot(take);
    });
  }
  if (cluster_) ADS_RETURN_IF_ERROR(ReconcileNodeCounters());
  // Embedded: the counters are checked against the committed events. Not in cluster mode,
  // where the events are every node's and the counters this node's (docs/deploy.md): there
  // each node's counters reconcile with what it billed (above).
  if (!cluster_) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::CampaignCountersRecord> from_events,
                         backend_->events().CountersFromEvents(clock_.NowSeconds()));
    ADS_RETURN_IF_ERROR(flusher_->Reconcile(from_events).status());
  }
  return OkStatus();
}

Status Server::InitClicks() {
  ADS_RETURN_IF_ERROR(InitTraffic());
  ads_->SetTraffic(serve::TrafficGuard{.checks = traffic_.get(), .proxies = &trusted_proxies_});
  clicks_ = std::make_unique<serve::ClickHandler>(
      catalogs_, *events_, clock_,
      [this](int64_t ad_id) -> std::optional<std::string> {
        // Only a destination an operator approved (issue 39), never an edit under review.
        Result<store::AdRecord> ad = backend_->stores().inventory->GetAd(ad_id);
        if (!ad.ok() || !ad->approved) return std::nullopt;
        return ad->approved->cta_url;
      },
      serve::TrafficGuard{.checks = traffic_.get(), .proxies = &trusted_proxies_});
  clicks_->RegisterRoutes(router_);
  std::string public_url = config_.serve.public_url;
  if (public_url.empty()) {
    public_url = "http://" + config_.http.listen;
    ADS_LOG(warn,
            "http.public_url is not set: click URLs use the listen address; set "
            "ADSERVER_PUBLIC_URL to the address visitors reach in production",
            "public_url", public_url);
  }
  // A port chosen at start (":0") is known only after Start(), which sets the URL then.
  if (!public_url.ends_with(":0")) ads_->SetEvents(events_.get(), public_url, exposures_.get());
  events_admin_ = std::make_unique<admin::EventsAdminApi>(
      backend_->events(), *backend_->stores().inventory, *authenticator_);
  events_admin_->SetRateEstimator([this](int64_t id) { return RateEstimateOf(id); });
  events_admin_->RegisterRoutes(router_);
  return OkStatus();
}

// The engine's belief about a campaign's rate: the counts its current draw came from while
// exploring, else its counters (issue 36).
std::optional<admin::RateEstimate> Server::RateEstimateOf(int64_t id) const {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* c = catalog ? catalog->FindCampaign(id) : nullptr;
  if (c == nullptr || c->pricing_model == PricingModel::kCpm || c->bid_micros <= 0) {
    return std::nullopt;
  }
  const std::optional<decision::RateCounts> effective =
      live_->options.explore && c->explore ? live_->rates.Published(id) : std::nullopt;
  const decision::RatePosterior p = decision::CurrentPosterior(
      *c, effective, live_->Read(id, clock_.NowSeconds()), live_->options);
  const decision::RateInterval interval = decision::IntervalOf(p, 0.95);
  return admin::RateEstimate{.rate = c->pricing_model == PricingModel::kCpc ? "ctr" : "cvr",
                             .mean = p.mean,
                             .low = interval.low,
                             .high = interval.high,
                             .events = p.successes,
                             .impressions = p.trials,
                             .prior_mean = p.prior_mean,
                             .prior_weight = p.prior_weight};
}

Status Server::InitReports() {
  SeedPlacements();
  // Cluster mode: the other nodes' per-placement counts from now on (issue 36 item 6).
  if (cluster_ && live_->options.explore && live_->options.placement_prior_events > 0) {
    ADS_RETURN_IF_ERROR(cluster_->SharePlacements(config_.live.placement_pairs));
  }
  SeedConversionDelays();
  reports_admin_ = std::make_unique<admin::ReportsAdminApi>(
      backend_->reports(), *backend_->stores().inventory, clock_, *authenticator_,
      admin::ReportsAdminOptions{
          .minute_retention_seconds = config_.events.minute_rollup_retention_hours * 3600,
          .hour_retention_seconds = config_.events.hour_rollup_retention_days * 86400});
  reports_admin_->RegisterRoutes(router_);
  return OkStatus();
}

Status Server::Reload(const config::Config& config) {
  std::vector<std::string> reloaded, failed;
  log::SetLevel(config.log_level);
  reloaded.push_back("log_level=" + config.log_level);
  // A key ring from its setting; the previous one stays in use when it does not parse.
  auto reload_ring = [&](std::string_view field, const std::string& text, const char* what,
                         const std::function<void(identity::KeyRing)>& replace) {
    Result<identity::KeyRing> keys = identity::KeyRing::Parse(text, field);
    if (!keys.ok()) {
      failed.push_back(std::string(what) + ": " + keys.status().message());
      return;
    }
    const size_t count = keys->size();
    const uint8_t active = keys->active().id;
    replace(std::move(*keys));
    reloaded.push_back(std::string(what) + "=" + std::to_string(count) + " (active " +
                       std::to_string(active) + ")");
  };
  if (identity_ != nullptr && !config.identity.keys.empty()) {
    reload_ring("identity.keys", config.identity.keys, "identity_keys",
                [this](identity::KeyRing ring) { identity_->ReplaceKeys(std::move(ring)); });
  }
  if (events_ != nullptr && !config.events.keys.empty()) {
    reload_ring("events.keys", config.events.keys, "click_keys",
                [this](identity::KeyRing ring) { events_->ReplaceClickKeys(std::move(ring)); });
  }
  if (blocklist_ != nullptr) {
    Status read = blocklist_->ReloadNow();
    if (read.ok()) {
      reloaded.push_back("ip_blocklists=" + std::to_string(config_.traffic.ip_blocklists.size()));
    } else {
      failed.push_back("ip blocklists: " + read.message());
    }
  }
  std::string what;
  for (const std::string& r : reloaded) what += (what.empty() ? "" : ", ") + r;
  ADS_LOG(info, "reloaded on SIGHUP", "what", what,
          "restart_needed_for", "everything else (listen address, data directory, sections)");
  if (failed.empty()) return OkStatus();
  std::string message = "not reloaded, previous kept:";
  for (const std::string& f : failed) message += " " + f + ";";
  return InvalidArgumentError(message);
}

// The invalid-traffic checks (issue 18) the click and event handlers share.
Status Server::InitTraffic() {
  const events::TrafficOptions& o = config_.traffic;
  ADS_ASSIGN_OR_RETURN(trusted_proxies_, http::TrustedProxies::Parse(o.trusted_proxies));
  if (!o.ip_blocklists.empty()) {
    ADS_ASSIGN_OR_RETURN(blocklist_, events::IpBlocklist::Load(o.ip_blocklists));
    blocklist_->Start(std::chrono::seconds(o.blocklist_check_seconds));
  }
  const events::CrawlerMatcher& crawlers = events::CrawlerMatcher::Builtin();
  traffic_ = std::make_unique<events::TrafficChecks>(o, crawlers, blocklist_.get());
  ADS_LOG(info, "invalid-traffic checks", "crawler_patterns", crawlers.pattern_count(),
          "ip_blocklists", o.ip_blocklists.size(), "trusted_proxies", o.trusted_proxies.size());
  return OkStatus();
}

// Per-placement learning's counts survive a restart (issue 36 items 5 and 6): each (campaign,
// publisher)'s valid impressions and clicks (CPC) or conversions (CPA) of the last
// kPlacementSeedDays from the hour rollups (every node's, in cluster mode), folded in by the
// first recompute as a long record (scaled to what forgetting keeps). A failed read is logged:
// the pairs are then learned again from new traffic.
void Server::SeedPlacements() {
  constexpr int64_t kPlacementSeedDays = 30;
  if (!(live_->options.explore && live_->options.placement_prior_events > 0)) return;
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog) return;
  const int64_t now = clock_.NowSeconds();
  store::RollupQuery query{.table = store::RollupTable::kHour,
                           .from = now - kPlacementSeedDays * 86400,
                           .to = now + 3600,
                           .by_ad_unit = live_->options.placement_ad_units,
                           .by_campaign = true,
                           .limit = 1'000'000};
  Result<std::vector<store::RollupGroup>> rows = backend_->reports().QueryRollups(query);
  if (!rows.ok()) {
    ADS_LOG(warn, "per-placement counts not restored; learned again from new traffic", "error",
            rows.status().message());
    return;
  }
  int64_t pairs = 0;
  for (const store::RollupGroup& row : *rows) {
    const decision::Campaign* c = catalog->FindCampaign(row.campaign_id);
    if (c == nullptr || row.fills <= 0 || c->pricing_model == PricingModel::kCpm) continue;
    const int64_t events = c->pricing_model == PricingModel::kCpc ? row.clicks : row.conversions;
    live_->placement_feed.Add(PlacementOf(row.campaign_id, row.publisher_id, row.ad_unit_id),
                              row.fills, events);
    ++pairs;
  }
  ADS_LOG(info, "per-placement counts restored", "pairs", pairs, "days", kPlacementSeedDays);
}

void Server::SeedConversionDelays() {
  constexpr int64_t kDelaySeedDays = 120;
  constexpr int kDelaySeedConversions = 5000;
  delays_from_ = clock_.NowSeconds();
  if (!live_->options.explore || live_->options.conversion_delay_days > 0) return;
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog) return;
  Result<std::vector<store::ConversionRecord>> rows = backend_->events().ListConversions(
      {.from = delays_from_ - kDelaySeedDays * 86400, .limit = kDelaySeedConversions});
  if (!rows.ok()) {
    ADS_LOG(warn, "conversion delays not restored; fitted again from new conversions", "error",
            rows.status().message());
    return;
  }
  int64_t seeded = 0;
  for (const store::ConversionRecord& c : *rows) {
    const decision::Campaign* campaign = catalog->FindCampaign(c.campaign_id);
    if (campaign == nullptr || campaign->pricing_model != PricingModel::kCpa ||
        c.status != store::ConversionStatus::kBilled || c.touched_at <= 0) {
      continue;
    }
    // Only windows that have passed: every conversion of those serves is in, so their delays
    // are a sample without the censoring the fit otherwise accounts for.
    const int64_t window =
        std::max(1, campaign->conversion ? campaign->conversion->window_days : 14);
    if (c.touched_at > delays_from_ - window * 86400) continue;
    const int64_t at = c.block_time > 0 ? c.block_time : c.recorded_at;
    live_->delay_feed.Add(c.campaign_id,
                          static_cast<double>(std::max<int64_t>(at - c.touched_at, 0)));
    ++seeded;
  }
  ADS_LOG(info, "conversion delays restored", "conversions", seeded);
}

void Server::NotePlacement(const decision::PlacementKey& key, int64_t impressions, int64_t events) {
  live_->placement_feed.Add(key, impressions, events);
  cluster::ClusterPlacements* shared = cluster_ ? cluster_->placements() : nullptr;
  if (shared == nullptr) return;
  // Only CPC and CPA campaigns are learned per placement: CPM rows would be written for nothing.
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* campaign = catalog ? catalog->FindCampaign(key.campaign_id) : nullptr;
  if (campaign != nullptr && campaign->pricing_model != PricingModel::kCpm) {
    shared->Note(key, impressions, events);
  }
}

void Server::CountClick(const store::ClickRecord& click) {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* campaign = catalog ? catalog->FindCampaign(click.campaign_id) : nullptr;
  if (campaign != nullptr) {
    decision::RecordClick(*live_, *campaign, click.price, click.clicked_at);
    if (campaign->pricing_model == PricingModel::kCpc) {
      NotePlacement(PlacementOf(click.campaign_id, click.publisher_id, click.ad_unit_id), 0, 1);
    }
  } else {
    live_->ledger.RecordClick(click.campaign_id, click.price, click.clicked_at);
  }
}

void Server::CountConversion(const store::ConversionRecord& c) {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* campaign = catalog ? catalog->FindCampaign(c.campaign_id) : nullptr;
  if (campaign != nullptr) {
    decision::RecordConversion(*live_, *campaign, c.price, c.recorded_at);
    if (campaign->pricing_model == PricingModel::kCpa) {
      NotePlacement(PlacementOf(c.campaign_id, c.publisher_id, c.ad_unit_id), 0, 1);
      if (c.touched_at >= delays_from_ && delays_from_ > 0) {
        const int64_t at = c.block_time > 0 ? c.block_time : c.recorded_at;
        live_->delay_feed.Add(c.campaign_id,
                              static_cast<double>(std::max<int64_t>(at - c.touched_at, 0)));
      }
    }
  } else {
    live_->ledger.RecordConversion(c.campaign_id, c.price, c.recorded_at);
  }
}

void Server::UncountConversion(const store::ConversionRecord& c) {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* campaign = catalog ? catalog->FindCampaign(c.campaign_id) : nullptr;
  decision::UndoConversion(*live_, c.campaign_id, campaign, c.price, c.recorded_at);
  if (campaign != nullptr && campaign->pricing_model == PricingModel::kCpa) {
    NotePlacement(PlacementOf(c.campaign_id, c.publisher_id, c.ad_unit_id), 0, -1);
  }
}

// Issue 37 item 3. Each node's counters are its own rows (kReplace by its flushes), so a kill -9
// loses what it billed since its last flush. Its clicks, conversions and reverts name it, and
// every flush saves, in its transaction, the marks of what the saved counters hold
// (EventsService::SnapshotClicks, ConversionAttributor::SnapshotOwn: read with the ledger
// while nothing is billed or undone). At start the events past the marks are counted once and
// saved with their new marks before serving. A node that never saved marks (new, or upgraded)
// has had no counters flushed since its events began to name it: all of them are counted.
Status Server::ReconcileNodeCounters() {
  store::PostgresStore& counters = cluster_->counters();
  ADS_ASSIGN_OR_RETURN(std::optional<store::CounterMarks> marks, counters.LoadCounterMarks());
  const store::CounterMarks from = marks.value_or(store::CounterMarks{});
  ADS_ASSIGN_OR_RETURN(store::NodeBacklog backlog,
                       backend_->events().NodeBacklogAfter(cluster_->node_id(), from.click_id,
                                                           from.conversion_id, from.revert_seq));
  Micros added = 0;
  for (const store::ClickRecord& click : backlog.clicks) {
    CountClick(click);
    added += click.price;
  }
  for (const store::ConversionRecord& c : backlog.conversions) {
    CountConversion(c);
    added += c.price;
  }
  for (const store::ConversionRecord& c : backlog.reverts) {
    UncountConversion(c);
    added -= c.price;
  }
  events_->SetAppliedClickId(backlog.last_click_id);
  conversions_->SetOwnMarks(backlog.last_conversion_id, backlog.last_revert_seq);
  flusher_->SetMarks([this](const std::function<void(const store::CounterMarks&)>& take) {
    events_->SnapshotClicks([&](store::Id click_id) {
      conversions_->SnapshotOwn([&](const store::CounterMarks& own) {
        store::CounterMarks m = own;
        m.click_id = click_id;
        take(m);
      });
    });
    return OkStatus();
  });
  ADS_RETURN_IF_ERROR(flusher_->FlushNow());
  if (!backlog.clicks.empty() || !backlog.conversions.empty() || !backlog.reverts.empty()) {
    ADS_LOG(warn,
            "node counters reconciled with the events this node billed after its last flush (a "
            "kill -9, or a first start)",
            "node", cluster_->node_id(), "clicks", backlog.clicks.size(), "conversions",
            backlog.conversions.size(), "reverts", backlog.reverts.size(), "spend_micros", added);
  }
  return OkStatus();
}

// POST /v1/events and its read-back (issue 15). After InitEvents (the person digest) and
// the identity service (the consented cookie).
Status Server::InitAdvertiserEvents() {
  events::EventsService* events = events_.get();
  advertiser_events_ = std::make_unique<serve::EventsHandler>(
      catalogs_, backend_->advertiser_event_log(),
      [events](std::span<const Address> wallets) { return events->PersonDigest(wallets); }, clock_,
      identity_.get(), serve::AdvertiserEventsOptions{},
      serve::TrafficGuard{.checks = traffic_.get(), .proxies = &trusted_proxies_});
  advertiser_events_->RegisterRoutes(router_);
  advertiser_events_admin_ = std::make_unique<admin::AdvertiserEventsAdminApi>(
      backend_->advertiser_events(), *backend_->stores().inventory, *authenticator_);
  advertiser_events_admin_->RegisterRoutes(router_);
  return OkStatus();
}

// Users, tokens and console sessions (issue 16): the authenticator every admin route uses.
// Before InitEvents (its admin routes).
Status Server::InitAccounts() {
  admin::AdminOptions options = config_.admin;
  options.public_origin = PublicOrigin(config_.serve.public_url);
  authenticator_ = std::make_unique<admin::Authenticator>(options, &backend_->accounts(), clock_);
  accounts_admin_ = std::make_unique<admin::AccountsAdminApi>(
      backend_->accounts(), *backend_->stores().inventory, *authenticator_);
  accounts_admin_->RegisterRoutes(router_);
  return OkStatus();
}

Status Server::Init() {
  ADS_ASSIGN_OR_RETURN(backend_, Backend::Open(config_, clock_));
  cluster_ = backend_->node();
  ADS_RETURN_IF_ERROR(InitActivity());
  ADS_RETURN_IF_ERROR(InitSnapshots());
  ADS_ASSIGN_OR_RETURN(identity_, identity::IdentityService::Create(&backend_->identity(), clock_,
                                                                    config_.identity));
  ADS_RETURN_IF_ERROR(identity_->Load());
  ads_ = std::make_unique<serve::AdHandler>(catalogs_, activity_, clock_, config_.serve,
                                            identity_.get());
  ADS_RETURN_IF_ERROR(InitDecisionState());
  ads_->SetDecisionHooks(&decision_hooks_);
  ADS_RETURN_IF_ERROR(InitAccounts());
  ADS_RETURN_IF_ERROR(InitEvents());
  // The live indexer attributes onchain conversions as it applies blocks (issue 15).
  if (config_.indexer) indexer_ = backend_->MakeIndexer(*config_.indexer, conversions_.get());
  ads_->RegisterRoutes(router_);
  admin::AdminOptions admin_options = config_.admin;
  admin_options.import_ledger_path = ImportLedgerPath(config_.data_dir);
  admin_options.transactions = conversions_.get();  // uploads with tx hashes can convert
  admin_ =
      std::make_unique<admin::AdminApi>(*backend_->stores().inventory, *backend_->stores().activity,
                                        *snapshots_, clock_, admin_options, *authenticator_);
  admin_->RegisterRoutes(router_);
  identity_admin_ = std::make_unique<admin::IdentityAdminApi>(*identity_, *authenticator_);
  identity_admin_->RegisterRoutes(router_);
  ADS_RETURN_IF_ERROR(InitAdvertiserEvents());
  console::RegisterRoutes(router_);  // the web console's built-in assets (issue 16)
  RegisterServiceRoutes();
  return OkStatus();
}

// Serving reads the LMDB index live: published once, never rebuilt. The indexer shares the
// open environment (LMDB must not be opened twice in one process).
Status Server::InitActivity() {
  store::LmdbActivityIndex& index = *backend_->activity_index();
  activity_.Publish(backend_->activity_index());
  if (config_.snapshots.wallet_table) {
    ADS_RETURN_IF_ERROR(
        index.read_cache().Enable({.in_memory = config_.snapshots.wallet_table_in_memory}));
    // A poll with nothing new is one read of LMDB's last transaction id: poll often, so another
    // process's writes (the indexer's blocks) reach lookups answered from the table quickly.
    read_cache_ = std::make_unique<store::ReadCacheThread>(
        index.read_cache(), std::min(config_.snapshots.poll_interval, kReadCachePoll));
  }
  return OkStatus();
}

// Catalogs from the inventory, rebuilt when it changes.
Status Server::InitSnapshots() {
  ingest::SnapshotOptions snapshot_options = config_.snapshots;
  snapshot_options.rebuild_activity = false;
  // Each catalog renders what responses copy of its ads, once, on the publisher's thread.
  snapshot_options.catalog.render_ad = serve::RenderAd;
  snapshots_ = std::make_unique<ingest::SnapshotPublisher>(*backend_->stores().inventory,
                                                           *backend_->stores().activity, catalogs_,
                                                           activity_, snapshot_options);
  // An admin write is visible when its call returns: the read cache (and in cluster mode the
  // replica first) catch up in the refresh.
  snapshots_->SetActivityRefresh([this]() -> Status {
    ADS_RETURN_IF_ERROR(backend_->CatchUpActivity());
    return read_cache_ ? backend_->activity_index()->read_cache().Refresh() : OkStatus();
  });
  return snapshots_->LoadNow();
}

// /healthz, /metrics (also on metrics.listen) and /readyz.
void Server::RegisterServiceRoutes() {
  router_.Add(http::Method::kGet, "/healthz", [](const http::Request&) {
    http::Response r;
    r.SetHeader("Content-Type", "application/json");
    r.SetHeader("Cache-Control", "no-store");
    r.body = R"({"status":"ok"})";
    return r;
  });
  // Prometheus text (docs/operations.md, "Metrics"): the operator's (admin token or an
  // operator user), on the worker pool; unauthenticated on metrics.listen when set.
  auto metrics = [this](const http::Request&) {
    http::Response r;
    r.SetHeader("Content-Type", kMetricsContentType);
    r.SetHeader("Cache-Control", "no-store");
    r.body = RenderMetricsNow();
    return r;
  };
  router_.Add(
      http::Method::kGet, "/metrics",
      [this, metrics](const http::Request& request) {
        std::variant<admin::Principal, http::Response> who = authenticator_->Authenticate(request);
        if (auto* refused = std::get_if<http::Response>(&who)) return std::move(*refused);
        if (!std::get<admin::Principal>(who).IsOperator()) {
          return http::ErrorResponse(403, "Forbidden", {{"Authorization", "metrics are the operator's"}});
        }
        return metrics(request);
      },
      {.dispatch = http::Dispatch::kWorker});
  metrics_router_.Add(http::Method::kGet, "/metrics", metrics,
                      {.dispatch = http::Dispatch::kWorker});
  router_.Add(http::Method::kGet, "/readyz", [this](const http::Request&) { return Readyz(); });
}

http::Response Server::Readyz() const {
  if (!ready_.load(std::memory_order_acquire)) {
    return http::ErrorResponse(503, "not ready");
  }
  http::Response r;
  r.SetHeader("Content-Type", "application/json");
  r.SetHeader("Cache-Control", "no-store");
  // Start has returned (ready_), so indexer_ is set.
  r.body = ReadyBody(read_cache_ ? &backend_->activity_index()->read_cache() : nullptr, indexer_.get(),
                     config_.indexer ? config_.indexer->chain_id : 0);
  // Cluster mode: the engines as this node last found them; a degraded node keeps serving
  // (docs/deploy.md, "Failure behaviour").
  if (cluster_) {
    cluster::ClusterNode::Health health = cluster_->health();
    r.body.pop_back();
    r.body += R"(,"cluster":{"node":)";
    AppendJsonString(r.body, cluster_->node_id());
    r.body += std::string(R"(,"postgres":")") + (health.postgres ? "ok" : "unavailable") +
              R"(","redis":")" + (health.redis ? "ok" : "unavailable") + R"(","clicksBuffered":)" +
              std::to_string(backend_->clicks_buffered()) + R"(,"advertiserEventsBuffered":)" +
              std::to_string(backend_->advertiser_events_buffered()) + "}}";
  }
  return r;
}

Status Server::Start() {
  events_->Start();
  exposures_->Start();
  // The load balancers in front (trusted proxies) carry many clients each.
  http::ServerOptions http_options = config_.http;
  // Bulk upload bodies are spooled to the data directory (a disk, where /tmp may be memory).
  if (http_options.spool_dir.empty()) http_options.spool_dir = config_.data_dir;
  http_options.exempt_addresses.insert(http_options.exempt_addresses.end(),
                                       config_.traffic.trusted_proxies.begin(),
                                       config_.traffic.trusted_proxies.end());
  ADS_ASSIGN_OR_RETURN(http_, http::Server::Create(http_options, router_));
  ADS_RETURN_IF_ERROR(http_->Start());
  if (config_.serve.public_url.empty() && config_.http.listen.ends_with(":0")) {
    std::string listen = config_.http.listen;
    ads_->SetEvents(events_.get(),
                    "http://" + listen.substr(0, listen.size() - 1) + std::to_string(http_->port()),
                    exposures_.get());
  }
  if (!config_.metrics.listen.empty()) {
    http::ServerOptions metrics_options;
    metrics_options.listen = config_.metrics.listen;
    metrics_options.io_threads = 1;
    metrics_options.worker_threads = 1;
    metrics_options.max_connections = 64;
    ADS_ASSIGN_OR_RETURN(metrics_http_, http::Server::Create(metrics_options, metrics_router_));
    ADS_RETURN_IF_ERROR(metrics_http_->Start());
    ADS_LOG(info, "metrics listening", "port", metrics_http_->port());
  }
  snapshots_->Start();
  if (indexer_) indexer_->Start();
  if (read_cache_) read_cache_->Start();
  identity_->Start();
  flusher_->Start();
  if (cluster_) cluster_->Start();
  ready_.store(true, std::memory_order_release);
  ADS_LOG(info, "serving", "port", http_->port(), "data", config_.data_dir, "admin_api",
          config_.admin.token.empty() ? "disabled" : "enabled", "indexer",
          indexer_ ? "chain " + std::to_string(config_.indexer->chain_id) : std::string("off"));
  return OkStatus();
}

uint16_t Server::port() const { return http_ ? http_->port() : 0; }

std::string Server::RenderMetricsNow() const {
  MetricsSources sources;
  sources.http = http_.get();
  sources.ads = ads_.get();
  sources.events = events_.get();
  sources.advertiser_events = advertiser_events_.get();
  sources.catalogs = &catalogs_;
  sources.activity = &activity_;
  sources.snapshots = snapshots_.get();
  sources.wallet_table = read_cache_ ? &backend_->activity_index()->read_cache() : nullptr;
  sources.read_cache = read_cache_.get();
  sources.indexer = indexer_.get();
  sources.chain_id = config_.indexer ? config_.indexer->chain_id : 0;
  sources.identity = identity_.get();
  sources.conversions_billed = &conversions_billed_;
  if (conversions_) sources.conversions_over_budget = &conversions_->over_budget();
  sources.conversions_reverted = &conversions_reverted_;
  if (config_.metrics.campaign_spend && live_) sources.ledger = &live_->ledger;
  sources.live = live_.get();
  if (cluster_) sources.shared_placements = cluster_->placements();
  return RenderMetrics(sources);
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  ready_.store(false, std::memory_order_release);
  if (http_) http_->Stop();  // drains in-flight requests, including admin writes
  if (metrics_http_) metrics_http_->Stop();
  if (indexer_) indexer_->Stop();    // finishes its step; every applied block is committed
  if (read_cache_) read_cache_->Stop();
  if (identity_) identity_->Stop();  // nothing to flush: identities are not stored
  if (events_) events_->Stop();      // commits queued clicks, writes the last serving counters
  if (exposures_) exposures_->Stop();  // writes the last exposures
  if (flusher_) flusher_->Stop();    // writes the last spend and counters (SIGTERM loses none)
  if (cluster_) cluster_->Stop();    // sends queued cap impressions, gives the leases back
  if (snapshots_) snapshots_->Stop();
  ADS_LOG(info, "stopped");
}

Server::~Server() { Stop(); }

}  // namespace adserver::app
