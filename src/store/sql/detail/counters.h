#pragma once

// The decision counters per campaign (issue 4; table campaign_counters, absolute values upserted
// by campaign id), shared by the SQLite and PostgreSQL adapters. Called inside their
// transactions.

#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

Status SaveCounters(Connection& c, const std::vector<CampaignCountersRecord>& rows);
Result<std::vector<CampaignCountersRecord>> LoadCounters(Connection& c);

}  // namespace adserver::store::sql
