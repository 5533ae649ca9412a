#pragma once

// SQLite persistence of the decision engine's additions (issue 4): publisher, campaign and ad
// controls (tables *_controls, one optional row per record) and campaign counters. Called by
// SqliteStore inside its transactions.

#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

// Fill the controls of already loaded records (records without a row keep the defaults).
Status LoadPublisherControls(Connection& c, std::vector<PublisherRecord>& out);
Status LoadCampaignControls(Connection& c, std::vector<CampaignRecord>& out);
Status LoadAdControls(Connection& c, std::vector<AdRecord>& out);

// Replace the controls row of one record.
Status WritePublisherControls(Connection& c, Id id, const PublisherRecord& p);
Status WriteCampaignControls(Connection& c, Id id, const CampaignRecord& r);
Status WriteAdControls(Connection& c, Id id, const AdRecord& a);

Status SaveCounters(Connection& c, const std::vector<CampaignCountersRecord>& rows);
Result<std::vector<CampaignCountersRecord>> LoadCounters(Connection& c);

}  // namespace adserver::store::sqlite_detail
