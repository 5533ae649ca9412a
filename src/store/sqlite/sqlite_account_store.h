#pragma once

#include <memory>
#include <string>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"
#include "store/account_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_accounts.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
class SqliteRunner;
}  // namespace sqlite_detail

// AccountStore on the same SQLite file as SqliteStore (tables `users`, `user_tokens`,
// `console_sessions`, migration 9). Uses its own connection, serialised by a mutex: calls come
// from admin workers (one or two short statements per authenticated admin call).
class SqliteAccountStore final : public sql::SqlAccounts {
 public:
  // Opens the database at `path` and applies pending migrations (as SqliteStore::Open does).
  static Result<std::unique_ptr<SqliteAccountStore>> Open(const std::string& path,
                                                          const SqliteOptions& options = {});
  ~SqliteAccountStore() override;
  SqliteAccountStore(const SqliteAccountStore&) = delete;
  SqliteAccountStore& operator=(const SqliteAccountStore&) = delete;

 private:
  explicit SqliteAccountStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner);

  std::unique_ptr<sqlite_detail::SqliteRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
