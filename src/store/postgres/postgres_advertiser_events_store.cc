#include "store/postgres/postgres_advertiser_events_store.h"

#include <utility>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_runner.h"

namespace adserver::store {

using pg_detail::PgConnection;

PostgresAdvertiserEventsStore::PostgresAdvertiserEventsStore(
    std::unique_ptr<pg_detail::PgRunner> runner)
    : SqlAdvertiserEvents(*runner), runner_(std::move(runner)) {}

PostgresAdvertiserEventsStore::~PostgresAdvertiserEventsStore() = default;

Result<std::unique_ptr<PostgresAdvertiserEventsStore>> PostgresAdvertiserEventsStore::Open(
    const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresAdvertiserEventsStore>(
      new PostgresAdvertiserEventsStore(std::make_unique<pg_detail::PgRunner>(std::move(conn))));
}

}  // namespace adserver::store
