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
}  // namespace sqlite_detail

// AdvertiserEventsStore on the same SQLite file as SqliteStore (tables `advertiser_events`
// and `advertiser_event_counts`, migration 6; an event's spclid is looked up in `clicks`),
// running the SQL it shares with the PostgreSQL adapter (store/sql/sql_advertiser_events.h).
// One connection of its own, serialised by a mutex: inserts from the worker pool and admin
// reads share it, never an event loop. Each insert is one transaction committed in WAL mode
// with synchronous=NORMAL: it survives the process being killed (kill -9); only an
// operating-system crash or power loss can take the last commits.
class SqliteAdvertiserEventsStore final : public AdvertiserEventsStore {
 public:
  static Result<std::unique_ptr<SqliteAdvertiserEventsStore>> Open(
      const std::string& path, const SqliteOptions& options = {});
  ~SqliteAdvertiserEventsStore() override;
  SqliteAdvertiserEventsStore(const SqliteAdvertiserEventsStore&) = delete;
  SqliteAdvertiserEventsStore& operator=(const SqliteAdvertiserEventsStore&) = delete;

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
  explicit SqliteAdvertiserEventsStore(std::unique_ptr<sqlite_detail::Connection> conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
  std::unique_ptr<sql::Runner> runner_;              // transactions on conn_ under mu_
  sql::SqlAdvertiserEvents events_;
};

}  // namespace adserver::store
