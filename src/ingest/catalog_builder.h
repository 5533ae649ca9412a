#pragma once

#include <memory>

#include "common/status.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "store/records.h"
#include "store/activity_store.h"

namespace adserver::ingest {

// Builds the immutable serving catalog from store records: drops revoked keys, non-active
// campaigns and paused ads (and ads of dropped campaigns), computes per-format ad lists per
// API variant, campaign values and the project -> campaigns index. Never fails on valid
// records; Internal if records reference each other inconsistently.
Result<std::shared_ptr<const decision::Catalog>> BuildCatalog(
    const store::CatalogData& data, const decision::CatalogOptions& options);

// Reads all wallet activity from the store into a new in-memory index.
Result<std::shared_ptr<const decision::ActivityIndex>> BuildActivityIndex(
    store::ActivityStore& store);

}  // namespace adserver::ingest
