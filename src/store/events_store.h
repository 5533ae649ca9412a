#pragma once

// Persistence of events (issue 15): clicks, minute/hour/day rollups of serving and clicks, and
// the installation's event secrets. The embedded adapter is SQLite
// (store/sqlite/sqlite_events_store.h); a PostgreSQL adapter implements the same interface.
// Thread-safe; every call may block on I/O (never call it on an event loop).
// Error contract as in store/stores.h (Unavailable when the backend is busy or gone, Internal
// else).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "store/records.h"

namespace adserver::store {

using DecisionIdBytes = std::array<uint8_t, 16>;

// What a click counted as. kBilled: the first valid click of its decision (it bills the CPC bid
// and counts); kDuplicate: a later click of a decision already billed; kExpired: the
// token was older than events.click_ttl; kInvalid: an invalid-traffic check failed (`reason`
// names it, docs/api-notes.md "Invalid traffic"): it bills nothing and counts nowhere but in
// the invalid counts.
enum class ClickStatus : uint8_t { kBilled, kDuplicate, kExpired, kInvalid };
inline std::string_view ClickStatusName(ClickStatus status) {
  switch (status) {
    case ClickStatus::kBilled:
      return "billed";
    case ClickStatus::kDuplicate:
      return "duplicate";
    case ClickStatus::kExpired:
      return "expired";
    case ClickStatus::kInvalid:
      return "invalid";
  }
  return "billed";
}

struct ClickRecord {
  Id id = 0;  // assigned by InsertClicks; increases with insertion order
  DecisionIdBytes decision_id{};
  Id publisher_id = 0;
  std::string ad_unit_id;  // "" = none sent
  Id campaign_id = 0;
  Id ad_id = 0;
  std::string arm;  // "" = none
  int64_t served_at = 0;
  int64_t clicked_at = 0;
  Micros price = 0;  // billed amount: the token's price when kBilled, else 0
  uint64_t person = 0;
  bool earlier_variant = false;
  // A row passed as kInvalid is stored as kDuplicate when its decision already has a billed
  // click (the duplicate check comes first).
  ClickStatus status = ClickStatus::kBilled;
  std::string reason;  // kInvalid only: the failed check ("crawler", ...); "" otherwise
  std::string ip;      // the client's address truncated to /24 or /48; "" = unknown
  // Cluster mode (issue 37 item 3): billed while PostgreSQL was away, from the node's outbox.
  // Its node counted it when it buffered it, so the row names no node (no mark covers it).
  bool buffered = false;
};

// Counts of one rollup bucket and dimension combination. Serving rows have campaign_id and
// ad_id 0 for requests that filled nothing.
struct RollupRow {
  int64_t bucket = 0;  // Unix seconds of the bucket's start (a whole minute for AddRollups)
  Id publisher_id = 0;
  std::string ad_unit_id;
  Id campaign_id = 0;
  Id ad_id = 0;
  std::string arm;
  int64_t requests = 0;
  int64_t fills = 0;  // = served impressions (a 200 for a live key), valid ones only
  // Served impressions an invalid-traffic check refused (answered, never billed), in all and
  // per reason ("crawler", "wallet_rate", ...).
  int64_t invalid_fills = 0;
  std::vector<std::pair<std::string, int64_t>> invalid_fills_by_reason;
  int64_t no_fills = 0;
  int64_t errors = 0;
  Micros impression_spend = 0;
  int64_t clicks = 0;  // billed clicks
  int64_t duplicate_clicks = 0;
  int64_t expired_clicks = 0;
  int64_t invalid_clicks = 0;
  Micros click_spend = 0;
  int64_t conversions = 0;  // billed (a reorg subtracts what it undoes)
  Micros conversion_spend = 0;
  // Attributed past the campaign's total budget, never billed (issue 37; a reorg subtracts).
  int64_t over_budget_conversions = 0;
};

// kOverBudget (issue 37): attributed, but its price would have passed the campaign's total
// budget: listed and counted, never billed (not in the rollups' conversions or spend).
enum class ConversionStatus : uint8_t { kBilled, kReorged, kOverBudget };
inline std::string_view ConversionStatusName(ConversionStatus s) {
  return s == ConversionStatus::kReorged      ? "reorged"
         : s == ConversionStatus::kOverBudget ? "over_budget"
                                              : "billed";
}

// One onchain transaction (or log) attributed to an exposure of a campaign (issue 15).
struct ConversionRecord {
  Id id = 0;  // assigned by InsertConversions
  Id campaign_id = 0;
  Id ad_id = 0;
  Id publisher_id = 0;
  std::string ad_unit_id;
  std::string arm;
  DecisionIdBytes decision_id{};
  Address wallet;
  uint64_t person = 0;
  int64_t chain_id = 0;
  std::array<uint8_t, 32> tx_hash{};
  int64_t log_index = -1;  // -1: a transaction to the contract (no log)
  int64_t block_number = 0;
  std::array<uint8_t, 32> block_hash{};
  int64_t block_time = 0;
  bool click_touch = false;  // touch: click (true) or view
  int64_t touched_at = 0;    // the click or serve it is attributed to
  Micros price = 0;          // billed CPA bid (0 for other models)
  bool confirmed = true;     // false: from a block not yet `confirmations` deep
  ConversionStatus status = ConversionStatus::kBilled;
  int64_t recorded_at = 0;
  std::optional<int64_t> reverted_at;
  // Issue 37: the order of its revert among all reverts (1, 2, ...; 0 when not reverted, or
  // reverted before the sequence existed): how a server knows which reverts its counters hold.
  int64_t revert_seq = 0;
};

// What a cluster node billed and undid past the marks its counters were saved at (issue 37
// item 3): the events a kill -9 kept from its last counter flush.
struct NodeBacklog {
  std::vector<ClickRecord> clicks;            // its billed clicks above the click mark, by id
  std::vector<ConversionRecord> conversions;  // conversions it billed above the conversion mark
                                              // (still billed, or reorged since), by id
  std::vector<ConversionRecord> reverts;      // its reverts above the revert mark, by revert_seq
  // Its highest click id (any status), conversion id and revert_seq: the marks to continue
  // from (the marks given when it has none above them).
  Id last_click_id = 0;
  Id last_conversion_id = 0;
  int64_t last_revert_seq = 0;
};

// A block of a chain at its height.
struct BlockAtHeight {
  int64_t number = 0;
  std::array<uint8_t, 32> hash{};
};

// A conversion to record, with the campaign's once-per-person rule.
struct ConversionCandidate {
  ConversionRecord record;
  bool count_once_per_person = true;
  int64_t window_seconds = 14 * 86400;
  // What is left of the campaign's total budget before this batch (none: no total budget).
  // InsertConversions bills the batch's conversions of a campaign in order while their prices
  // fit in it and records the rest kOverBudget. The same for every candidate of a campaign.
  std::optional<Micros> budget_left;
};

// Filters of the read-back listings; newest first.
struct EventQuery {
  std::optional<Id> campaign_id;
  std::optional<Id> publisher_id;
  std::optional<int64_t> from;  // inclusive, Unix seconds
  std::optional<int64_t> to;    // exclusive
  std::optional<Id> before_id;  // cursor: rows with a smaller id
  // Rows of the campaigns of this community (an advertiser's own, issue 16).
  std::optional<Id> community_id;
  int limit = 100;
};

// A campaign's totals since creation (from the daily rollups).
struct CampaignEventTotals {
  int64_t impressions = 0;
  Micros impression_spend = 0;
  int64_t clicks = 0;
  int64_t duplicate_clicks = 0;
  int64_t expired_clicks = 0;
  int64_t invalid_clicks = 0;
  // Invalid clicks per reason (only reasons seen), from the daily invalid-click rollups.
  std::map<std::string, int64_t> invalid_clicks_by_reason;
  // Served impressions refused by an invalid-traffic check (not in `impressions`), in all and
  // per reason, from the daily rollups.
  int64_t invalid_impressions = 0;
  std::map<std::string, int64_t> invalid_impressions_by_reason;
  Micros click_spend = 0;
  int64_t conversions = 0;
  Micros conversion_spend = 0;
  int64_t click_conversions = 0;  // by touch, among billed conversions (raw rows' retention)
  int64_t view_conversions = 0;
  int64_t reorged_conversions = 0;
  int64_t over_budget_conversions = 0;  // attributed past the total budget, never billed
};

// How long each kind of row is kept (seconds); daily rollups are kept forever.
struct EventRetention {
  int64_t raw_seconds = 90 * 86400;
  int64_t minute_rollup_seconds = 48 * 3600;
  int64_t hour_rollup_seconds = 400 * 86400;
};

// Where the events service's click writer commits its batches (events/events_service.h): every
// EventsStore, or events::BufferedEventWriter over one, which keeps clicks on the node's disk
// while the store is away (cluster mode).
class ClickSink {
 public:
  virtual ~ClickSink() = default;

