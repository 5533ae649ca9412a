#pragma once

// A sql::Runner over one SQLite connection of an adapter's own, serialised by a mutex: write
// transactions take the write lock up front (BEGIN IMMEDIATE), reads see one snapshot. What the
// adapters with one connection (SqliteEventsStore, SqliteAdvertiserEventsStore,
// SqliteReportStore, SqliteAccountStore) run the shared SQL of store/sql through.

#include <functional>
#include <memory>
#include <utility>

#include "common/mutex.h"
#include "store/sql/sql.h"
#include "store/sqlite/detail/sqlite_sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

class SqliteRunner final : public sql::Runner {
 public:
  explicit SqliteRunner(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}

  Status Write(unsigned /*bump*/, const std::function<Status(sql::Connection&)>& fn) override {
    return Run(Transaction::Kind::kWrite, fn);
  }
  Status Read(const std::function<Status(sql::Connection&)>& fn) override {
    return Run(Transaction::Kind::kRead, fn);
  }

 private:
  Status Run(Transaction::Kind kind, const std::function<Status(sql::Connection&)>& fn) {
    MutexLock lock(mu_);
    ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*conn_, kind));
    SqlConnection conn(*conn_);
    ADS_RETURN_IF_ERROR(fn(conn));
    return txn.Commit();
  }

  Mutex mu_;
  std::unique_ptr<Connection> conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store::sqlite_detail
