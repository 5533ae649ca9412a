#pragma once

// A Store whose wallet activity lives in the LMDB index and everything else in an inner store
// (SQLite). app/ and cli/ open the data directory through it, so the admin API, the NDJSON
// import and `serve` all read and write activity in LMDB.

#include <memory>

#include "store/composed_store.h"
#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::store {

// Thread-safe as its parts are. Inventory and counters are the inner store's (ComposedStore).
class LmdbActivityStore final : public ComposedStore {
 public:
  LmdbActivityStore(std::unique_ptr<Store> inner, std::shared_ptr<LmdbActivityIndex> activity)
      : ComposedStore(*inner, *inner, *inner),
        inner_(std::move(inner)),
        activity_(std::move(activity)) {}

  LmdbActivityIndex& activity() { return *activity_; }
  std::shared_ptr<LmdbActivityIndex> activity_index() const { return activity_; }

  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;
  Result<uint64_t> ActivityChangeCounter() override;

 private:
  // RecordActivity's bulk path: LoadSorted for rows in wallet order into an empty index.
  Status AppendToEmptyIndex(const std::vector<ActivityRecord>& rows);

  std::unique_ptr<Store> inner_;
  std::shared_ptr<LmdbActivityIndex> activity_;
};

// Copies activity from `from` into `to` once, when `to` is empty (data directories created
// before the LMDB index kept activity in SQLite).
Status MigrateActivity(Store& from, LmdbActivityIndex& to);

}  // namespace adserver::store
