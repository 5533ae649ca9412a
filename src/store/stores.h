#pragma once

// The system of record as an installation opens it: three narrow parts (inventory_store.h,
// activity_store.h, campaign_counter_store.h). The embedded default keeps inventory and
// counters in SQLite (SqliteStore) and wallet activity in the LMDB index (LmdbActivityStore);
// cluster mode keeps all three in PostgreSQL. A bundle is what the composition root and the
// tools that open a data directory hold; every consumer takes the narrowest part it uses.
// Implementations are thread-safe; every call may block on I/O, so callers run them on
// admin/ingest worker threads, never on an event loop.
//
// Common error contract of the three interfaces:
//   NotFound     - the addressed record does not exist;
//   Conflict     - a uniqueness rule would break (duplicate slug, contract owned by another
//                  project) or a referenced record is missing (foreign key);
//   Unavailable  - the backend cannot be reached or is busy beyond its timeout;
//   Internal     - anything else the driver reports.
// Create* ignore `id`, `created_at`, `updated_at` of the input and return the stored record
// with them filled in (`now` is supplied by the caller so tests control time).
// Update* replace every mutable field of the record with that `id`.

#include <memory>

#include "store/activity_store.h"
#include "store/campaign_counter_store.h"
#include "store/inventory_store.h"

namespace adserver::store {

// The parts share ownership: one object may be two of them (SqliteStore is the embedded
// inventory and counters).
struct Stores {
  std::shared_ptr<InventoryStore> inventory;
  std::shared_ptr<ActivityStore> activity;
  std::shared_ptr<CampaignCounterStore> counters;
};

}  // namespace adserver::store
