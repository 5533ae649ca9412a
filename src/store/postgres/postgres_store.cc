#include "store/postgres/postgres_store.h"

#include <cstring>
#include <utility>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_sql.h"
#include "store/postgres/pg_change_feed.h"
#include "store/sql/detail/counters.h"

namespace adserver::store {
namespace {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgParam;
using pg_detail::PgResult;
using pg_detail::PgTransaction;

// pg_advisory_xact_lock key of erasure writes ("adsrvera").
constexpr int64_t kErasureLock = 0x6164737276'657261;

PgParam Digest(uint64_t digest) { return Param(static_cast<int64_t>(digest)); }

}  // namespace

PostgresStore::PostgresStore(std::unique_ptr<PgConnection> conn)
    : conn_(std::move(conn)), runner_(*this), inventory_(runner_), accounts_(runner_) {}

Status PostgresStore::SqlRunner::Write(unsigned bump,
                                       const std::function<Status(sql::Connection&)>& fn) {
  std::lock_guard<std::mutex> lock(store_.mu_);
  PgConnection& c = *store_.conn_;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  pg_detail::PgSqlConnection conn(c);
  ADS_RETURN_IF_ERROR(fn(conn));
  if (bump & kCatalog) ADS_RETURN_IF_ERROR(BumpChangeVersion(c, "inventory"));
  if (bump & kActivity) ADS_RETURN_IF_ERROR(BumpChangeVersion(c, "activity"));
  return txn.Commit();
}

Status PostgresStore::SqlRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  std::lock_guard<std::mutex> lock(store_.mu_);
  PgConnection& c = *store_.conn_;
  // One snapshot for every statement of the read (LoadCatalogData reads many tables).
  ADS_ASSIGN_OR_RETURN(PgTransaction txn,
                       PgTransaction::Begin(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  pg_detail::PgSqlConnection conn(c);
  ADS_RETURN_IF_ERROR(fn(conn));
  return txn.Commit();
}

Result<uint64_t> PostgresStore::ChangeCounter() {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec(
          "SELECT coalesce((SELECT version FROM change_versions WHERE name = 'inventory'), 0)"));
  ADS_ASSIGN_OR_RETURN(int64_t v, r.Int(0, 0));
  return static_cast<uint64_t>(v);
}

PostgresStore::~PostgresStore() = default;

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(conn)));
}

namespace {
constexpr const char* kCounterColumns =
    "campaign_id, total_spend_micros, impressions, clicks, conversions, day, day_spend_micros, "
    "hour, hour_spend_micros";

Result<std::vector<CampaignCountersRecord>> CounterRows(const PgResult& r) {
  std::vector<CampaignCountersRecord> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    CampaignCountersRecord row;
    int64_t* fields[] = {&row.campaign_id, &row.total_spend, &row.impressions,
                         &row.clicks,      &row.conversions, &row.day,
                         &row.day_spend,   &row.hour,        &row.hour_spend};
    for (int f = 0; f < 9; ++f) {
      ADS_ASSIGN_OR_RETURN(*fields[f], r.Int(i, f));
    }
    out.push_back(row);
  }
  return out;
}
}  // namespace

// How a node's counters row takes a new one: the values themselves (the node's own absolute
// counters) or added to it (deltas of writers sharing a row). SET expressions read the row as
// it was before the update.
constexpr const char* kCountersReplace =
    "total_spend_micros = excluded.total_spend_micros, "
    "impressions = excluded.impressions, clicks = excluded.clicks, "
    "conversions = excluded.conversions, day = excluded.day, "
    "day_spend_micros = excluded.day_spend_micros, hour = excluded.hour, "
    "hour_spend_micros = excluded.hour_spend_micros";
constexpr const char* kCountersAdd =
    "total_spend_micros = n.total_spend_micros + excluded.total_spend_micros, "
    "impressions = n.impressions + excluded.impressions, "
    "clicks = n.clicks + excluded.clicks, "
    "conversions = n.conversions + excluded.conversions, "
    "day_spend_micros = CASE WHEN n.day = excluded.day "
    "THEN n.day_spend_micros + excluded.day_spend_micros "
    "WHEN n.day < excluded.day THEN excluded.day_spend_micros ELSE n.day_spend_micros END, "
    "day = GREATEST(n.day, excluded.day), "
    "hour_spend_micros = CASE WHEN n.hour = excluded.hour "
    "THEN n.hour_spend_micros + excluded.hour_spend_micros "
    "WHEN n.hour < excluded.hour THEN excluded.hour_spend_micros ELSE n.hour_spend_micros END, "
    "hour = GREATEST(n.hour, excluded.hour)";

Status PostgresStore::UpsertNodeCounters(const std::vector<CampaignCountersRecord>& rows,
                                         const char* on_conflict_set) {
  std::lock_guard<std::mutex> lock(mu_);
  PgConnection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  const std::string sql = std::string("INSERT INTO node_campaign_counters AS n (node_id, ") +
                          kCounterColumns +
                          ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                          "ON CONFLICT (node_id, campaign_id) DO UPDATE SET " +
                          on_conflict_set;
  for (const CampaignCountersRecord& r : rows) {
    ADS_RETURN_IF_ERROR(
        c.Exec(sql, {Param(std::string_view(node_id_)), Param(r.campaign_id), Param(r.total_spend),
                     Param(r.impressions), Param(r.clicks), Param(r.conversions), Param(r.day),
                     Param(r.day_spend), Param(r.hour), Param(r.hour_spend)})
            .status());
  }
  return txn.Commit();
}

