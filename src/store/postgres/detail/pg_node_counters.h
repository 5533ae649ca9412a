#pragma once

// The rows of node_campaign_counters (cluster mode, issue 17): each node's own counters, and the
// CLI's shared row (store::kCliNodeId) that conversions add to. Shared by PostgresStore (a
// node's flushes, AddCampaignCounters) and PostgresEventsStore (conversions billed in the
// transaction that records them).

#include <cstdint>
#include <map>
#include <span>
#include <string_view>

#include "common/status.h"
#include "store/events_store.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/records.h"

namespace adserver::store::pg_detail {

// The counter columns, in CampaignCountersRecord's field order.
inline constexpr const char* kCounterColumns =
    "campaign_id, total_spend_micros, impressions, clicks, conversions, day, day_spend_micros, "
    "hour, hour_spend_micros";

// How an existing row takes a new one: replaced by it (a node's own absolute counters) or added
// to (deltas of writers sharing a row): counts and total spend add; day and hour spend add
// within the row's period, start over in a newer one, and leave the row's alone for an older
// one. A delta may be negative.
enum class CountersWrite : uint8_t { kReplace, kAdd };

// Upserts `rows` as `node_id`'s rows, one statement each, on `c` (inside the caller's
// transaction when one is open).
Status UpsertNodeCounters(PgConnection& c, std::string_view node_id,
                          std::span<const CampaignCountersRecord> rows, CountersWrite how);

// Adds conversion `c` (sign 1) or its revert (sign -1) to its campaign's delta in `deltas`:
// one conversion and its price, in the day and hour it was recorded (a delta of an older
// period than the one it holds keeps the total only).
void AddConversionDelta(std::map<Id, CampaignCountersRecord>& deltas, const ConversionRecord& c,
                        int sign);
// The same for one billed click: one click and its price in the day and hour it was clicked.
void AddClickDelta(std::map<Id, CampaignCountersRecord>& deltas, Id campaign_id, Micros price,
                   int64_t clicked_at);

}  // namespace adserver::store::pg_detail
