#include "store/postgres/detail/pg_runner.h"

#include "common/mutex.h"
#include "store/postgres/detail/pg_sql.h"

namespace adserver::store::pg_detail {

Status PgRunner::Write(unsigned /*bump*/, const std::function<Status(sql::Connection&)>& fn) {
  return Run("BEGIN", fn);
}

Status PgRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  return Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", fn);
}

Status PgRunner::Run(std::string_view begin, const std::function<Status(sql::Connection&)>& fn) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(conn_, begin));
  PgSqlConnection conn(conn_);
  ADS_RETURN_IF_ERROR(fn(conn));
  return txn.Commit();
}

}  // namespace adserver::store::pg_detail
