#pragma once

// A sql::Runner over one PostgreSQL connection of an adapter, serialised by the adapter's
// mutex: writes in READ COMMITTED transactions (what the shared SQL's writer locks and
// ON CONFLICT upserts assume), reads in one REPEATABLE READ snapshot. What the event stores
// (PostgresEventsStore, PostgresAdvertiserEventsStore, PostgresReportStore) run the shared SQL
// of store/sql through. A lost connection answers Unavailable; the next call reconnects.

#include <functional>

#include "common/mutex.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/sql/sql.h"

namespace adserver::store::pg_detail {

class PgRunner final : public sql::Runner {
 public:
  // `mu` guards `conn`; both must outlive this.
  PgRunner(Mutex& mu, PgConnection& conn) : mu_(mu), conn_(conn) {}

  Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
  Status Read(const std::function<Status(sql::Connection&)>& fn) override;

 private:
  Status Run(std::string_view begin, const std::function<Status(sql::Connection&)>& fn);

  Mutex& mu_;
  PgConnection& conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store::pg_detail
