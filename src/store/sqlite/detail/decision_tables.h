#pragma once

// SQLite persistence of the campaign counters (issue 4). Called by SqliteStore inside its
// transactions. (The controls tables are the shared inventory's: store/sql/detail/controls.h.)

#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

Status SaveCounters(Connection& c, const std::vector<CampaignCountersRecord>& rows);
Result<std::vector<CampaignCountersRecord>> LoadCounters(Connection& c);

}  // namespace adserver::store::sqlite_detail
