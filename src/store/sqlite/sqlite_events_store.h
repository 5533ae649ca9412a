#pragma once

#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "store/events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_events.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
class SqliteRunner;
}  // namespace sqlite_detail

// EventsStore on the same SQLite file as SqliteStore (tables `clicks`, `rollups_minute`,
// `rollups_hour`, `rollups_day`, `events_meta`; migration 5), running the SQL it shares with
// the PostgreSQL adapter (store/sql/sql_events.h). One connection of its own,
// serialised by a mutex: the click writer, the rollup flusher and admin reads share it, never
// an event loop. Commits use synchronous=NORMAL in WAL mode: a committed click survives the
// process being killed (kill -9); only an operating-system crash or power loss can take the
// last commits (set `synchronous_full` for that). The writing connection never checkpoints the
// write-ahead log itself (a checkpoint syncs the file: milliseconds that clicks would wait
// behind); Checkpoint() does it from a second connection, concurrently with the writer.
class SqliteEventsStore final : public sql::SqlEvents {
 public:
  static Result<std::unique_ptr<SqliteEventsStore>> Open(const std::string& path,
                                                         const SqliteOptions& options = {},
                                                         bool synchronous_full = false);
  ~SqliteEventsStore() override;
  SqliteEventsStore(const SqliteEventsStore&) = delete;
  SqliteEventsStore& operator=(const SqliteEventsStore&) = delete;

  Status Checkpoint() override;

 private:
  SqliteEventsStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner,
                    std::unique_ptr<sqlite_detail::Connection> checkpoint_conn);

  std::unique_ptr<sqlite_detail::SqliteRunner> runner_;  // the transactions of the SQL above
  Mutex checkpoint_mu_;
  std::unique_ptr<sqlite_detail::Connection> checkpoint_conn_ ADS_GUARDED_BY(checkpoint_mu_);
};

}  // namespace adserver::store
