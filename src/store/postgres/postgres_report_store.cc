#include "store/postgres/postgres_report_store.h"

#include <utility>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_runner.h"

namespace adserver::store {

using pg_detail::PgConnection;

PostgresReportStore::PostgresReportStore(std::unique_ptr<pg_detail::PgRunner> runner)
    : SqlReports(*runner), runner_(std::move(runner)) {}

PostgresReportStore::~PostgresReportStore() = default;

Result<std::unique_ptr<PostgresReportStore>> PostgresReportStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresReportStore>(
      new PostgresReportStore(std::make_unique<pg_detail::PgRunner>(std::move(conn))));
}

}  // namespace adserver::store
