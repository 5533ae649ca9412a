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
}  // namespace sqlite_detail

// ReportStore on the same SQLite file as SqliteStore (tables `rollups_minute`, `rollups_hour`,
// `rollups_day` of migration 5, `campaigns` for the community), running the SQL it shares with
// the PostgreSQL adapter (store/sql/sql_reports.h). One read connection of its own,
// serialised by a mutex, so a long report never waits on (or holds up) the event writers'
// connection; WAL lets it read while they write.
class SqliteReportStore final : public ReportStore {
 public:
  static Result<std::unique_ptr<SqliteReportStore>> Open(const std::string& path,
                                                         const SqliteOptions& options = {});
  ~SqliteReportStore() override;
  SqliteReportStore(const SqliteReportStore&) = delete;
  SqliteReportStore& operator=(const SqliteReportStore&) = delete;

  // ReportStore (store/sql/sql_reports.h).
  Result<std::vector<RollupGroup>> QueryRollups(const RollupQuery& query) override {
    return reports_.QueryRollups(query);
  }

 private:
  explicit SqliteReportStore(std::unique_ptr<sqlite_detail::Connection> conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
  std::unique_ptr<sql::Runner> runner_;              // transactions on conn_ under mu_
  sql::SqlReports reports_;
};

}  // namespace adserver::store
