#include "store/postgres/detail/pg_migrations.h"

#include <algorithm>
#include <ctime>
#include <span>
#include <string_view>

#include "store/sql/migrations.h"

namespace adserver::store::pg_detail {
namespace {

// PostgreSQL's steps of the one migration list (store/sql/migrations.h), in version order.
std::span<const sql::MigrationStep> Steps() {
  return sql::MigrationsFor(sql::Engine::kPostgres);
}

// pg_advisory_xact_lock key of the migrations (any fixed 64-bit number; "adsrvmig").
constexpr int64_t kMigrationLock = 0x6164737276'6d6967;

}  // namespace

int64_t LatestSchemaVersion() { return Steps().empty() ? 0 : Steps().back().version; }

Result<int64_t> ApplyMigrations(PgConnection& conn) {
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(conn));
  ADS_RETURN_IF_ERROR(
      conn.Exec("SELECT pg_advisory_xact_lock($1)", {Param(kMigrationLock)}).status());
  ADS_RETURN_IF_ERROR(
      conn.ExecScript("CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, "
                      "applied_at bigint NOT NULL)"));
  ADS_ASSIGN_OR_RETURN(PgResult current,
                       conn.Exec("SELECT coalesce(max(version), 0) FROM schema_migrations"));
  ADS_ASSIGN_OR_RETURN(int64_t version, current.Int(0, 0));
  for (const sql::MigrationStep& m : Steps()) {
    if (m.version <= version) continue;
    ADS_RETURN_IF_ERROR(conn.ExecScript(m.sql));
    ADS_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO schema_migrations (version, applied_at) "
                  "VALUES ($1, $2)",
                  {Param(m.version), Param(static_cast<int64_t>(std::time(nullptr)))})
            .status());
    version = m.version;
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return version;
}

}  // namespace adserver::store::pg_detail
