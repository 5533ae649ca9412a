#pragma once

// Per-placement counts shared between the nodes of a cluster (issue 36 item 6). Each node keeps
// the absolute impressions and events (clicks of CPC, conversions of CPA campaigns) it counted
// per (campaign, publisher) in rows of its own, and reads what the other nodes' rows gained, so
// that a campaign's factor on a publisher (decision/placement_rates.h) is learned from the
// whole cluster's traffic, as its rate is.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

struct PlacementCountersRow {
  std::string node_id;
  Id campaign_id = 0;
  Id publisher_id = 0;
  // The placement within the publisher (decision::AdUnitKey of its adUnitId, as a bigint's
  // bits); 0 = the publisher as a whole.
  uint64_t ad_unit = 0;
  int64_t impressions = 0;  // absolute, since the node's rows began
  int64_t events = 0;       // absolute; a reverted conversion takes one back
  // Increases with every row written, across the cluster (set by the store).
  int64_t seq = 0;
};

class PlacementCountersStore {
 public:
  virtual ~PlacementCountersStore() = default;

  // Writes this node's rows (node_id ignored: the store's), each replacing the node's row of its
  // pair, with a seq above every seq written before.
  virtual Status SaveOwn(std::span<const PlacementCountersRow> rows) = 0;
  // This node's rows (a restarted node continues its absolute values).
  virtual Result<std::vector<PlacementCountersRow>> LoadOwn() = 0;
  // The other nodes' rows with a seq above `after_seq`, by seq, at most `limit`.
  virtual Result<std::vector<PlacementCountersRow>> LoadOthersAfter(int64_t after_seq,
                                                                    size_t limit) = 0;
};

}  // namespace adserver::store
