#pragma once

// A data directory's layout and the system of record as a process opens it: the embedded
// SQLite and LMDB files, or cluster mode's PostgreSQL (app/backend.h opens everything else a
// server needs; the CLI's tools open only these).

#include <memory>
#include <string>

#include "common/status.h"
#include "store/lmdb/lmdb_activity_store.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/stores.h"

namespace adserver::app {

// Creates the data directory (and its parents) if missing; Unavailable if it cannot.
Status CreateDataDirectory(const std::string& data_dir);
// Path of the embedded SQLite database inside a data directory.
std::string DatabasePath(const std::string& data_dir);

// The embedded system of record of a data directory: SQLite (DATA_DIR/adserver.db) for inventory
// and counters, the LMDB index (DATA_DIR/activity.lmdb) for wallet activity.
struct EmbeddedStore {
  std::shared_ptr<store::SqliteStore> sqlite;
  std::shared_ptr<store::LmdbActivityStore> activity;

  store::Stores stores() const { return {sqlite, activity, sqlite}; }
  store::LmdbActivityIndex& index() const { return activity->activity(); }
};
// Opens (creating if missing) the embedded store of a data directory; activity that an earlier
// version kept in SQLite is copied into the LMDB index once.
Result<EmbeddedStore> OpenEmbeddedStore(const std::string& data_dir);
// The same as its three parts.
Result<store::Stores> OpenStore(const std::string& data_dir);

// Cluster mode's system of record as a tool opens it (the CLI: no node, so the counters are
// PostgresStore's unscoped table; never written without serving).
struct ClusterStore {
  std::shared_ptr<store::PostgresStore> postgres;
  std::shared_ptr<store::PostgresActivityStore> activity;

  store::Stores stores() const { return {postgres, activity, postgres}; }
};
Result<ClusterStore> OpenClusterStore(const std::string& database_url);
std::string ActivityIndexPath(const std::string& data_dir);
// Exposures for conversion attribution (DATA_DIR/exposures.lmdb).
std::string ExposureIndexPath(const std::string& data_dir);
// The bulk import ledger shared by `adserver activity import` and POST /admin/v1/activity.
std::string ImportLedgerPath(const std::string& data_dir);

}  // namespace adserver::app
