#include "app/cli_attribution.h"

#include <thread>

#include "app/server.h"
#include "cluster/budget_takes.h"
#include "common/clock.h"
#include "common/log.h"
#include "ingest/catalog_builder.h"
#include "store/lmdb/lmdb_exposure_store.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_exposure_store.h"
#include "store/redis/redis_budget_authority.h"
#include "store/sqlite/sqlite_events_store.h"

namespace adserver::app {

Result<std::unique_ptr<CliAttribution>> CliAttribution::Open(const std::string& data_dir,
                                                             const store::Stores& stores) {
  auto out = std::make_unique<CliAttribution>(stores);
  ADS_ASSIGN_OR_RETURN(out->owned_events_, store::SqliteEventsStore::Open(DatabasePath(data_dir)));
  ADS_ASSIGN_OR_RETURN(out->owned_exposures_,
                       store::LmdbExposureStore::Open(ExposureIndexPath(data_dir)));
  out->events_ = out->owned_events_.get();
  out->exposures_ = out->owned_exposures_.get();
  out->Attach();
  ADS_RETURN_IF_ERROR(out->Refresh());
  return out;
}

Result<std::unique_ptr<CliAttribution>> CliAttribution::OpenCluster(
    const store::ClusterOptions& cluster, const store::Stores& stores) {
  auto out = std::make_unique<CliAttribution>(stores);
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PostgresEventsStore> events,
                       store::PostgresEventsStore::Open(cluster.database_url));
  CliAttribution* self = out.get();
  events->BillConversionsTo(std::string(store::kCliNodeId),
                            [self](store::Id id) { return self->Budgeted(id); });
  out->owned_events_ = std::move(events);
  ADS_ASSIGN_OR_RETURN(out->owned_exposures_,
                       store::PostgresExposureStore::Open(cluster.database_url));
  ADS_ASSIGN_OR_RETURN(out->owned_counters_, store::PostgresStore::Open(cluster.database_url));
  // An unreachable Redis is not an error here: the takes stay queued (DeliverBudgetTakes).
  ADS_ASSIGN_OR_RETURN(out->owned_budgets_,
                       store::RedisBudgetAuthority::Open(cluster.redis_url,
                                                         cluster.redis_key_prefix, true));
  out->events_ = out->owned_events_.get();
  out->exposures_ = out->owned_exposures_.get();
  out->counters_ = out->owned_counters_.get();
  out->budgets_ = out->owned_budgets_.get();
  out->Attach();
  ADS_RETURN_IF_ERROR(out->Refresh());
  // What a run killed before delivering left queued.
  if (Status delivered = out->DeliverBudgetTakes(); !delivered.ok()) {
    ADS_LOG(warn, "queued budget takes not delivered to Redis; retrying after the next batch",
            "status", delivered);
  }
  return out;
}

CliAttribution::~CliAttribution() = default;

void CliAttribution::Attach() {
  // Cluster mode bills in the transactions that record and revert (OpenCluster).
  attributor_ = std::make_unique<events::ConversionAttributor>(
      *exposures_, *events_, catalogs_, SystemClock::Get(),
      [this](const store::ConversionRecord&) { ++recorded_; }, nullptr);
  attributor_->SetSpentTotals(
      [this](std::unordered_map<int64_t, Micros>& spent) { return SpentTotals(spent); });
}

// A campaign's spend as the committed events make it (the rollups, which take each conversion
// in the transaction that records it, and the clicks not rolled up yet), or as a running
// server last flushed its counters (embedded: its impressions reach the rollups a little later),
// whichever is more.
Status CliAttribution::SpentTotals(std::unordered_map<int64_t, Micros>& spent) {
  const auto raise = [&](const std::vector<store::CampaignCountersRecord>& rows) {
    for (const store::CampaignCountersRecord& r : rows) {
      auto it = spent.find(r.campaign_id);
      if (it != spent.end()) it->second = std::max(it->second, r.total_spend);
    }
  };
  ADS_ASSIGN_OR_RETURN(std::vector<store::CampaignCountersRecord> from_events,
                       events_->CountersFromEvents(SystemClock::Get().NowSeconds()));
  raise(from_events);
  if (counters_ == nullptr) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::CampaignCountersRecord> flushed,
                         stored_counters_->LoadCampaignCounters());
    raise(flushed);
  }
  return OkStatus();
}

Status CliAttribution::Refresh() {
  auto now = std::chrono::steady_clock::now();
  if (catalogs_.Current() && now - built_ < kCatalogAge) return OkStatus();
  ADS_ASSIGN_OR_RETURN(store::CatalogData data, inventory_->LoadCatalogData());
  ADS_ASSIGN_OR_RETURN(std::shared_ptr<const decision::Catalog> catalog,
                       ingest::BuildCatalog(data, decision::CatalogOptions{}));
  catalogs_.Publish(std::move(catalog));
  built_ = now;
  return OkStatus();
}

bool CliAttribution::Budgeted(store::Id id) const {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::ConversionCampaign* campaign =
      catalog ? catalog->FindConversionCampaign(id) : nullptr;
  return campaign != nullptr && campaign->total_budget_micros.has_value();
}

Status CliAttribution::DeliverBudgetTakes() {
  return cluster::DeliverBudgetTakes(*counters_, *budgets_);
}

Status CliAttribution::Finish() {
  if (counters_ == nullptr) return OkStatus();
  Status st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    st = DeliverBudgetTakes();
    if (st.ok()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
  }
  ADS_LOG(error, "budget takes of recorded conversions not delivered to Redis; they stay queued "
          "for the next run, and nodes may lease up to that much more meanwhile", "status", st);
  return OkStatus();
}

Status CliAttribution::OnApplied(int64_t chain_id,
                                 std::span<const ingest::chain::AppliedBlock> blocks) {
  if (Status refreshed = Refresh(); !refreshed.ok()) {
    ADS_LOG(warn, "catalog not rebuilt; attributing with the previous one", "status", refreshed);
  }
  ADS_RETURN_IF_ERROR(attributor_->OnApplied(chain_id, blocks));
  if (counters_ != nullptr) {
    // The blocks' conversions are recorded and billed: a delivery to Redis that fails now is
    // retried after the next batch, never by failing (and so re-offering) blocks attributed.
    if (Status delivered = DeliverBudgetTakes(); !delivered.ok()) {
      ADS_LOG(warn, "budget takes not delivered to Redis; retrying after the next batch",
              "status", delivered);
    }
  }
  return OkStatus();
}

void CliAttribution::OnReverted(int64_t chain_id,
                                std::span<const ingest::chain::RevertedBlock> blocks) {
  attributor_->OnReverted(chain_id, blocks);
  if (counters_ != nullptr) {
    if (Status delivered = DeliverBudgetTakes(); !delivered.ok()) {
      ADS_LOG(warn, "budget of reverted conversions not given back to Redis yet; retrying after "
              "the next batch", "status", delivered);
    }
  }
}

bool CliAttribution::Wants(int64_t project_id, int64_t unix_seconds) const {
  return attributor_->Wants(project_id, unix_seconds);
}

Status CliAttribution::OnImported(std::span<const ingest::chain::ChainInteraction> interactions) {
  ADS_RETURN_IF_ERROR(attributor_->OnImported(interactions));
  if (counters_ != nullptr) {
    if (Status delivered = DeliverBudgetTakes(); !delivered.ok()) {
      ADS_LOG(warn, "budget takes not delivered to Redis; retrying at the end", "status",
              delivered);
    }
  }
  return OkStatus();
}

}  // namespace adserver::app
