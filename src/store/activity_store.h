#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// The absolute value of one (wallet, project_id, chain_id) activity entry, as replicas apply it
// (cluster mode: store/postgres/postgres_activity_store.h, cluster/activity_replica.h). Applying
// one twice changes nothing, and an undo is the value restored.
struct ActivityValue {
  ActivityRecord row;    // the entry's key and, unless removed, its last_seen and count
  bool removed = false;  // the entry no longer exists
  bool operator==(const ActivityValue&) const = default;
};

// Wallet activity: what each wallet did with each project, per chain. The error contract is
// in store/stores.h. Thread-safe; every call may block on I/O.
class ActivityStore {
 public:
  virtual ~ActivityStore() = default;

  // Wallet activity. RecordActivity upserts each row in one transaction keyed by
  // (wallet, project_id, chain_id): last_seen = max(old, new), count = old + new.
  // Conflict if a project_id does not exist (then nothing of the batch is written).
  virtual Status RecordActivity(const std::vector<ActivityRecord>& rows) = 0;
  virtual Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) = 0;
  // Streams every activity row to `fn` (ordered by wallet), for building the serving index.
  virtual Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) = 0;

  // Like InventoryStore::ChangeCounter, but for wallet activity: moves whenever any
  // connection commits a change to it.
  virtual Result<uint64_t> ActivityChangeCounter() = 0;
};

}  // namespace adserver::store
