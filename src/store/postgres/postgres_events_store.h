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

#include "common/mutex.h"
#include "common/status.h"
#include "store/events_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_events.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}

class PostgresEventsStore final : public EventsStore {
 public:
  // Connects to `url` (postgresql://user@host:port/db or libpq's key=value form) and applies
  // the schema migrations. Unavailable if the server cannot be reached.
  static Result<std::unique_ptr<PostgresEventsStore>> Open(const std::string& url);
  ~PostgresEventsStore() override;
  PostgresEventsStore(const PostgresEventsStore&) = delete;
  PostgresEventsStore& operator=(const PostgresEventsStore&) = delete;

  // Cluster mode's CLI (app::CliAttribution): from now on the conversions this store records
  // (InsertConversions) are billed in the transaction that records them, and the ones it marks
  // reorged unbilled in theirs: added to (taken from) the counters row `node_id` of
  // node_campaign_counters, and, for the campaigns `budgeted` accepts, queued in budget_takes
  // for Redis (PostgresStore::DrainBudgetTakes). A recorded conversion is never left out of the
  // counters, whenever the process dies. Call before use; `budgeted` runs on the calling thread.
  void BillConversionsTo(std::string node_id, std::function<bool(Id campaign)> budgeted);
  // A `serve` node (issue 37 item 3): the clicks, conversions and reverts this store writes
  // name `node_id`, so that the node's counters can be reconciled with what it billed
  // (NodeBacklogAfter). Call before use.
  void SetNodeId(std::string node_id) { events_.SetNodeId(std::move(node_id)); }

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
  Result<std::vector<ConversionRecord>> RevertConversions(int64_t chain_id, int64_t block_number,
                                                          const std::array<uint8_t, 32>& block_hash,
                                                          int64_t now) override {
    return events_.RevertConversions(chain_id, block_number, block_hash, now);
  }
  Result<std::vector<ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) override {
    return events_.RevertReplacedConversions(chain_id, blocks, now);
  }
  Result<std::vector<ConversionRecord>> ListConversions(const EventQuery& query) override {
    return events_.ListConversions(query);
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
  Result<CampaignEventTotals> CampaignTotals(Id campaign_id) override {
    return events_.CampaignTotals(campaign_id);
  }
  Result<std::vector<CampaignCountersRecord>> CountersFromEvents(int64_t now) override {
    return events_.CountersFromEvents(now);
  }
  Result<NodeBacklog> NodeBacklogAfter(std::string_view node_id, Id click_id, Id conversion_id,
                                       int64_t revert_seq) override {
    return events_.NodeBacklogAfter(node_id, click_id, conversion_id, revert_seq);
  }
  Result<int64_t> Prune(const EventRetention& retention, int64_t now) override {
    return events_.Prune(retention, now);
  }

 private:
  explicit PostgresEventsStore(std::unique_ptr<pg_detail::PgConnection> conn);

  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
  std::unique_ptr<sql::Runner> runner_;            // transactions on conn_ under mu_
  sql::SqlEvents events_;
};

}  // namespace adserver::store
