#pragma once

#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// Decision counters per campaign (spend, events), saved by the serving process and read back
// at start-up. The error contract is Store's (store.h). Thread-safe; calls may block on I/O.
class CampaignCounterStore {
 public:
  virtual ~CampaignCounterStore() = default;

  // Decision counters (issue 4): spend and event counts per campaign, written asynchronously
  // by the serving process and read back at start-up. Rows are upserted by campaign id with
  // absolute values; not an inventory change (ChangeCounter does not move). Counters of
  // deleted campaigns are kept (harmless). Adapters without support return Internal.
  virtual Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
    (void)rows;
    return InternalError("campaign counters are not supported by this store");
  }
  virtual Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() {
    return InternalError("campaign counters are not supported by this store");
  }
};

}  // namespace adserver::store
