#pragma once

#include <optional>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// Where saved counters stand in the conversions table (issue 37): every billed conversion
// with an id up to `conversion_id`, and every revert numbered up to `revert_seq`, is in them
// (EventsStore::LastConversionId, LastRevertSeq).
struct CounterMarks {
  Id conversion_id = 0;
  int64_t revert_seq = 0;
  // Cluster mode (issue 37 item 3): every click the node billed up to this id. The embedded
  // store keeps none (its counters reconcile with every click: CountersFromEvents).
  Id click_id = 0;
  bool operator==(const CounterMarks&) const = default;
};

// Decision counters per campaign (spend, events), saved by the serving process and read back
// at start-up. The error contract is in store/stores.h. Thread-safe; calls may block on I/O.
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
  // Saves `rows` and, in the same transaction, the marks they stand at (nullopt: unknown, the
  // marks are cleared). The embedded store (a server following other processes'
  // conversions) and a cluster node's (the events it billed, issue 37 item 3); others return
  // Internal.
  virtual Status SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                        const std::optional<CounterMarks>& marks) {
    (void)rows;
    (void)marks;
    return InternalError("counter marks are not supported by this store");
  }
  // The marks saved with the counters; nullopt when unknown.
  virtual Result<std::optional<CounterMarks>> LoadCounterMarks() {
    return InternalError("counter marks are not supported by this store");
  }
};

}  // namespace adserver::store
