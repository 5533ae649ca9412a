#include "app/cli_attribution.h"

#include <thread>

#include "app/server.h"
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
                                                             store::Store& store) {
  auto out = std::make_unique<CliAttribution>(store);
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
    const store::ClusterOptions& cluster, store::Store& store) {
  auto out = std::make_unique<CliAttribution>(store);
  ADS_ASSIGN_OR_RETURN(out->owned_events_,
                       store::PostgresEventsStore::Open(cluster.database_url));
  ADS_ASSIGN_OR_RETURN(out->owned_exposures_,
                       store::PostgresExposureStore::Open(cluster.database_url));
  ADS_ASSIGN_OR_RETURN(out->owned_counters_, store::PostgresStore::Open(cluster.database_url));
  out->owned_counters_->SetNodeId(store::kCliNodeId);
  // An unreachable Redis is not an error here: the takes wait for it (WritePending).
  ADS_ASSIGN_OR_RETURN(out->owned_budgets_,
                       store::RedisBudgetAuthority::Open(cluster.redis_url,
                                                         cluster.redis_key_prefix, true));
  out->events_ = out->owned_events_.get();
  out->exposures_ = out->owned_exposures_.get();
  out->counters_ = out->owned_counters_.get();
  out->budgets_ = out->owned_budgets_.get();
  out->Attach();
  ADS_RETURN_IF_ERROR(out->Refresh());
  return out;
}

CliAttribution::~CliAttribution() {
  if (!pending_.empty()) {
    ADS_LOG(error, "conversions recorded but not billed (Finish was not called or failed)",
            "campaigns", static_cast<int64_t>(pending_.size()));
  }
}

void CliAttribution::Attach() {
  events::ConversionAttributor::Callback reverted;
  if (counters_ != nullptr) {
    reverted = [this](const store::ConversionRecord& c) { Bill(c, -1); };
  }
  attributor_ = std::make_unique<events::ConversionAttributor>(
      *exposures_, *events_, catalogs_, SystemClock::Get(),
      [this](const store::ConversionRecord& c) {
        ++recorded_;
        if (counters_ != nullptr) Bill(c, 1);
      },
      std::move(reverted));
}

Status CliAttribution::Refresh() {
  auto now = std::chrono::steady_clock::now();
  if (catalogs_.Current() && now - built_ < kCatalogAge) return OkStatus();
  ADS_ASSIGN_OR_RETURN(store::CatalogData data, store_.LoadCatalogData());
  ADS_ASSIGN_OR_RETURN(std::shared_ptr<const decision::Catalog> catalog,
                       ingest::BuildCatalog(data, decision::CatalogOptions{}));
  catalogs_.Publish(std::move(catalog));
  built_ = now;
  return OkStatus();
}

void CliAttribution::Bill(const store::ConversionRecord& c, int sign) {
  Pending& p = pending_[c.campaign_id];
  store::CampaignCountersRecord& d = p.counters;
  int64_t day = DayOf(c.recorded_at), hour = c.recorded_at / 3600;
  if (d.campaign_id == 0) {
    d.campaign_id = c.campaign_id;
    d.day = day;
    d.hour = hour;
  }
  d.conversions += sign;
  d.total_spend += sign * c.price;
  // Spend of an older period than the delta's is over: only the total keeps it.
  if (day > d.day) d.day = day, d.day_spend = 0;
  if (hour > d.hour) d.hour = hour, d.hour_spend = 0;
  if (day == d.day) d.day_spend += sign * c.price;
  if (hour == d.hour) d.hour_spend += sign * c.price;
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  const decision::Campaign* campaign = catalog ? catalog->FindCampaign(c.campaign_id) : nullptr;
  if (campaign != nullptr && campaign->total_budget_micros) p.budget_take += sign * c.price;
}

Status CliAttribution::WritePending() {
  if (pending_.empty()) return OkStatus();
  std::vector<store::CampaignCountersRecord> deltas;
  for (auto& [id, p] : pending_) {
    if (p.counters.campaign_id != 0) deltas.push_back(p.counters);
  }
  if (!deltas.empty()) {
    ADS_RETURN_IF_ERROR(counters_->AddCampaignCounters(deltas));
    for (auto& [id, p] : pending_) p.counters = {};
  }
  Status first;
  for (auto it = pending_.begin(); it != pending_.end();) {
    Micros amount = it->second.budget_take;
    Status st;
    if (amount > 0) {
      // Less than asked (the budget ran out meanwhile) is overspend of conversions already
      // made; NotFound (Redis lost the key) leaves it to the next seed, from the counters.
      Result<Micros> took = budgets_->Take(it->first, amount);
      st = took.ok() || took.status().code() == Code::kNotFound ? OkStatus() : took.status();
    } else if (amount < 0) {
      st = budgets_->Give(it->first, -amount);
    }
    if (!st.ok()) {
      if (first.ok()) first = st;
      ++it;
      continue;
    }
    it = pending_.erase(it);
  }
  return first;
}

Status CliAttribution::Finish() {
  if (counters_ == nullptr) return OkStatus();
  Status st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    st = WritePending();
    if (st.ok()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
  }
  Micros unwritten = 0;
  for (const auto& [id, p] : pending_) unwritten += p.counters.total_spend;
  bool counters_written = true;
  for (const auto& [id, p] : pending_) counters_written &= p.counters.campaign_id == 0;
  if (!counters_written) {
    return UnavailableError("conversions recorded but their spend not added to the counters (" +
                            std::to_string(pending_.size()) + " campaigns, " +
                            std::to_string(unwritten) + " micros): " + st.message());
  }
  for (const auto& [id, p] : pending_) {
    ADS_LOG(error, "spend not taken from the campaign's budget in Redis; nodes may lease that "
            "much more", "campaign", id, "micros", p.budget_take, "status", st);
  }
  pending_.clear();
  return OkStatus();
}

Status CliAttribution::OnApplied(int64_t chain_id,
                                 std::span<const ingest::chain::AppliedBlock> blocks) {
  if (Status refreshed = Refresh(); !refreshed.ok()) {
    ADS_LOG(warn, "catalog not rebuilt; attributing with the previous one", "status", refreshed);
  }
  ADS_RETURN_IF_ERROR(attributor_->OnApplied(chain_id, blocks));
  if (counters_ != nullptr) {
    // The blocks' conversions are recorded: a billing write that fails now is retried after
    // the next batch, never by failing (and so re-offering) blocks already attributed.
    if (Status billed = WritePending(); !billed.ok()) {
      ADS_LOG(warn, "conversion billing not written; retrying after the next batch", "status",
              billed);
    }
  }
  return OkStatus();
}

void CliAttribution::OnReverted(int64_t chain_id,
                                std::span<const ingest::chain::RevertedBlock> blocks) {
  attributor_->OnReverted(chain_id, blocks);
  if (counters_ != nullptr) {
    if (Status billed = WritePending(); !billed.ok()) {
      ADS_LOG(warn, "reverted conversions not unbilled yet; retrying after the next batch",
              "status", billed);
    }
  }
}

bool CliAttribution::Wants(int64_t project_id, int64_t unix_seconds) const {
  return attributor_->Wants(project_id, unix_seconds);
}

Status CliAttribution::OnImported(std::span<const ingest::chain::ChainInteraction> interactions) {
  ADS_RETURN_IF_ERROR(attributor_->OnImported(interactions));
  if (counters_ != nullptr) {
    if (Status billed = WritePending(); !billed.ok()) {
      ADS_LOG(warn, "conversion billing not written; retrying at the end", "status", billed);
    }
  }
  return OkStatus();
}

}  // namespace adserver::app
