#pragma once

// Events (EventsStore: clicks, their rollup mark, serving rollups, conversions, totals, the
// installation's event secrets) in SQL, shared by the SQLite and PostgreSQL adapters
// (store/sql/sql.h): the EventsStore itself, over the adapter's transactions (sql::Runner,
// writes durable at commit; an adapter derives from it). The error contract is EventsStore's.
//
// What holds with several writers (processes on one SQLite file, nodes on one PostgreSQL):
// - Click inserts are serialised (WriterLock), so ids commit in increasing order and every
//   snapshot sees a prefix of them: the rollup mark (the last id rolled up) never passes a click
//   that commits later. A billed click is inserted under the partial unique index
//   `clicks_billed_once`, so a decision bills one click whichever node stores it.
// - Roll-ups of clicks are serialised (WriterLock): the mark moves in the transaction that adds
//   the clicks to the rollups, and the next roller reads the mark it left.
// - Rollup rows are upserted as increments, table by table in key order: concurrent writers
//   add up exactly and wait for each other in one order (no deadlock).
// - Conversion writes are serialised (WriterLock): the once-per-transaction and
//   once-per-person rules see every conversion committed before, and ids commit in order (how
//   ConversionsAfter is followed).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/events_store.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

// The table holding the click rollup mark (`clicks_rolled_up_to`): SQLite keeps it in
// events_meta with the secrets (its values are untyped); PostgreSQL in events_marks (bigint),
// next to events_meta (bytea).
const char* ClickRollupMarkTable(Dialect dialect);
inline constexpr const char* kClickRollupMark = "clicks_rolled_up_to";

class SqlEvents : public EventsStore {
 public:
  // Runs in the transaction that records conversions (sign 1: InsertConversions, the ones it
  // inserted) or marks them reorged (sign -1: the Revert calls, the ones it marked), after their
  // rows are written and before the commit; a failure rolls the whole transaction back. Not
  // called with an empty span.
  using ConversionBilling =
      std::function<Status(Connection&, std::span<const ConversionRecord>, int sign)>;

  explicit SqlEvents(Runner& runner) : runner_(runner) {}

  // Sets the billing step above (the cluster CLI's, PostgresEventsStore::BillConversionsTo).
  // Call before use.
  void SetConversionBilling(ConversionBilling billing) { billing_ = std::move(billing); }
  // Cluster mode (issue 37 item 3): the node whose clicks, conversions and reverts this writes
  // (recorded on their rows). Call before use; "" (the default) = none.
  void SetNodeId(std::string node_id) { node_id_ = std::move(node_id); }
  Result<NodeBacklog> NodeBacklogAfter(std::string_view node_id, Id click_id, Id conversion_id,
                                       int64_t revert_seq) override;

  Result<std::vector<uint8_t>> Secret(std::string_view name,
                                      std::span<const uint8_t> candidate) override;
  Status InsertClicks(std::span<ClickRecord> rows) override;
  Result<int64_t> RollUpClicks(int64_t max_rows) override;
  Status AddRollups(std::span<const RollupRow> rows) override;
  Result<std::vector<ClickRecord>> ListClicks(const EventQuery& query) override;
  Result<std::optional<int64_t>> BilledClickAt(const DecisionIdBytes& decision_id) override;
  Result<std::optional<ClickRecord>> LastBilledClick(Id campaign_id, uint64_t person,
                                                     int64_t served_from,
                                                     int64_t clicked_by) override;
  Result<std::vector<ConversionRecord>> InsertConversions(
      std::span<const ConversionCandidate> candidates, int64_t now) override;
  Result<std::vector<ConversionRecord>> RevertConversions(int64_t chain_id, int64_t block_number,
                                                          const std::array<uint8_t, 32>& block_hash,
                                                          int64_t now) override;
  Result<std::vector<ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) override;
  Result<std::vector<ConversionRecord>> ListConversions(const EventQuery& query) override;
  Result<std::vector<ConversionRecord>> ConversionsAfter(Id after_id, int limit) override;
  Result<std::vector<ConversionRecord>> ReorgedConversionsSince(int64_t since, Id after_id,
                                                                Id up_to_id, int limit) override;
  Result<Id> LastConversionId() override;
  Result<std::vector<ConversionRecord>> ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                   int limit) override;
  Result<int64_t> LastRevertSeq() override;
  Result<CampaignEventTotals> CampaignTotals(Id campaign_id) override;
  Result<std::vector<CampaignCountersRecord>> CountersFromEvents(int64_t now) override;
  Result<int64_t> Prune(const EventRetention& retention, int64_t now) override;

 private:
  Runner& runner_;
  ConversionBilling billing_;
  std::string node_id_;
};

}  // namespace adserver::store::sql
