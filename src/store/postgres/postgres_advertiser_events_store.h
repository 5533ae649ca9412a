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

#include "common/mutex.h"
#include "common/status.h"
#include "store/advertiser_events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_advertiser_events.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}

class PostgresAdvertiserEventsStore final : public AdvertiserEventsStore {
 public:
  // Connects to `url` and applies the schema migrations. Unavailable if the server cannot be
  // reached.
  static Result<std::unique_ptr<PostgresAdvertiserEventsStore>> Open(const std::string& url);
  ~PostgresAdvertiserEventsStore() override;
  PostgresAdvertiserEventsStore(const PostgresAdvertiserEventsStore&) = delete;
  PostgresAdvertiserEventsStore& operator=(const PostgresAdvertiserEventsStore&) = delete;

  // AdvertiserEventsStore (store/sql/sql_advertiser_events.h).
  Status Insert(AdvertiserEventRecord& event) override { return events_.Insert(event); }
  Result<std::vector<AdvertiserEventRecord>> List(const AdvertiserEventQuery& query) override {
    return events_.List(query);
  }
  Result<std::vector<AdvertiserEventCount>> Counts(std::optional<Id> campaign_id,
                                                   std::optional<Id> community_id) override {
    return events_.Counts(campaign_id, community_id);
  }
  Result<std::vector<AdvertiserEventCount>> InvalidCounts(std::optional<Id> campaign_id,
                                                          std::optional<Id> community_id) override {
    return events_.InvalidCounts(campaign_id, community_id);
  }
  Result<int64_t> Prune(int64_t before) override { return events_.Prune(before); }

 private:
  explicit PostgresAdvertiserEventsStore(std::unique_ptr<pg_detail::PgConnection> conn);

  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
  std::unique_ptr<sql::Runner> runner_;            // transactions on conn_ under mu_
  sql::SqlAdvertiserEvents events_;
};

}  // namespace adserver::store
