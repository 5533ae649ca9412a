#pragma once

#include "common/status.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

// The schema version this binary knows (the last migration's version).
int LatestSchemaVersion();

// Brings the database up to LatestSchemaVersion(): creates `schema_migrations` if needed,
// then applies each missing migration in its own write transaction, recording it with its
// applied_at time. Safe to run from two processes at once (each step re-reads the version
// under the write lock). Internal if the database is newer than this binary knows.
Status ApplyMigrations(Connection& conn);

}  // namespace adserver::store::sqlite_detail
