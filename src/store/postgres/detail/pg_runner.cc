#include "store/postgres/detail/pg_runner.h"

#include "common/mutex.h"
#include "store/postgres/detail/pg_sql.h"
#include "store/postgres/pg_change_feed.h"

namespace adserver::store::pg_detail {

Status PgRunner::Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) {
  return Run("BEGIN", bump, fn);
}

Status PgRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  // One snapshot for every statement of the read (LoadCatalogData reads many tables).
  return Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, fn);
}

Status PgRunner::Run(std::string_view begin, unsigned bump,
                     const std::function<Status(sql::Connection&)>& fn) {
  MutexLock lock(mu_);
  PgConnection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c, begin));
  PgSqlConnection conn(c);
  ADS_RETURN_IF_ERROR(fn(conn));
  if (bump & kCatalog) ADS_RETURN_IF_ERROR(BumpChangeVersion(c, "inventory"));
  if (bump & kActivity) ADS_RETURN_IF_ERROR(BumpChangeVersion(c, "activity"));
  return txn.Commit();
}

Result<uint64_t> PgRunner::ChangeVersion(Bump which) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec("SELECT coalesce((SELECT version FROM change_versions WHERE name = $1), 0)",
                  {Param(which == kCatalog ? "inventory" : "activity")}));
  ADS_ASSIGN_OR_RETURN(int64_t v, r.Int(0, 0));
  return static_cast<uint64_t>(v);
}

PgConnection& NativeConnection(sql::Connection& c) {
  return static_cast<PgSqlConnection&>(c).native();
}

}  // namespace adserver::store::pg_detail
