#include "store/sqlite/detail/migrations.h"

#include <span>
#include <string>

#include "common/check.h"
#include "store/sql/migrations.h"

namespace adserver::store::sqlite_detail {
namespace {

// SQLite's steps of the one migration list (store/sql/migrations.h), versions 1..N.
std::span<const sql::MigrationStep> Steps() { return sql::MigrationsFor(sql::Engine::kSqlite); }

Result<int> CurrentVersion(Connection& conn) {
  ADS_ASSIGN_OR_RETURN(Statement stmt,
                       conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
  ADS_CHECK(row) << "aggregate query returned no row";
  return static_cast<int>(stmt.Int(0));
}

// Applies the migration after the current version, if any, in one write transaction.
// Sets `done` when the database is up to date.
Status ApplyNext(Connection& conn, bool& done) {
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn, Transaction::Kind::kWrite));
  ADS_ASSIGN_OR_RETURN(int current, CurrentVersion(conn));
  const int latest = LatestSchemaVersion();
  if (current > latest) {
    return InternalError("database schema version " + std::to_string(current) +
                         " is newer than this binary supports (" + std::to_string(latest) +
                         "); upgrade adserver");
  }
  done = current == latest;
  if (done) return txn.Commit();
  const sql::MigrationStep& m = Steps()[current];  // versions are 1..N in order
  // The list's texts are string literals: NUL-terminated, as sqlite3_exec wants.
  Status applied = conn.Exec(m.sql.data());
  if (!applied.ok()) {
    return Status(applied.code(),
                  "migration " + std::to_string(m.version) + ": " + applied.message());
  }
  {
    ADS_ASSIGN_OR_RETURN(Statement insert,
                         conn.Prepare("INSERT INTO schema_migrations (version, applied_at) "
                                      "VALUES (?1, CAST(strftime('%s', 'now') AS INTEGER))"));
    ADS_RETURN_IF_ERROR(insert.Bind(1, m.version).Run());
  }
  return txn.Commit();
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Steps().size()); }

Status ApplyMigrations(Connection& conn) {
  ADS_RETURN_IF_ERROR(
      conn.Exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"));
  for (bool done = false; !done;) {
    ADS_RETURN_IF_ERROR(ApplyNext(conn, done));
  }
  return OkStatus();
}

}  // namespace adserver::store::sqlite_detail
