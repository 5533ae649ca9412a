#pragma once

// EventsStore on PostgreSQL (cluster mode, issue 17): clicks, their rollups, serving rollups,
// conversions and the event secrets of every node in one database (migration 5: the SQLite
// adapter's tables, same names and columns; the click rollup mark in `events_marks`), through
// the SQL shared with SQLite (store/sql/sql_events.h, which says what holds with several
// writers). A call returns once its transaction has committed (durable under PostgreSQL's
// synchronous_commit). Click inserts of all nodes are serialised by an advisory lock, each
// batch for the length of its transaction (its commit included): the click writer should batch
// (the events service's group commit does). Thread-safe: one connection behind a mutex (these
// calls run on event workers and admin threads, never on an event loop). A lost connection
// answers Unavailable and is re-established by the next call. Checkpoint() is a no-op.

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "store/events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_events.h"

namespace adserver::store {

namespace pg_detail {
class PgRunner;
}

class PostgresEventsStore final : public sql::SqlEvents {
 public:
  // Connects to `url` (postgresql://user@host:port/db or libpq's key=value form) and applies
  // the schema migrations. Unavailable if the server cannot be reached.
  static Result<std::unique_ptr<PostgresEventsStore>> Open(const std::string& url);
  ~PostgresEventsStore() override;
  PostgresEventsStore(const PostgresEventsStore&) = delete;
  PostgresEventsStore& operator=(const PostgresEventsStore&) = delete;

  // Cluster mode's CLI (cluster::CliAttribution): from now on the conversions this store records
  // (InsertConversions) are billed in the transaction that records them, and the ones it marks
  // reorged unbilled in theirs: added to (taken from) the counters row `node_id` of
  // node_campaign_counters, and, for the campaigns `budgeted` accepts, queued in budget_takes
  // for Redis (PostgresStore::DrainBudgetTakes). A recorded conversion is never left out of the
  // counters, whenever the process dies. Call before use; `budgeted` runs on the calling thread.
  void BillConversionsTo(std::string node_id, std::function<bool(Id campaign)> budgeted);
  // A `serve` node (issue 37 item 3) calls SetNodeId (sql::SqlEvents): the clicks, conversions
  // and reverts this store writes name the node, so that its counters can be reconciled with what
  // it billed (NodeBacklogAfter).

 private:
  explicit PostgresEventsStore(std::unique_ptr<pg_detail::PgRunner> runner);

  std::unique_ptr<pg_detail::PgRunner> runner_;  // the transactions of the SQL above
};

}  // namespace adserver::store