  // Stores clicks in one transaction (durable when this returns: a process crash cannot lose
  // them). A row passed as kBilled or kInvalid is stored as kDuplicate when its decision
  // already has a billed click (earlier or in this batch). Fills in ids and the final status.
  // The rows reach the rollups later, through RollUpClicks: the click's commit writes the
  // click alone.
  virtual Status InsertClicks(std::span<ClickRecord> rows) = 0;
  // Moves committed writes from a write-ahead log into the database, off the writer's path
  // (the events service calls it every flush interval). Stores without one need not.
  virtual Status Checkpoint() { return OkStatus(); }
};

// What else the events service writes: the installation's secrets, the serving rollups, the
// click rollup and pruning.
class EventWriter : public ClickSink {
 public:
  // The stored secret `name`, or `candidate` stored under it when there is none yet (first use
  // by any process wins; every later call returns that one).
  virtual Result<std::vector<uint8_t>> Secret(std::string_view name,
                                              std::span<const uint8_t> candidate) = 0;

  // Adds the clicks stored since the last call to the minute, hour and day rollups of their
  // click time (invalid ones also to the daily per-reason counts), each exactly once: a mark
  // of the last click rolled up moves in the same transaction as the rollups, so a crash at any
  // point neither loses nor doubles one (the next call, in this process or the next, resumes
  // at the mark). At most `max_rows` clicks per call; returns how many it rolled up.
  virtual Result<int64_t> RollUpClicks(int64_t max_rows) = 0;
  // Adds serving counts (one row per minute and dimensions) to the minute, hour and day
  // rollups, in one transaction.
  virtual Status AddRollups(std::span<const RollupRow> rows) = 0;

