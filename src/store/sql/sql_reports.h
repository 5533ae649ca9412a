#pragma once

// Report reads of the rollups (ReportStore::QueryRollups) in SQL, shared by the SQLite and
// PostgreSQL adapters (store/sql/sql.h); the adapter supplies a consistent read transaction
// (sql::Runner::Read). The error contract is ReportStore's.

#include <vector>

#include "store/report_store.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlReports : public ReportStore {
 public:
  explicit SqlReports(Runner& runner) : runner_(runner) {}

  // Crashes unless query.group_seconds is a non-negative multiple of the table's bucket.
  Result<std::vector<RollupGroup>> QueryRollups(const RollupQuery& query) override;

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
