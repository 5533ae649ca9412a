#pragma once

// Versioned schema migrations of the PostgreSQL adapter, like the SQLite adapter's: each
// version is applied once, in order, in one transaction with its row in schema_migrations.
// Nodes starting together serialise on a transaction-scoped advisory lock, so exactly one
// applies each version. A database already at a newer version (a node one release behind
// during a rolling upgrade) is accepted: every migration keeps the previous release working.

#include <cstdint>

#include "common/status.h"
#include "store/postgres/detail/pg_connection.h"

namespace adserver::store::pg_detail {

// The newest schema version this build knows.
int64_t LatestSchemaVersion();

// Brings the database up to LatestSchemaVersion(); returns the version it is at afterwards
// (larger than LatestSchemaVersion() for a database migrated by a newer release).
Result<int64_t> ApplyMigrations(PgConnection& conn);

}  // namespace adserver::store::pg_detail
