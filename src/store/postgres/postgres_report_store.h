#pragma once

// ReportStore on PostgreSQL (cluster mode, issue 17): report reads of the rollups every node
// writes (migration 5; `campaigns` for the community), through the SQL shared with SQLite
// (store/sql/sql_reports.h). A connection of its own, so a long report never holds up the event
// writers' connections; each query reads one REPEATABLE READ snapshot. Thread-safe: one
// connection behind a mutex. A lost connection answers Unavailable and is re-established by the
// next call.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/report_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_reports.h"

namespace adserver::store {

namespace pg_detail {
class PgRunner;
}

class PostgresReportStore final : public sql::SqlReports {
 public:
  // Connects to `url` and applies the schema migrations. Unavailable if the server cannot be
  // reached.
  static Result<std::unique_ptr<PostgresReportStore>> Open(const std::string& url);
  ~PostgresReportStore() override;
  PostgresReportStore(const PostgresReportStore&) = delete;
  PostgresReportStore& operator=(const PostgresReportStore&) = delete;

 private:
  explicit PostgresReportStore(std::unique_ptr<pg_detail::PgRunner> runner);

  std::unique_ptr<pg_detail::PgRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
