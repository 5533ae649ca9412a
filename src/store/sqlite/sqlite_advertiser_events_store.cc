#include "store/sqlite/sqlite_advertiser_events_store.h"

#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_runner.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {

using sqlite_detail::Connection;

SqliteAdvertiserEventsStore::SqliteAdvertiserEventsStore(
    std::unique_ptr<sqlite_detail::SqliteRunner> runner)
    : SqlAdvertiserEvents(*runner), runner_(std::move(runner)) {}

SqliteAdvertiserEventsStore::~SqliteAdvertiserEventsStore() = default;

Result<std::unique_ptr<SqliteAdvertiserEventsStore>> SqliteAdvertiserEventsStore::Open(
    const std::string& path, const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteAdvertiserEventsStore>(new SqliteAdvertiserEventsStore(
      std::make_unique<sqlite_detail::SqliteRunner>(std::move(conn))));
}

}  // namespace adserver::store
