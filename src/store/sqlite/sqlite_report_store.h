#pragma once

#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "store/report_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_reports.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
class SqliteRunner;
}  // namespace sqlite_detail

// ReportStore on the same SQLite file as SqliteStore (tables `rollups_minute`, `rollups_hour`,
// `rollups_day` of migration 5, `campaigns` for the community), running the SQL it shares with
// the PostgreSQL adapter (store/sql/sql_reports.h). One read connection of its own,
// serialised by a mutex, so a long report never waits on (or holds up) the event writers'
// connection; WAL lets it read while they write.
class SqliteReportStore final : public sql::SqlReports {
 public:
  static Result<std::unique_ptr<SqliteReportStore>> Open(const std::string& path,
                                                         const SqliteOptions& options = {});
  ~SqliteReportStore() override;
  SqliteReportStore(const SqliteReportStore&) = delete;
  SqliteReportStore& operator=(const SqliteReportStore&) = delete;

 private:
  explicit SqliteReportStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner);

  std::unique_ptr<sqlite_detail::SqliteRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
