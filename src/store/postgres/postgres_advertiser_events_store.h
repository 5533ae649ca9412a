#pragma once

// AdvertiserEventsStore on PostgreSQL (cluster mode, issue 17): the advertiser events of every
// node in one database (migration 5: the SQLite adapter's tables, same names and columns; an
// event's spclid is looked up in `clicks`), through the SQL shared with SQLite
// (store/sql/sql_advertiser_events.h). Each insert is one transaction, durable when it returns;
// counts are increments, so every node's inserts add up. Thread-safe: one connection behind a
// mutex (calls run on worker and admin threads, never on an event loop). A lost connection
// answers Unavailable and is re-established by the next call.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/advertiser_events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_advertiser_events.h"

namespace adserver::store {

namespace pg_detail {
class PgRunner;
}

class PostgresAdvertiserEventsStore final : public sql::SqlAdvertiserEvents {
 public:
  // Connects to `url` and applies the schema migrations. Unavailable if the server cannot be
  // reached.
  static Result<std::unique_ptr<PostgresAdvertiserEventsStore>> Open(const std::string& url);
  ~PostgresAdvertiserEventsStore() override;
  PostgresAdvertiserEventsStore(const PostgresAdvertiserEventsStore&) = delete;
  PostgresAdvertiserEventsStore& operator=(const PostgresAdvertiserEventsStore&) = delete;

 private:
  explicit PostgresAdvertiserEventsStore(std::unique_ptr<pg_detail::PgRunner> runner);

  std::unique_ptr<pg_detail::PgRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
