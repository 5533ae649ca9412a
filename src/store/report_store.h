#pragma once

// Reads of the serving/click/conversion rollups for reports (issue 16), grouped in the backend.
// The embedded adapter is SQLite (store/sqlite/sqlite_report_store.h). Thread-safe; every call
// may block on I/O (never call it on an event loop). Error contract as in store/stores.h
// (Unavailable when the backend is busy or gone, Internal else).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "store/records.h"

namespace adserver::store {

// The rollup tables, finest first: buckets of a minute (kept events.minute_rollup_retention),
// an hour (events.hour_rollup_retention) and a UTC day (forever).
enum class RollupTable : uint8_t { kMinute, kHour, kDay };
int64_t RollupTableSeconds(RollupTable table);

struct RollupQuery {
  RollupTable table = RollupTable::kDay;
  // Buckets starting in [from, to) (Unix seconds).
  int64_t from = 0;
  int64_t to = 0;
  // Rows are summed into buckets of this many seconds (a multiple of the table's bucket,
  // aligned to the Unix epoch); 0 sums every bucket into one row with bucket 0.
  int64_t group_seconds = 0;
  // Sums are always split by publisher; these split them further. Columns not split by come
  // back as 0 or "".
  bool by_ad_unit = false;
  bool by_campaign = false;
  bool by_ad = false;
  bool by_community = false;  // the campaign's community; 0 for requests that filled nothing
  bool by_arm = false;
  // Filters; unset = any.
  std::optional<Id> publisher_id;
  std::optional<Id> campaign_id;
  std::optional<Id> community_id;
  std::optional<std::string> ad_unit_id;
  // At most this many rows are returned.
  int64_t limit = 100'000;
};

// One grouped sum. spend = impression + click + conversion spend.
struct RollupGroup {
  int64_t bucket = 0;
  Id publisher_id = 0;
  std::string ad_unit_id;
  Id campaign_id = 0;
  Id ad_id = 0;
  Id community_id = 0;
  std::string arm;
  int64_t requests = 0;
  int64_t fills = 0;
  int64_t no_fills = 0;
  int64_t clicks = 0;  // billed
  int64_t conversions = 0;
  Micros spend = 0;
  int64_t invalid_clicks = 0;  // clicks that failed an invalid-traffic check
  int64_t over_budget_conversions = 0;  // attributed past the total budget, not billed
};

class ReportStore {
 public:
  virtual ~ReportStore() = default;
  // Sums of the rollups matching `query`, ordered by bucket then publisher; at most
  // query.limit rows (ask for one more than you allow to learn that there are more).
  virtual Result<std::vector<RollupGroup>> QueryRollups(const RollupQuery& query) = 0;
};

}  // namespace adserver::store
