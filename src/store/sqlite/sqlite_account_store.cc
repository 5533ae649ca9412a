#include "store/sqlite/sqlite_account_store.h"

#include <utility>

#include "common/mutex.h"
#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_runner.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {

using sqlite_detail::Connection;

SqliteAccountStore::SqliteAccountStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner)
    : SqlAccounts(*runner), runner_(std::move(runner)) {}

SqliteAccountStore::~SqliteAccountStore() = default;

Result<std::unique_ptr<SqliteAccountStore>> SqliteAccountStore::Open(const std::string& path,
                                                                     const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteAccountStore>(
      new SqliteAccountStore(std::make_unique<sqlite_detail::SqliteRunner>(std::move(conn))));
}

}  // namespace adserver::store
