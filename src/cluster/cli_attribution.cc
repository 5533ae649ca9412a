#include "cluster/cli_attribution.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/budget_takes.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/log.h"
#include "ingest/catalog_builder.h"

namespace adserver::cluster {

CliAttribution::CliAttribution(AttributionStores stores) : stores_(std::move(stores)) {
  ADS_CHECK(stores_.inventory && stores_.events && stores_.exposures)
      << "attribution needs the inventory, the events and the exposures";
  ADS_CHECK(!stores_.takes || (stores_.takes->queue && stores_.takes->budgets))
      << "budget takes need their queue and the budgets";
  // Cluster mode bills in the transactions that record and revert (see the header).
  attributor_ = std::make_unique<events::ConversionAttributor>(
      *stores_.exposures, *stores_.events, catalogs_, SystemClock::Get(),
      [this](const store::ConversionRecord&) { ++recorded_; }, nullptr);
  attributor_->SetSpentTotals(
      [this](std::unordered_map<int64_t, Micros>& spent) { return SpentTotals(spent); });
}

CliAttribution::~CliAttribution() = default;

Status CliAttribution::Start() {
  ADS_RETURN_IF_ERROR(Refresh());
  DeliverTakesAfter("start-up (what an earlier run left queued)");
  return OkStatus();
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
                       stores_.events->CountersFromEvents(SystemClock::Get().NowSeconds()));
  raise(from_events);
  if (stores_.counters) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::CampaignCountersRecord> flushed,
                         stores_.counters->LoadCampaignCounters());
    raise(flushed);
  }
  return OkStatus();
}

Status CliAttribution::Refresh() {
  auto now = std::chrono::steady_clock::now();
  if (catalogs_.Current() && now - built_ < kCatalogAge) return OkStatus();
  ADS_ASSIGN_OR_RETURN(store::CatalogData data, stores_.inventory->LoadCatalogData());
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

void CliAttribution::DeliverTakesAfter(const char* what) {
  if (!stores_.takes) return;
  Status delivered = DeliverBudgetTakes(*stores_.takes->queue, *stores_.takes->budgets);
  if (!delivered.ok()) {
    ADS_LOG(warn, "budget takes not delivered to Redis; retrying after the next batch", "after",
            what, "status", delivered);
  }
}

Status CliAttribution::Finish() {
  if (!stores_.takes) return OkStatus();
  Status st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    st = DeliverBudgetTakes(*stores_.takes->queue, *stores_.takes->budgets);
    if (st.ok()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
  }
  ADS_LOG(error,
          "budget takes of recorded conversions not delivered to Redis; they stay queued "
          "for the next run, and nodes may lease up to that much more meanwhile",
          "status", st);
  return OkStatus();
}

Status CliAttribution::OnApplied(int64_t chain_id,
                                 std::span<const ingest::chain::AppliedBlock> blocks) {
  if (Status refreshed = Refresh(); !refreshed.ok()) {
    ADS_LOG(warn, "catalog not rebuilt; attributing with the previous one", "status", refreshed);
  }
  ADS_RETURN_IF_ERROR(attributor_->OnApplied(chain_id, blocks));
  // The blocks' conversions are recorded and billed.
  DeliverTakesAfter("applied blocks");
  return OkStatus();
}

void CliAttribution::OnReverted(int64_t chain_id,
                                std::span<const ingest::chain::RevertedBlock> blocks) {
  attributor_->OnReverted(chain_id, blocks);
  // The reverted conversions' budget is given back.
  DeliverTakesAfter("reverted blocks");
}

bool CliAttribution::Wants(int64_t project_id, int64_t unix_seconds) const {
  return attributor_->Wants(project_id, unix_seconds);
}

Status CliAttribution::OnImported(std::span<const ingest::chain::ChainInteraction> interactions) {
  ADS_RETURN_IF_ERROR(attributor_->OnImported(interactions));
  DeliverTakesAfter("imported rows");
  return OkStatus();
}

}  // namespace adserver::cluster
