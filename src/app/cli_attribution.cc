#include "app/cli_attribution.h"

#include "app/server.h"
#include "common/clock.h"
#include "common/log.h"
#include "ingest/catalog_builder.h"

namespace adserver::app {

Result<std::unique_ptr<CliAttribution>> CliAttribution::Open(const std::string& data_dir,
                                                             store::Store& store) {
  auto out = std::make_unique<CliAttribution>(store);
  ADS_ASSIGN_OR_RETURN(out->events_, store::SqliteEventsStore::Open(DatabasePath(data_dir)));
  ADS_ASSIGN_OR_RETURN(out->exposures_, store::LmdbExposureStore::Open(ExposureIndexPath(data_dir)));
  CliAttribution* self = out.get();
  out->attributor_ = std::make_unique<events::ConversionAttributor>(
      *out->exposures_, *out->events_, out->catalogs_, SystemClock::Get(),
      [self](const store::ConversionRecord&) { ++self->recorded_; }, nullptr);
  ADS_RETURN_IF_ERROR(out->Refresh());
  return out;
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

Status CliAttribution::OnApplied(int64_t chain_id,
                                 std::span<const ingest::chain::AppliedBlock> blocks) {
  if (Status refreshed = Refresh(); !refreshed.ok()) {
    ADS_LOG(warn, "catalog not rebuilt; attributing with the previous one", "status", refreshed);
  }
  return attributor_->OnApplied(chain_id, blocks);
}

void CliAttribution::OnReverted(int64_t chain_id,
                                std::span<const ingest::chain::RevertedBlock> blocks) {
  attributor_->OnReverted(chain_id, blocks);
}

bool CliAttribution::Wants(int64_t project_id, int64_t unix_seconds) const {
  return attributor_->Wants(project_id, unix_seconds);
}

Status CliAttribution::OnImported(std::span<const ingest::chain::ChainInteraction> interactions) {
  return attributor_->OnImported(interactions);
}

}  // namespace adserver::app
