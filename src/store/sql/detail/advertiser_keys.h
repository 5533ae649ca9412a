#pragma once

// SQLite persistence of advertiser keys (issue 15, table `advertiser_keys`, migration 6).
// Called by SqliteStore inside its transactions.

#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

// Keys ordered by id: all of them (`community_id` and `key_id` unset), one community's, or
// the one with `key_id`.
Result<std::vector<AdvertiserKeyRecord>> LoadAdvertiserKeys(Connection& c,
                                                            std::optional<Id> community_id,
                                                            std::optional<Id> key_id);
// Inserts `k` created at `now`; returns its id. Conflict naming the cause: a missing community
// or a duplicate hash.
Result<Id> InsertAdvertiserKey(Connection& c, const AdvertiserKeyRecord& k, int64_t now);
// Sets revoked_at (once). NotFound unless the key exists and belongs to the community.
Status RevokeAdvertiserKey(Connection& c, Id community_id, Id key_id, int64_t now);

}  // namespace adserver::store::sql
