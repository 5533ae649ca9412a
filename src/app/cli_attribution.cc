#include "app/cli_attribution.h"

#include <utility>

#include "app/data_dir.h"
#include "store/lmdb/lmdb_exposure_store.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_exposure_store.h"
#include "store/postgres/postgres_store.h"
#include "store/redis/redis_budget_authority.h"
#include "store/sqlite/sqlite_events_store.h"

namespace adserver::app {

Result<std::unique_ptr<cluster::CliAttribution>> OpenCliAttribution(const std::string& data_dir,
                                                                    const store::Stores& stores) {
  cluster::AttributionStores opened{.inventory = stores.inventory, .counters = stores.counters};
  ADS_ASSIGN_OR_RETURN(opened.events, store::SqliteEventsStore::Open(DatabasePath(data_dir)));
  ADS_ASSIGN_OR_RETURN(opened.exposures,
                       store::LmdbExposureStore::Open(ExposureIndexPath(data_dir)));
  auto out = std::make_unique<cluster::CliAttribution>(std::move(opened));
  ADS_RETURN_IF_ERROR(out->Start());
  return out;
}

Result<std::unique_ptr<cluster::CliAttribution>> OpenCliAttribution(
    const store::ClusterOptions& cluster, const store::Stores& stores) {
  cluster::AttributionStores opened{.inventory = stores.inventory};
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PostgresEventsStore> events,
                       store::PostgresEventsStore::Open(cluster.database_url));
  store::PostgresEventsStore* billing = events.get();
  opened.events = std::move(events);
  ADS_ASSIGN_OR_RETURN(opened.exposures, store::PostgresExposureStore::Open(cluster.database_url));
  cluster::BudgetTakeDelivery takes;
  ADS_ASSIGN_OR_RETURN(takes.queue, store::PostgresStore::Open(cluster.database_url));
  // An unreachable Redis is not an error here: the takes stay queued (CliAttribution::Finish).
  ADS_ASSIGN_OR_RETURN(takes.budgets, store::RedisBudgetAuthority::Open(
                                          cluster.redis_url, cluster.redis_key_prefix, true));
  opened.takes = std::move(takes);
  auto out = std::make_unique<cluster::CliAttribution>(std::move(opened));
  cluster::CliAttribution* self = out.get();
  billing->BillConversionsTo(std::string(store::kCliNodeId),
                             [self](store::Id id) { return self->Budgeted(id); });
  ADS_RETURN_IF_ERROR(out->Start());
  return out;
}

}  // namespace adserver::app
