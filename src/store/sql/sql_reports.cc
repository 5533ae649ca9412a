#include "store/sql/sql_reports.h"

#include <string>
#include <utility>

#include "common/check.h"
#include "store/sql/detail/transact.h"

namespace adserver::store {

int64_t RollupTableSeconds(RollupTable table) {
  switch (table) {
    case RollupTable::kMinute:
      return 60;
    case RollupTable::kHour:
      return 3600;
    case RollupTable::kDay:
      break;
  }
  return 86400;
}

namespace sql {
namespace {

const char* TableName(RollupTable table) {
  switch (table) {
    case RollupTable::kMinute:
      return "rollups_minute";
    case RollupTable::kHour:
      return "rollups_hour";
    case RollupTable::kDay:
      break;
  }
  return "rollups_day";
}

std::string BucketExpression(const RollupQuery& q) {
  if (q.group_seconds == 0) return "0";
  if (q.group_seconds == RollupTableSeconds(q.table)) return "r.bucket";
  const std::string n = std::to_string(q.group_seconds);
  return "(r.bucket / " + n + ") * " + n;
}

// One statement per query shape (SQLite's statement cache keeps each): filters that are absent
// are left out rather than disabled by NULL parameters, so the engine can use the
// (publisher_id, bucket) and (campaign_id, bucket) indexes. Parameters: ?1 from, ?2 to,
// ?3 publisher, ?4 campaign, ?5 community, ?6 adUnitId, ?7 limit.
std::string QuerySql(const RollupQuery& q) {
  std::string select = "SELECT " + BucketExpression(q) + ", r.publisher_id";
  std::string group = " GROUP BY 1, 2";
  auto column = [&](bool split, const char* expression, const char* otherwise, int index) {
    select += ", ";
    select += split ? expression : otherwise;
    if (split) group += ", " + std::to_string(index);
  };
  column(q.by_ad_unit, "r.ad_unit_id", "''", 3);
  column(q.by_campaign, "r.campaign_id", "0", 4);
  column(q.by_ad, "r.ad_id", "0", 5);
  column(q.by_community, "COALESCE(c.community_id, 0)", "0", 6);
  column(q.by_arm, "r.arm", "''", 7);
  select +=
      ", SUM(r.requests), SUM(r.fills), SUM(r.no_fills), SUM(r.clicks), SUM(r.conversions), "
      "SUM(r.impression_spend + r.click_spend + r.conversion_spend), SUM(r.invalid_clicks), "
      "SUM(r.over_budget_conversions) FROM ";
  select += TableName(q.table);
  select += " r";
  if (q.by_community) select += " LEFT JOIN campaigns c ON c.id = r.campaign_id";
  select += " WHERE r.bucket >= ?1 AND r.bucket < ?2";
  if (q.publisher_id) select += " AND r.publisher_id = ?3";
  if (q.campaign_id) select += " AND r.campaign_id = ?4";
  if (q.community_id) {
    select += " AND r.campaign_id IN (SELECT id FROM campaigns WHERE community_id = ?5)";
  }
  if (q.ad_unit_id) select += " AND r.ad_unit_id = ?6";
  return select + group + " ORDER BY 1, 2 LIMIT ?7";
}

RollupGroup ReadGroup(const Statement& s) {
  RollupGroup g;
  g.bucket = s.Int(0);
  g.publisher_id = s.Int(1);
  g.ad_unit_id = s.Text(2);
  g.campaign_id = s.Int(3);
  g.ad_id = s.Int(4);
  g.community_id = s.Int(5);
  g.arm = s.Text(6);
  g.requests = s.Int(7);
  g.fills = s.Int(8);
  g.no_fills = s.Int(9);
  g.clicks = s.Int(10);
  g.conversions = s.Int(11);
  g.spend = s.Int(12);
  g.invalid_clicks = s.Int(13);
  g.over_budget_conversions = s.Int(14);
  return g;
}

}  // namespace

Result<std::vector<RollupGroup>> SqlReports::QueryRollups(const RollupQuery& q) {
  ADS_CHECK(q.group_seconds >= 0 && q.group_seconds % RollupTableSeconds(q.table) == 0)
      << "group_seconds must be a multiple of the table's bucket";
  // One read transaction: the rows are one consistent snapshot while the flushers write.
  return Transact<std::vector<RollupGroup>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<RollupGroup>> {
        ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(QuerySql(q)));
        s.Bind(1, q.from).Bind(2, q.to).Bind(3, q.publisher_id).Bind(4, q.campaign_id);
        s.Bind(5, q.community_id).Bind(7, q.limit);
        if (q.ad_unit_id) s.Bind(6, *q.ad_unit_id);
        std::vector<RollupGroup> rows;
        for (;;) {
          ADS_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) return rows;
          rows.push_back(ReadGroup(s));
        }
      });
}

}  // namespace sql
}  // namespace adserver::store
