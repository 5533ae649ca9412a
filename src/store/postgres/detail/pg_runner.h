#pragma once

// A sql::Runner over one PostgreSQL connection of an adapter's own, serialised by a mutex:
// writes in READ COMMITTED transactions (what the shared SQL's writer locks and ON CONFLICT
// upserts assume) that bump the change versions they name (BumpChangeVersion: "inventory",
// "activity"), reads in one REPEATABLE READ snapshot. The engine every PostgreSQL adapter runs
// the shared SQL of store/sql through; mu() and conn() lend the connection to an adapter's own
// statements. A lost connection answers Unavailable; the next call
// reconnects.

#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "common/mutex.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/sql/sql.h"

namespace adserver::store::pg_detail {

class PgRunner final : public sql::Runner {
 public:
  explicit PgRunner(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}

  Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
  Status Read(const std::function<Status(sql::Connection&)>& fn) override;
  // The version of change_versions' "inventory" (kCatalog) or "activity" row; 0 before the first.
  Result<uint64_t> ChangeVersion(Bump which) override;

  // The connection for an adapter's own statements, under mu() (no transaction is opened).
  Mutex& mu() ADS_RETURN_CAPABILITY(mu_) { return mu_; }
  PgConnection& conn() ADS_REQUIRES(mu_) { return *conn_; }

 private:
  Status Run(std::string_view begin, unsigned bump,
             const std::function<Status(sql::Connection&)>& fn);

  Mutex mu_;
  std::unique_ptr<PgConnection> conn_ ADS_GUARDED_BY(mu_);
};

// The PostgreSQL connection under a sql::Connection a PgRunner lent (a hook that runs inside
// the runner's transaction writes through it).
PgConnection& NativeConnection(sql::Connection& c);

}  // namespace adserver::store::pg_detail
