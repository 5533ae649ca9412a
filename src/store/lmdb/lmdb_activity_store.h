#pragma once

// Wallet activity in the LMDB index (the embedded system of record of activity): app/ and cli/
// open the data directory with it, so the admin API, the NDJSON import and `serve` all read and
// write activity in LMDB. Project ids are checked against the inventory, so the contract
// (Conflict on an unknown project, nothing written) holds.

#include <memory>
#include <utility>

#include "store/activity_store.h"
#include "store/inventory_store.h"
#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::store {

// Thread-safe as its parts are.
class LmdbActivityStore final : public ActivityStore {
 public:
  LmdbActivityStore(std::shared_ptr<InventoryStore> projects,
                    std::shared_ptr<LmdbActivityIndex> activity)
      : projects_(std::move(projects)), activity_(std::move(activity)) {}

  LmdbActivityIndex& activity() { return *activity_; }
  std::shared_ptr<LmdbActivityIndex> activity_index() const { return activity_; }

  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;
  Result<uint64_t> ActivityChangeCounter() override;

 private:
  // RecordActivity's bulk path: LoadSorted for rows in wallet order into an empty index.
  Status AppendToEmptyIndex(const std::vector<ActivityRecord>& rows);

  std::shared_ptr<InventoryStore> projects_;
  std::shared_ptr<LmdbActivityIndex> activity_;
};

// Copies activity from `from` into `to` once, when `to` is empty (data directories created
// before the LMDB index kept activity in SQLite).
Status MigrateActivity(ActivityStore& from, LmdbActivityIndex& to);

}  // namespace adserver::store
