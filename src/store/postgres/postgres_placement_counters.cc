#include "store/postgres/postgres_placement_counters.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"

namespace adserver::store {
namespace {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgResult;
using pg_detail::PgTransaction;

// Rows per statement of a save (one transaction however many statements).
constexpr size_t kPlacementRowsPerStatement = 5'000;

// Upserts the node's ($1) rows given as arrays ($2..$6), each with a new seq.
constexpr std::string_view kSaveSql =
    "INSERT INTO node_placement_counters (node_id, campaign_id, publisher_id, ad_unit, "
    "impressions, events, seq) SELECT $1, c, p, u, i, e, nextval('node_placement_seq') FROM "
    "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) "
    "AS t (c, p, u, i, e) "
    "ON CONFLICT (node_id, campaign_id, publisher_id, ad_unit) DO UPDATE SET "
    "impressions = EXCLUDED.impressions, events = EXCLUDED.events, seq = EXCLUDED.seq";

constexpr std::string_view kPlacementColumns =
    "node_id, campaign_id, publisher_id, ad_unit, impressions, events, seq";

void AppendElement(std::string& array, int64_t v) {
  array += array.size() == 1 ? "" : ",";
  array += std::to_string(v);
}

Result<std::vector<PlacementCountersRow>> PlacementRows(const PgResult& r) {
  std::vector<PlacementCountersRow> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    PlacementCountersRow row{.node_id = std::string(r.Text(i, 0))};
    ADS_ASSIGN_OR_RETURN(row.campaign_id, r.Int(i, 1));
    ADS_ASSIGN_OR_RETURN(row.publisher_id, r.Int(i, 2));
    ADS_ASSIGN_OR_RETURN(const int64_t ad_unit, r.Int(i, 3));
    row.ad_unit = static_cast<uint64_t>(ad_unit);
    ADS_ASSIGN_OR_RETURN(row.impressions, r.Int(i, 4));
    ADS_ASSIGN_OR_RETURN(row.events, r.Int(i, 5));
    ADS_ASSIGN_OR_RETURN(row.seq, r.Int(i, 6));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PostgresPlacementCounters>> PostgresPlacementCounters::Open(
    const std::string& url, std::string node_id) {
  if (node_id.empty()) return InvalidArgumentError("placement counters need a node id");
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresPlacementCounters>(
      new PostgresPlacementCounters(std::move(conn), std::move(node_id)));
}

PostgresPlacementCounters::PostgresPlacementCounters(std::unique_ptr<PgConnection> conn,
                                                     std::string node_id)
    : node_id_(std::move(node_id)), conn_(std::move(conn)) {}

PostgresPlacementCounters::~PostgresPlacementCounters() = default;

Status PostgresPlacementCounters::SaveOwn(std::span<const PlacementCountersRow> rows) {
  if (rows.empty()) return OkStatus();
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  for (size_t begin = 0; begin < rows.size(); begin += kPlacementRowsPerStatement) {
    std::string campaigns = "{", publishers = "{", units = "{", impressions = "{", events = "{";
    for (size_t i = begin; i < std::min(rows.size(), begin + kPlacementRowsPerStatement); ++i) {
      AppendElement(campaigns, rows[i].campaign_id);
      AppendElement(publishers, rows[i].publisher_id);
      AppendElement(units, static_cast<int64_t>(rows[i].ad_unit));  // a bigint's bits
      AppendElement(impressions, rows[i].impressions);
      AppendElement(events, rows[i].events);
    }
    for (std::string* array : {&campaigns, &publishers, &units, &impressions, &events}) {
      *array += "}";
    }
    ADS_RETURN_IF_ERROR(conn_
                            ->Exec(kSaveSql, {Param(std::string_view(node_id_)), campaigns,
                                              publishers, units, impressions, events})
                            .status());
  }
  return txn.Commit();
}

Result<std::vector<PlacementCountersRow>> PostgresPlacementCounters::LoadOwn() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec("SELECT " + std::string(kPlacementColumns) +
                                       " FROM node_placement_counters WHERE node_id = $1",
                                   {Param(std::string_view(node_id_))}));
  return PlacementRows(r);
}

Result<std::vector<PlacementCountersRow>> PostgresPlacementCounters::LoadOthersAfter(
    int64_t after_seq, size_t limit) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec("SELECT " + std::string(kPlacementColumns) +
                                  " FROM node_placement_counters WHERE seq > $1 AND node_id <> $2 "
                                  "ORDER BY seq LIMIT $3",
                              {Param(after_seq), Param(std::string_view(node_id_)),
                               Param(static_cast<int64_t>(limit))}));
  return PlacementRows(r);
}

}  // namespace adserver::store
