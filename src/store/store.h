#pragma once

#include "store/activity_store.h"
#include "store/campaign_counter_store.h"
#include "store/inventory_store.h"

namespace adserver::store {

// The system of record for inventory, wallet activity and decision counters: three narrow
// interfaces (inventory_store.h, activity_store.h, campaign_counter_store.h) that one adapter
// implements together as `Store` (SqliteStore, and LmdbActivityStore, which puts activity in
// the LMDB index). A consumer takes the narrowest one it uses. Implementations are
// thread-safe; every call may block on I/O, so callers run them on admin/ingest worker threads,
// never on an event loop.
//
// Common error contract for every method:
//   NotFound     - the addressed record does not exist;
//   Conflict     - a uniqueness rule would break (duplicate slug, contract owned by another
//                  project) or a referenced record is missing (foreign key);
//   Unavailable  - the backend cannot be reached or is busy beyond its timeout;
//   Internal     - anything else the driver reports.
// Create* ignore `id`, `created_at`, `updated_at` of the input and return the stored record
// with them filled in (`now` is supplied by the caller so tests control time).
// Update* replace every mutable field of the record with that `id`.
class Store : public InventoryStore, public ActivityStore, public CampaignCounterStore {
 public:
  ~Store() override = default;
};

}  // namespace adserver::store