Status PostgresStore::SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
  if (node_id_.empty()) {
    return runner_.Write(0, [&](sql::Connection& c) { return sql::SaveCounters(c, rows); });
  }
  return UpsertNodeCounters(rows, kCountersReplace);
}

Status PostgresStore::AddCampaignCounters(const std::vector<CampaignCountersRecord>& deltas) {
  if (node_id_.empty()) return InternalError("AddCampaignCounters needs a node id");
  return UpsertNodeCounters(deltas, kCountersAdd);
}

Result<std::vector<CampaignCountersRecord>> PostgresStore::LoadCampaignCounters() {
  if (node_id_.empty()) {
    std::vector<CampaignCountersRecord> out;
    ADS_RETURN_IF_ERROR(runner_.Read([&](sql::Connection& c) -> Status {
      ADS_ASSIGN_OR_RETURN(out, sql::LoadCounters(c));
      return OkStatus();
    }));
    return out;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult r, conn_->Exec(std::string("SELECT ") + kCounterColumns +
                                                   " FROM node_campaign_counters WHERE node_id = "
                                                   "$1 ORDER BY campaign_id",
                                               {Param(std::string_view(node_id_))}));
  return CounterRows(r);
}

Result<std::vector<CampaignCountersRecord>> PostgresStore::LoadOtherNodesCounters(int64_t day,
                                                                                  int64_t hour) {
  if (node_id_.empty()) return std::vector<CampaignCountersRecord>{};
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec("SELECT campaign_id, sum(total_spend_micros)::bigint, sum(impressions)::bigint, "
                  "sum(clicks)::bigint, sum(conversions)::bigint, $2::bigint, "
                  "sum(CASE WHEN day = $2 THEN day_spend_micros ELSE 0 END)::bigint, $3::bigint, "
                  "sum(CASE WHEN hour = $3 THEN hour_spend_micros ELSE 0 END)::bigint "
                  "FROM node_campaign_counters WHERE node_id <> $1 "
                  "GROUP BY campaign_id ORDER BY campaign_id",
                  {Param(std::string_view(node_id_)), Param(day), Param(hour)}));
  return CounterRows(r);
}

Result<ErasureDigestKey> PostgresStore::DigestKey(const ErasureDigestKey& candidate) {
  std::lock_guard<std::mutex> lock(mu_);
  PgConnection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  ADS_RETURN_IF_ERROR(c.Exec("INSERT INTO identity_meta (name, value) VALUES ('digest_key', $1) "
                             "ON CONFLICT (name) DO NOTHING",
                             {pg_detail::BytesParam(candidate.data(), candidate.size())})
                          .status());
  ADS_ASSIGN_OR_RETURN(PgResult result,
                       c.Exec("SELECT value FROM identity_meta WHERE name = 'digest_key'"));
  if (result.rows() != 1) return InternalError("identity_meta.digest_key is missing");
  ADS_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, result.Bytes(0, 0));
  ErasureDigestKey key{};
  if (bytes.size() != key.size()) return InternalError("identity_meta.digest_key is not 16 bytes");
  std::memcpy(key.data(), bytes.data(), key.size());
  ADS_RETURN_IF_ERROR(txn.Commit());
  return key;
}

Result<ErasureRecord> PostgresStore::PutErasure(uint64_t digest, int64_t erased_at) {
  std::lock_guard<std::mutex> lock(mu_);
  PgConnection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  ADS_RETURN_IF_ERROR(c.Exec("SELECT pg_advisory_xact_lock($1)", {Param(kErasureLock)}).status());
  // A repeat re-dates the row and gives it a new (larger) seq that every follower sees.
  ADS_ASSIGN_OR_RETURN(PgResult result,
                       c.Exec("INSERT INTO identity_erasures (digest, erased_at, seq) "
                              "VALUES ($1, $2, nextval('identity_erasure_seq')) "
                              "ON CONFLICT (digest) DO UPDATE SET erased_at = EXCLUDED.erased_at, "
                              "seq = EXCLUDED.seq RETURNING seq",
                              {Digest(digest), Param(erased_at)}));
  ADS_ASSIGN_OR_RETURN(int64_t seq, result.Int(0, 0));
  ADS_RETURN_IF_ERROR(txn.Commit());
  return ErasureRecord{.digest = digest, .erased_at = erased_at, .seq = seq};
}

Status PostgresStore::ScanErasures(int64_t after_seq,
                                   const std::function<void(const ErasureRecord&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult result,
                       conn_->Exec("SELECT seq, digest, erased_at FROM identity_erasures "
                                   "WHERE seq > $1 ORDER BY seq",
                                   {Param(after_seq)}));
  for (int i = 0; i < result.rows(); ++i) {
    ADS_ASSIGN_OR_RETURN(int64_t seq, result.Int(i, 0));
    ADS_ASSIGN_OR_RETURN(int64_t digest, result.Int(i, 1));
    ADS_ASSIGN_OR_RETURN(int64_t erased_at, result.Int(i, 2));
    fn(ErasureRecord{.digest = static_cast<uint64_t>(digest), .erased_at = erased_at, .seq = seq});
  }
  return OkStatus();
}

Result<int64_t> PostgresStore::DeleteErasuresBefore(int64_t cutoff) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult result,
      conn_->Exec("DELETE FROM identity_erasures WHERE erased_at < $1", {Param(cutoff)}));
  return result.Changed();
}

}  // namespace adserver::store
