#pragma once

// A sql::Runner over one SQLite connection of an adapter, serialised by the adapter's mutex:
// write transactions take the write lock up front (BEGIN IMMEDIATE), reads see one snapshot.
// What the event stores (SqliteEventsStore, SqliteAdvertiserEventsStore, SqliteReportStore) run
// the shared SQL of store/sql through.

#include <functional>

#include "common/mutex.h"
#include "store/sql/sql.h"
#include "store/sqlite/detail/sqlite_sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

class SqliteRunner final : public sql::Runner {
 public:
  // `mu` guards `conn`; both must outlive this.
  SqliteRunner(Mutex& mu, Connection& conn) : mu_(mu), conn_(conn) {}

  Status Write(unsigned /*bump*/, const std::function<Status(sql::Connection&)>& fn) override {
    return Run(Transaction::Kind::kWrite, fn);
  }
  Status Read(const std::function<Status(sql::Connection&)>& fn) override {
    return Run(Transaction::Kind::kRead, fn);
  }

 private:
  Status Run(Transaction::Kind kind, const std::function<Status(sql::Connection&)>& fn) {
    MutexLock lock(mu_);
    ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_, kind));
    SqlConnection conn(conn_);
    ADS_RETURN_IF_ERROR(fn(conn));
    return txn.Commit();
  }

  Mutex& mu_;
  Connection& conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store::sqlite_detail
