#include "store/postgres/detail/pg_migrations.h"

#include <algorithm>
#include <ctime>
#include <span>
#include <string_view>

namespace adserver::store::pg_detail {
namespace {

struct Migration {
  int64_t version;
  std::string_view sql;
};

// Append only: a released migration is never edited (a node one release behind runs on the
// schema the newest one leaves).
constexpr Migration kMigrations[] = {
    {1, R"sql(
-- Decision counters per campaign (issue 4), absolute values upserted by each serving process.
CREATE TABLE campaign_counters (
  campaign_id bigint PRIMARY KEY,
  total_spend bigint NOT NULL,
  impressions bigint NOT NULL,
  clicks bigint NOT NULL,
  conversions bigint NOT NULL,
  day bigint NOT NULL,
  day_spend bigint NOT NULL,
  hour bigint NOT NULL,
  hour_spend bigint NOT NULL
);
-- Identity erasures (issue 20): keyed wallet digests (uint64 stored as bigint), one row per
-- digest; seq orders them for the nodes that follow the list.
CREATE TABLE identity_meta (
  name text PRIMARY KEY,
  value bytea NOT NULL
);
CREATE SEQUENCE identity_erasure_seq;
CREATE TABLE identity_erasures (
  digest bigint PRIMARY KEY,
  erased_at bigint NOT NULL,
  seq bigint NOT NULL UNIQUE
);
CREATE INDEX identity_erasures_erased_at ON identity_erasures (erased_at);
)sql"},
    {2, R"sql(
-- Versions of what nodes follow (inventory, ...): bumped in the writing transaction, which
-- also NOTIFYs adserver_changes (store/postgres/pg_change_feed.h).
CREATE TABLE change_versions (
  name text PRIMARY KEY,
  version bigint NOT NULL
);
)sql"},
};

// pg_advisory_xact_lock key of the migrations (any fixed 64-bit number; "adsrvmig").
constexpr int64_t kMigrationLock = 0x6164737276'6d6967;

}  // namespace

int64_t LatestSchemaVersion() {
  return std::size(kMigrations) == 0 ? 0 : std::end(kMigrations)[-1].version;
}

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
  for (const Migration& m : kMigrations) {
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
