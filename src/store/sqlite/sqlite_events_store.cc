#include "store/sqlite/sqlite_events_store.h"

#include <utility>

#include "common/mutex.h"
#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_runner.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;

}  // namespace

SqliteEventsStore::SqliteEventsStore(std::unique_ptr<sqlite_detail::SqliteRunner> runner,
                                     std::unique_ptr<Connection> checkpoint_conn)
    : SqlEvents(*runner),
      runner_(std::move(runner)),
      checkpoint_conn_(std::move(checkpoint_conn)) {}

SqliteEventsStore::~SqliteEventsStore() = default;

Result<std::unique_ptr<SqliteEventsStore>> SqliteEventsStore::Open(const std::string& path,
                                                                   const SqliteOptions& options,
                                                                   bool synchronous_full) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  if (synchronous_full) ADS_RETURN_IF_ERROR(conn->Exec("PRAGMA synchronous=FULL;"));
  {
    // The file is in WAL mode (SqliteStore sets it too; the mode is kept in the file).
    ADS_ASSIGN_OR_RETURN(Statement wal, conn->Prepare("PRAGMA journal_mode=WAL"));
    ADS_ASSIGN_OR_RETURN(bool row, wal.Step());
    if (!row || wal.Text(0) != "wal") return InternalError("cannot enable WAL mode");
  }
  ADS_RETURN_IF_ERROR(conn->Exec("PRAGMA wal_autocheckpoint=0;"));
  // Before this mark existed every click was added to the rollups in its own commit: a file
  // without it starts the mark at its last click.
  const std::string init_mark = std::string("INSERT OR IGNORE INTO events_meta (name, value) ") +
                                "SELECT '" + sql::kClickRollupMark +
                                "', COALESCE(MAX(id), 0) FROM clicks;";
  ADS_RETURN_IF_ERROR(conn->Exec(init_mark.c_str()));
  // The checkpointer reads and writes whole pages; it needs no cache of its own.
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> checkpoint_conn,
                       Connection::Open(path, false, options.busy_timeout, 64));
  return std::unique_ptr<SqliteEventsStore>(new SqliteEventsStore(
      std::make_unique<sqlite_detail::SqliteRunner>(std::move(conn)), std::move(checkpoint_conn)));
}

Status SqliteEventsStore::Checkpoint() {
  MutexLock lock(checkpoint_mu_);
  // PASSIVE: copies what no reader still needs, never waits for the writer or blocks it.
  int log = 0, done = 0;
  int rc = sqlite3_wal_checkpoint_v2(checkpoint_conn_->db(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                     &log, &done);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
    return InternalError(std::string("checkpoint: ") + sqlite3_errmsg(checkpoint_conn_->db()));
  }
  return OkStatus();
}

}  // namespace adserver::store
