#pragma once

#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "store/advertiser_events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_advertiser_events.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
class SqliteRunner;
}  // namespace sqlite_detail

// AdvertiserEventsStore on the same SQLite file as SqliteStore (tables `advertiser_events`
// and `advertiser_event_counts`, migration 6; an event's spclid is looked up in `clicks`),
// running the SQL it shares with the PostgreSQL adapter (store/sql/sql_advertiser_events.h).
// One connection of its own, serialised by a mutex: inserts from the worker pool and admin
// reads share it, never an event loop. Each insert is one transaction committed in WAL mode
// with synchronous=NORMAL: it survives the process being killed (kill -9); only an
// operating-system crash or power loss can take the last commits.
class SqliteAdvertiserEventsStore final : public sql::SqlAdvertiserEvents {
 public:
  static Result<std::unique_ptr<SqliteAdvertiserEventsStore>> Open(
      const std::string& path, const SqliteOptions& options = {});
  ~SqliteAdvertiserEventsStore() override;
  SqliteAdvertiserEventsStore(const SqliteAdvertiserEventsStore&) = delete;
  SqliteAdvertiserEventsStore& operator=(const SqliteAdvertiserEventsStore&) = delete;

 private:
  explicit SqliteAdvertiserEventsStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner);

  std::unique_ptr<sqlite_detail::SqliteRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
