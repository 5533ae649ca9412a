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
class SqliteEventsStore final : public EventsStore {
 public:
  static Result<std::unique_ptr<SqliteEventsStore>> Open(const std::string& path,
                                                         const SqliteOptions& options = {},
                                                         bool synchronous_full = false);
  ~SqliteEventsStore() override;
  SqliteEventsStore(const SqliteEventsStore&) = delete;
  SqliteEventsStore& operator=(const SqliteEventsStore&) = delete;

  // EventsStore (store/sql/sql_events.h).
  Result<std::vector<uint8_t>> Secret(std::string_view name,
                                      std::span<const uint8_t> candidate) override {
    return events_.Secret(name, candidate);
  }
  Status InsertClicks(std::span<ClickRecord> rows) override { return events_.InsertClicks(rows); }
  Result<int64_t> RollUpClicks(int64_t max_rows) override { return events_.RollUpClicks(max_rows); }
  Status AddRollups(std::span<const RollupRow> rows) override { return events_.AddRollups(rows); }
  Result<std::vector<ClickRecord>> ListClicks(const EventQuery& query) override {
    return events_.ListClicks(query);
  }
  Result<std::optional<int64_t>> BilledClickAt(const DecisionIdBytes& decision_id) override {
    return events_.BilledClickAt(decision_id);
  }
  Result<std::optional<ClickRecord>> LastBilledClick(Id campaign_id, uint64_t person,
                                                     int64_t served_from,
                                                     int64_t clicked_by) override {
    return events_.LastBilledClick(campaign_id, person, served_from, clicked_by);
  }
  Result<std::vector<ConversionRecord>> InsertConversions(
      std::span<const ConversionCandidate> candidates, int64_t now) override {
    return events_.InsertConversions(candidates, now);
  }
  Result<std::vector<CampaignCountersRecord>> CountersFromEvents(int64_t now) override {
    return events_.CountersFromEvents(now);
  }
  Result<std::vector<ConversionRecord>> ConversionsAfter(Id after_id, int limit) override {
    return events_.ConversionsAfter(after_id, limit);
  }
  Result<std::vector<ConversionRecord>> ReorgedConversionsSince(int64_t since, Id after_id,
                                                                Id up_to_id, int limit) override {
    return events_.ReorgedConversionsSince(since, after_id, up_to_id, limit);
  }
  Result<Id> LastConversionId() override { return events_.LastConversionId(); }
  Result<std::vector<ConversionRecord>> ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                   int limit) override {
    return events_.ReorgedConversionsAfterSeq(after_seq, limit);
  }
  Result<int64_t> LastRevertSeq() override { return events_.LastRevertSeq(); }
  Result<std::vector<ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) override {
    return events_.RevertReplacedConversions(chain_id, blocks, now);
  }
  Result<std::vector<ConversionRecord>> RevertConversions(int64_t chain_id, int64_t block_number,
                                                          const std::array<uint8_t, 32>& block_hash,
                                                          int64_t now) override {
    return events_.RevertConversions(chain_id, block_number, block_hash, now);
  }
  Result<std::vector<ConversionRecord>> ListConversions(const EventQuery& query) override {
    return events_.ListConversions(query);
  }
  Result<CampaignEventTotals> CampaignTotals(Id campaign_id) override {
    return events_.CampaignTotals(campaign_id);
  }
  Result<int64_t> Prune(const EventRetention& retention, int64_t now) override {
    return events_.Prune(retention, now);
  }
  Status Checkpoint() override;

 private:
  SqliteEventsStore(std::unique_ptr<sqlite_detail::Connection> conn,
                    std::unique_ptr<sqlite_detail::Connection> checkpoint_conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
  std::unique_ptr<sql::Runner> runner_;              // transactions on conn_ under mu_
  sql::SqlEvents events_;
  Mutex checkpoint_mu_;
  std::unique_ptr<sqlite_detail::Connection> checkpoint_conn_ ADS_GUARDED_BY(checkpoint_mu_);
};

}  // namespace adserver::store
