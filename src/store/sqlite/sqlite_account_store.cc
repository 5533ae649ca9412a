#include "store/sqlite/sqlite_account_store.h"

#include <utility>

#include "common/mutex.h"
#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {

using sqlite_detail::Connection;
using sqlite_detail::Transaction;

SqliteAccountStore::SqliteAccountStore(std::unique_ptr<Connection> conn)
    : conn_(std::move(conn)), runner_(*this), accounts_(runner_) {}

SqliteAccountStore::~SqliteAccountStore() = default;

Result<std::unique_ptr<SqliteAccountStore>> SqliteAccountStore::Open(const std::string& path,
                                                                     const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteAccountStore>(new SqliteAccountStore(std::move(conn)));
}

Status SqliteAccountStore::SqlRunner::Write(unsigned /*bump*/,
                                            const std::function<Status(sql::Connection&)>& fn) {
  MutexLock lock(store_.mu_);
  Connection& c = *store_.conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  sqlite_detail::SqlConnection conn(c);
  ADS_RETURN_IF_ERROR(fn(conn));
  return txn.Commit();
}

Status SqliteAccountStore::SqlRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  MutexLock lock(store_.mu_);
  Connection& c = *store_.conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  sqlite_detail::SqlConnection conn(c);
  ADS_RETURN_IF_ERROR(fn(conn));
  return txn.Commit();
}

}  // namespace adserver::store
