#pragma once

// What a cluster node reads and writes of the cluster's counters beside its own flushes
// (store::CampaignCounterStore): the other nodes' counters, those of nodes that stopped
// flushing, and the budget takes the cluster CLI queued. PostgreSQL's (PostgresStore) in
// production; cluster::ClusterNode takes this port, so its loops are tested with a fake.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "store/records.h"

namespace adserver::store {

// What one ReconcileDeadNodes round added: the nodes it reconciled and their events.
struct DeadNodesReconciled {
  std::vector<std::string> nodes;
  int64_t clicks = 0;
  int64_t conversions = 0;
  int64_t reverts = 0;
};

class NodeCountersStore {
 public:
  virtual ~NodeCountersStore() = default;

  // Every other node's counters summed per campaign; their day and hour spend only where a
  // node's row is of day `day` and hour `hour` (an older row's spend is of a period that is
  // over).
  virtual Result<std::vector<CampaignCountersRecord>> LoadOtherNodesCounters(int64_t day,
                                                                             int64_t hour) = 0;
  // For every other node whose counters were last saved more than `dead_seconds` ago, adds
  // what it billed and undid past its marks to its rows (one node of the cluster at a time).
  virtual Result<DeadNodesReconciled> ReconcileDeadNodes(int64_t dead_seconds) = 0;
  // Delivers queued budget takes, oldest first, at most `limit` rows: their sum per campaign
  // goes to `apply(campaign, micros)` (negative: to give back); the rows of every campaign it
  // accepted are deleted. Stops at the first campaign `apply` refuses and returns its status.
  // Returns the rows delivered.
  virtual Result<size_t> DrainBudgetTakes(
      const std::function<Status(Id campaign, Micros micros)>& apply, int limit) = 0;
};

}  // namespace adserver::store
