#include "store/sqlite/sqlite_report_store.h"

#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_runner.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {

using sqlite_detail::Connection;

SqliteReportStore::SqliteReportStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner)
    : SqlReports(*runner), runner_(std::move(runner)) {}

SqliteReportStore::~SqliteReportStore() = default;

Result<std::unique_ptr<SqliteReportStore>> SqliteReportStore::Open(const std::string& path,
                                                                   const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteReportStore>(
      new SqliteReportStore(std::make_unique<sqlite_detail::SqliteRunner>(std::move(conn))));
}

}  // namespace adserver::store
