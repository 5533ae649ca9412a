#pragma once

// The engine of SqliteStore: one write connection behind a mutex, each write a BEGIN IMMEDIATE
// transaction that also bumps the change versions it names in the `meta` table, and a small
// pool of read connections, so reads see every committed write and never wait behind one. A
// sql::Runner for the shared SQL (store/sql) and the same transactions on the native
// connection for the adapter's own statements. ":memory:" (or "") shares the write connection
// for reads: then a read callback must not call back into the store.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "store/sql/sql.h"
#include "store/sqlite/detail/sqlite_util.h"
#include "store/sqlite/options.h"

namespace adserver::store::sqlite_detail {

class PooledRunner final : public sql::Runner {
 public:
  // Opens (creating it if allowed) the database at `path` in WAL mode and applies pending
  // migrations. Unavailable if the file cannot be opened or stays locked beyond
  // options.busy_timeout; Internal if the schema is newer than this binary knows.
  static Result<std::unique_ptr<PooledRunner>> Open(const std::string& path,
                                                    const SqliteOptions& options);

  // Runs `fn` inside a write transaction on the writer connection, bumps the `bump` versions
  // and commits; rolls back if `fn` (or the commit) fails.
  Status WriteNative(unsigned bump, const std::function<Status(Connection&)>& fn);
  // Runs `fn` inside a read transaction on a pooled read connection.
  Status ReadNative(const std::function<Status(Connection&)>& fn);

  Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
  Status Read(const std::function<Status(sql::Connection&)>& fn) override;
  // `catalog_version` or `activity_version` of the meta table.
  Result<uint64_t> ChangeVersion(Bump which) override;

 private:
  PooledRunner(std::string path, const SqliteOptions& options, std::unique_ptr<Connection> writer);

  // A read connection from the pool, or a new one. ReleaseReader() puts it back.
  Result<std::unique_ptr<Connection>> AcquireReader();
  void ReleaseReader(std::unique_ptr<Connection> conn);

  const std::string path_;
  const SqliteOptions options_;
  // True for ":memory:": every call uses the writer connection.
  const bool shared_connection_;

  Mutex mu_;
  std::unique_ptr<Connection> writer_ ADS_GUARDED_BY(mu_);

  Mutex readers_mu_;
  std::vector<std::unique_ptr<Connection>> idle_readers_ ADS_GUARDED_BY(readers_mu_);
};

}  // namespace adserver::store::sqlite_detail