  // Deletes raw rows and rollups older than the retention allows (never a click not yet rolled
  // up). Returns rows deleted.
  virtual Result<int64_t> Prune(const EventRetention& retention, int64_t now) = 0;
};

// The events of an installation: clicks, conversions, their rollups and what reads them.
class EventsStore : public EventWriter {
 public:
  virtual Result<std::vector<ClickRecord>> ListClicks(const EventQuery& query) = 0;
  // When the decision's click was billed (Unix seconds), or nullopt.
  virtual Result<std::optional<int64_t>> BilledClickAt(const DecisionIdBytes& decision_id) = 0;
  // The person's most recent billed click on the campaign with clicked_at <= clicked_by and
  // served_at >= served_from, or nullopt.
  virtual Result<std::optional<ClickRecord>> LastBilledClick(Id campaign_id, uint64_t person,
                                                             int64_t served_from,
                                                             int64_t clicked_by) = 0;

  // Records conversions in one transaction, skipping a candidate whose transaction (chain, tx
  // hash, log index) is already billed for the campaign, or, with count_once_per_person,
  // whose person already has a billed conversion of the campaign in the window before it.
  // Adds the recorded ones to the rollups (at block time) and returns them with their ids.
  virtual Result<std::vector<ConversionRecord>> InsertConversions(
      std::span<const ConversionCandidate> candidates, int64_t now) = 0;
  // Marks the billed conversions of a block a reorg abandoned as reorged, takes them out of
  // the rollups, and returns them (as they were billed).
  virtual Result<std::vector<ConversionRecord>> RevertConversions(
      int64_t chain_id, int64_t block_number, const std::array<uint8_t, 32>& block_hash,
      int64_t now) = 0;
  // Marks reorged (and takes out of the rollups) the billed conversions of `chain_id` at the
  // heights of `blocks` that name another block hash than the one at their height: conversions
  // recorded for a block the activity index never kept (recorded, then a crash or a failed
  // commit, then a reorg). Imported conversions (zero block hash) are kept. Returns them.
  virtual Result<std::vector<ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) = 0;
  virtual Result<std::vector<ConversionRecord>> ListConversions(const EventQuery& query) = 0;
  // Conversions with an id above `after_id` (billed and reorged ones, with their status),
  // oldest first, at most `limit`; and the highest conversion id so far (0 when none). How a
  // server learns the conversions another process (the CLI's import or indexer) recorded in
  // the same database.
  virtual Result<std::vector<ConversionRecord>> ConversionsAfter(Id after_id, int limit) = 0;
  // Conversions reorged at or after `since` (their reverted_at) with an id in (after_id,
  // up_to_id], by id, at most `limit`: how a server learns the reverts another process made.
  virtual Result<std::vector<ConversionRecord>> ReorgedConversionsSince(int64_t since,
                                                                        Id after_id, Id up_to_id,
                                                                        int limit) = 0;
  virtual Result<Id> LastConversionId() = 0;
  // Reorged conversions whose revert_seq is above `after_seq`, in revert order, at most `limit`;
  // and the highest revert_seq so far (0 when none). Reverts are numbered in commit order.
  virtual Result<std::vector<ConversionRecord>> ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                           int limit) = 0;
  virtual Result<int64_t> LastRevertSeq() = 0;
  virtual Result<CampaignEventTotals> CampaignTotals(Id campaign_id) = 0;
  // Cluster mode (issue 37 item 3): what node `node_id` billed and undid past its marks (click
  // id, conversion id, revert_seq). Stores without nodes return Internal.
  virtual Result<NodeBacklog> NodeBacklogAfter(std::string_view node_id, Id click_id,
                                               Id conversion_id, int64_t revert_seq) {
    (void)node_id, (void)click_id, (void)conversion_id, (void)revert_seq;
    return InternalError("nodes are not supported by this events store");
  }
  // Every campaign's counters as the recorded events make them, as of `now`: billed impressions
  // (fills), clicks and conversions and their spend since the first rollup, in the day and in
  // the hour of `now` (the daily and hourly rollups, plus the billed clicks not rolled up yet).
  // What start-up recovery checks the flushed counters against (a kill -9 loses up to one
  // flush interval of those, never a committed click or conversion).
  virtual Result<std::vector<CampaignCountersRecord>> CountersFromEvents(int64_t now) = 0;
};

}  // namespace adserver::store
