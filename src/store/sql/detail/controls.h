#pragma once

// The decision engine's additions to the inventory (issue 4): publisher, campaign and ad
// controls (tables *_controls, one optional row per record). Called by SqlInventory inside its
// transactions.

#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

// Fill the controls of already loaded records (records without a row keep the defaults).
Status LoadPublisherControls(Connection& c, std::vector<PublisherRecord>& out);
Status LoadCampaignControls(Connection& c, std::vector<CampaignRecord>& out);
Status LoadAdControls(Connection& c, std::vector<AdRecord>& out);

// Replace the controls row of one record.
Status WritePublisherControls(Connection& c, Id id, const PublisherRecord& p);
Status WriteCampaignControls(Connection& c, Id id, const CampaignRecord& r);
Status WriteAdControls(Connection& c, Id id, const AdRecord& a);

}  // namespace adserver::store::sql
