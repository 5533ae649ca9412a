#include "store/postgres/postgres_events_store.h"

#include <utility>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_runner.h"

namespace adserver::store {

using pg_detail::PgConnection;

PostgresEventsStore::PostgresEventsStore(std::unique_ptr<PgConnection> conn)
    : conn_(std::move(conn)),
      runner_(std::make_unique<pg_detail::PgRunner>(mu_, *conn_)),
      events_(*runner_) {}

PostgresEventsStore::~PostgresEventsStore() = default;

Result<std::unique_ptr<PostgresEventsStore>> PostgresEventsStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresEventsStore>(new PostgresEventsStore(std::move(conn)));
}

}  // namespace adserver::store
