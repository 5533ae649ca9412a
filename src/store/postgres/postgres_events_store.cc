#include "store/postgres/postgres_events_store.h"

#include <map>
#include <utility>
#include <vector>


#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_node_counters.h"
#include "store/postgres/detail/pg_runner.h"

namespace adserver::store {

using pg_detail::PgConnection;

PostgresEventsStore::PostgresEventsStore(std::unique_ptr<pg_detail::PgRunner> runner)
    : SqlEvents(*runner), runner_(std::move(runner)) {}

PostgresEventsStore::~PostgresEventsStore() = default;

Result<std::unique_ptr<PostgresEventsStore>> PostgresEventsStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresEventsStore>(
      new PostgresEventsStore(std::make_unique<pg_detail::PgRunner>(std::move(conn))));
}

void PostgresEventsStore::BillConversionsTo(std::string node_id,
                                            std::function<bool(Id campaign)> budgeted) {
  // The hook runs inside the runner's transaction: it writes on that transaction's connection.
  SetConversionBilling(
      [node_id = std::move(node_id), budgeted = std::move(budgeted)](
          sql::Connection& sql_conn, std::span<const ConversionRecord> rows, int sign) -> Status {
        PgConnection& conn = pg_detail::NativeConnection(sql_conn);
        std::map<Id, CampaignCountersRecord> deltas;
        for (const ConversionRecord& c : rows) pg_detail::AddConversionDelta(deltas, c, sign);
        std::vector<CampaignCountersRecord> counters;
        for (const auto& [id, d] : deltas) counters.push_back(d);
        ADS_RETURN_IF_ERROR(
            pg_detail::UpsertNodeCounters(conn, node_id, counters, pg_detail::CountersWrite::kAdd));
        for (const ConversionRecord& c : rows) {
          if (c.price == 0 || !budgeted(c.campaign_id)) continue;
          ADS_RETURN_IF_ERROR(
              conn.Exec("INSERT INTO budget_takes (campaign_id, micros, recorded_at) "
                        "VALUES ($1, $2, $3)",
                        {pg_detail::Param(c.campaign_id), pg_detail::Param(sign * c.price),
                         pg_detail::Param(c.recorded_at)})
                  .status());
        }
        return OkStatus();
      });
}

}  // namespace adserver::store
