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

// Upserts the node's ($1) publisher rows given as arrays ($2..$5), each with a new seq.
constexpr std::string_view kSavePublishersSql =
    "INSERT INTO node_placement_counters (node_id, campaign_id, publisher_id, impressions, "
    "events, seq) SELECT $1, c, p, i, e, nextval('node_placement_seq') FROM "
    "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS t (c, p, i, e) "
    "ON CONFLICT (node_id, campaign_id, publisher_id) DO UPDATE SET "
    "impressions = EXCLUDED.impressions, events = EXCLUDED.events, seq = EXCLUDED.seq";
// The same for its ad units' rows ($2..$6; migration 20), seq from the same sequence.
constexpr std::string_view kSaveUnitsSql =
    "INSERT INTO node_unit_counters (node_id, campaign_id, publisher_id, ad_unit, "
    "impressions, events, seq) SELECT $1, c, p, u, i, e, nextval('node_placement_seq') FROM "
    "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) "
    "AS t (c, p, u, i, e) "
    "ON CONFLICT (node_id, campaign_id, publisher_id, ad_unit) DO UPDATE SET "
    "impressions = EXCLUDED.impressions, events = EXCLUDED.events, seq = EXCLUDED.seq";

// Both tables' rows as one: a publisher row's ad unit is 0.
constexpr std::string_view kRowsSql =
    "SELECT node_id, campaign_id, publisher_id, 0::bigint AS ad_unit, impressions, events, seq "
    "FROM node_placement_counters WHERE {where} UNION ALL "
    "SELECT node_id, campaign_id, publisher_id, ad_unit, impressions, events, seq "
    "FROM node_unit_counters WHERE {where}";

// kRowsSql with both tables filtered by `where`.
std::string RowsWhere(std::string_view where) {
  std::string sql(kRowsSql);
  for (size_t at = sql.find("{where}"); at != std::string::npos; at = sql.find("{where}", at)) {
    sql.replace(at, 7, where);
    at += where.size();
  }
  return sql;
}

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
  std::vector<PlacementCountersRow> publishers, units;
  for (const PlacementCountersRow& row : rows)
    (row.ad_unit == 0 ? publishers : units).push_back(row);
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  ADS_RETURN_IF_ERROR(SaveRows(publishers, /*units=*/false));
  ADS_RETURN_IF_ERROR(SaveRows(units, /*units=*/true));
  return txn.Commit();
}

Status PostgresPlacementCounters::SaveRows(std::span<const PlacementCountersRow> rows, bool units) {
  for (size_t begin = 0; begin < rows.size(); begin += kPlacementRowsPerStatement) {
    std::string campaigns = "{", publishers = "{", ad_units = "{", impressions = "{", events = "{";
    for (size_t i = begin; i < std::min(rows.size(), begin + kPlacementRowsPerStatement); ++i) {
      AppendElement(campaigns, rows[i].campaign_id);
      AppendElement(publishers, rows[i].publisher_id);
      AppendElement(ad_units, static_cast<int64_t>(rows[i].ad_unit));  // a bigint's bits
      AppendElement(impressions, rows[i].impressions);
      AppendElement(events, rows[i].events);
    }
    for (std::string* array : {&campaigns, &publishers, &ad_units, &impressions, &events}) {
      *array += "}";
    }
    const auto node = Param(std::string_view(node_id_));
    ADS_RETURN_IF_ERROR((units ? conn_->Exec(kSaveUnitsSql, {node, campaigns, publishers, ad_units,
                                                             impressions, events})
                               : conn_->Exec(kSavePublishersSql,
                                             {node, campaigns, publishers, impressions, events}))
                            .status());
  }
  return OkStatus();
}

Result<std::vector<PlacementCountersRow>> PostgresPlacementCounters::LoadOwn() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec(RowsWhere("node_id = $1"), {Param(std::string_view(node_id_))}));
  return PlacementRows(r);
}

Result<std::vector<PlacementCountersRow>> PostgresPlacementCounters::LoadOthersAfter(
    int64_t after_seq, size_t limit) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec(RowsWhere("seq > $1 AND node_id <> $2") + " ORDER BY seq LIMIT $3",
                              {Param(after_seq), Param(std::string_view(node_id_)),
                               Param(static_cast<int64_t>(limit))}));
  return PlacementRows(r);
}

}  // namespace adserver::store
