#include "store/sql/sql_events.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "store/sql/detail/transact.h"

namespace adserver::store::sql {
namespace {

constexpr const char* kRollupTables[] = {"rollups_minute", "rollups_hour", "rollups_day"};
constexpr int64_t kBucketSeconds[] = {60, 3600, 86400};

int64_t FloorTo(int64_t t, int64_t unit) {
  return t >= 0 ? t - t % unit : t - ((t % unit) + unit) % unit;
}

// `(SELECT value ...)`: the id of the last click added to the rollups (RollUpClicks).
std::string MarkValue(const Connection& c) {
  return std::string("(SELECT value FROM ") + ClickRollupMarkTable(c.dialect()) +
         " WHERE name = '" + kClickRollupMark + "')";
}

// Runs `read(s)` (returning R) for every row of `s`.
template <typename R, typename Read>
Result<std::vector<R>> ReadRows(Statement& s, Read read) {
  std::vector<R> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(read(s));
  }
}

// ---- Rollups.

// Columns are qualified: PostgreSQL rejects a name that both the table and `excluded` have.
// Rows per rollup upsert statement: one round trip per 64 rows to PostgreSQL (1,216 parameters,
// far below SQLite's and PostgreSQL's limits).
constexpr size_t kRollupRowsPerStatement = 64;
constexpr int kRollupColumns = 20;

// Upserts `rows` rows (parameters ?1..?19 for the first, ?20.. for the second, ...), adding
// their counts to the rows already there.
std::string UpsertSql(const std::string& t, size_t rows) {
  std::string sql = "INSERT INTO " + t +
                    " (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm, requests, fills, "
                    "no_fills, errors, impression_spend, clicks, duplicate_clicks, expired_clicks, "
                    "click_spend, conversions, conversion_spend, invalid_clicks, invalid_fills, "
                    "over_budget_conversions) VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (int col = 1; col <= kRollupColumns; ++col) {
      if (col > 1) sql += ", ";
      sql += '?';
      sql += std::to_string(r * kRollupColumns + static_cast<size_t>(col));
    }
    sql += ")";
  }
  sql += " ON CONFLICT (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm) DO UPDATE SET ";
  const char* columns[] = {"requests",         "fills",
                           "no_fills",         "errors",
                           "impression_spend", "clicks",
                           "duplicate_clicks", "expired_clicks",
                           "invalid_clicks",   "invalid_fills",
                           "click_spend",      "conversions",
                           "conversion_spend", "over_budget_conversions"};
  for (const char* column : columns) {
    if (column != columns[0]) sql += ", ";
    sql += std::string(column) + " = " + t + "." + column + " + excluded." + column;
  }
  return sql;
}

void AddCounts(RollupRow& into, const RollupRow& from) {
  into.requests += from.requests;
  into.fills += from.fills;
  into.invalid_fills += from.invalid_fills;
  into.no_fills += from.no_fills;
  into.errors += from.errors;
  into.impression_spend += from.impression_spend;
  into.clicks += from.clicks;
  into.duplicate_clicks += from.duplicate_clicks;
  into.expired_clicks += from.expired_clicks;
  into.invalid_clicks += from.invalid_clicks;
  into.click_spend += from.click_spend;
  into.conversions += from.conversions;
  into.conversion_spend += from.conversion_spend;
  into.over_budget_conversions += from.over_budget_conversions;
}

using RollupKey = std::tuple<int64_t, Id, std::string, Id, Id, std::string>;

// `rows` summed per bucket of `bucket_seconds` and dimensions, in key order.
std::map<RollupKey, RollupRow> MergeRollups(std::span<const RollupRow> rows,
                                            int64_t bucket_seconds) {
  std::map<RollupKey, RollupRow> merged;
  for (const RollupRow& row : rows) {
    const int64_t bucket = FloorTo(row.bucket, bucket_seconds);
    auto [it, added] = merged.try_emplace(
        RollupKey{bucket, row.publisher_id, row.ad_unit_id, row.campaign_id, row.ad_id, row.arm});
    if (added) {
      it->second = RollupRow{.bucket = bucket,
                             .publisher_id = row.publisher_id,
                             .ad_unit_id = row.ad_unit_id,
                             .campaign_id = row.campaign_id,
                             .ad_id = row.ad_id,
                             .arm = row.arm};
    }
    AddCounts(it->second, row);
  }
  return merged;
}

// In key order, kRollupRowsPerStatement rows per statement (the keys of one statement are
// distinct: an upsert may not change a row twice).
Status UpsertRollupTable(Connection& c, const std::string& table,
                         const std::map<RollupKey, RollupRow>& rows) {
  auto it = rows.begin();
  while (it != rows.end()) {
    const size_t n = std::min<size_t>(kRollupRowsPerStatement,
                                      static_cast<size_t>(std::distance(it, rows.end())));
    ADS_ASSIGN_OR_RETURN(Statement up, c.Prepare(UpsertSql(table, n)));
    for (size_t r = 0; r < n; ++r, ++it) {
      const RollupRow& row = it->second;
      const int base = static_cast<int>(r) * kRollupColumns;
      up.Bind(base + 1, row.bucket)
          .Bind(base + 2, row.publisher_id)
          .Bind(base + 3, row.ad_unit_id)
          .Bind(base + 4, row.campaign_id)
          .Bind(base + 5, row.ad_id)
          .Bind(base + 6, row.arm)
          .Bind(base + 7, row.requests)
          .Bind(base + 8, row.fills)
          .Bind(base + 9, row.no_fills)
          .Bind(base + 10, row.errors)
          .Bind(base + 11, row.impression_spend)
          .Bind(base + 12, row.clicks)
          .Bind(base + 13, row.duplicate_clicks)
          .Bind(base + 14, row.expired_clicks)
          .Bind(base + 15, row.click_spend)
          .Bind(base + 16, row.conversions)
          .Bind(base + 17, row.conversion_spend)
          .Bind(base + 18, row.invalid_clicks)
          .Bind(base + 19, row.invalid_fills)
          .Bind(base + 20, row.over_budget_conversions);
    }
    ADS_RETURN_IF_ERROR(up.Run());
  }
  return OkStatus();
}

// Adds `rows` to the minute, hour and day rollups and their invalid fills to the daily counts
// per reason. Each table's rows are summed first and upserted in key order, so concurrent
// writers (other nodes) take the rows' locks in the same order and never deadlock; they are
// increments, so every writer's counts add up.
Status AddToRollups(Connection& c, std::span<const RollupRow> rows) {
  for (size_t t = 0; t < std::size(kRollupTables); ++t) {
    ADS_RETURN_IF_ERROR(
        UpsertRollupTable(c, kRollupTables[t], MergeRollups(rows, kBucketSeconds[t])));
  }
  // Keyed as the table's primary key: (campaign, day, publisher, reason).
  std::map<std::tuple<Id, int64_t, Id, std::string>, int64_t> by_reason;
  for (const RollupRow& row : rows) {
    for (const auto& [reason, count] : row.invalid_fills_by_reason) {
      by_reason[{row.campaign_id, FloorTo(row.bucket, 86400), row.publisher_id, reason}] += count;
    }
  }
  if (by_reason.empty()) return OkStatus();
  ADS_ASSIGN_OR_RETURN(
      Statement up,
      c.Prepare("INSERT INTO invalid_impressions_day (bucket, publisher_id, campaign_id, reason, "
                "impressions) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (campaign_id, bucket, "
                "publisher_id, reason) DO UPDATE SET impressions = "
                "invalid_impressions_day.impressions + excluded.impressions"));
  for (const auto& [key, count] : by_reason) {
    up.Reset();
    up.Bind(1, std::get<1>(key))
        .Bind(2, std::get<2>(key))
        .Bind(3, std::get<0>(key))
        .Bind(4, std::get<3>(key))
        .Bind(5, count);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  return OkStatus();
}

// ---- Clicks.

ClickStatus StatusFromName(std::string_view name) {
  if (name == "duplicate") return ClickStatus::kDuplicate;
  if (name == "expired") return ClickStatus::kExpired;
  if (name == "invalid") return ClickStatus::kInvalid;
  return ClickStatus::kBilled;
}

constexpr const char* kClickColumns =
    "id, decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, served_at, clicked_at, "
    "price_micros, person, earlier_variant, status, reason, ip";

ClickRecord ReadClick(const Statement& sel) {
  ClickRecord r;
  r.id = sel.Int(0);
  sel.Blob(1, r.decision_id.data(), r.decision_id.size());
  r.publisher_id = sel.Int(2);
  r.ad_unit_id = sel.Text(3);
  r.campaign_id = sel.Int(4);
  r.ad_id = sel.Int(5);
  r.arm = sel.Text(6);
  r.served_at = sel.Int(7);
  r.clicked_at = sel.Int(8);
  r.price = sel.Int(9);
  r.person = static_cast<uint64_t>(sel.Int(10));
  r.earlier_variant = sel.Int(11) != 0;
  r.status = StatusFromName(sel.Text(12));
  r.reason = sel.Text(13);
  r.ip = sel.Text(14);
  return r;
}

constexpr const char* kInsertClick =
    "INSERT INTO clicks (decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
    "served_at, clicked_at, price_micros, person, earlier_variant, status, reason, ip, node_id) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

// Binds the billing node (issue 37 item 3) at `i`: NULL without one.
void BindNode(Statement& s, int i, std::string_view node_id) {
  if (node_id.empty()) {
    s.BindNull(i);
  } else {
    s.Bind(i, node_id);
  }
}

// Runs an insert of `r` (kInsertClick ... RETURNING id); the new id, or nullopt when the insert
// did nothing (ON CONFLICT DO NOTHING). A click billed while buffered has no node: its node
// counted it when it buffered it.
Result<std::optional<Id>> InsertClick(Statement& ins, const ClickRecord& r,
                                      std::string_view node_id) {
  ins.Reset();
  BindNode(ins, 15, r.buffered ? std::string_view() : node_id);
  ins.BindBlob(1, r.decision_id.data(), r.decision_id.size())
      .Bind(2, r.publisher_id)
      .Bind(3, r.ad_unit_id)
      .Bind(4, r.campaign_id)
      .Bind(5, r.ad_id)
      .Bind(6, r.arm)
      .Bind(7, r.served_at)
      .Bind(8, r.clicked_at)
      .Bind(9, r.price)
      .Bind(10, static_cast<int64_t>(r.person))
      .Bind(11, int64_t{r.earlier_variant ? 1 : 0})
      .Bind(12, ClickStatusName(r.status))
      .Bind(13, r.reason)
      .Bind(14, r.ip);
  ADS_ASSIGN_OR_RETURN(bool row, ins.Step());
  if (!row) return std::optional<Id>();
  return std::optional<Id>(ins.Int(0));
}

Status InsertClickRows(Connection& c, std::span<ClickRecord> rows, std::string_view node_id) {
  ADS_RETURN_IF_ERROR(WriterLock(c, WriterLockKey::kClicks));
  // A billed candidate is inserted as billed unless its decision already has a billed row (the
  // partial unique index `clicks_billed_once` answers that in the same probe as the insert: no
  // separate lookup); then it is stored as a duplicate.
  ADS_ASSIGN_OR_RETURN(Statement billed_once,
                       c.Prepare(std::string(kInsertClick) +
                                 " ON CONFLICT (decision_id) WHERE status = 'billed' DO NOTHING "
                                 "RETURNING id"));
  ADS_ASSIGN_OR_RETURN(Statement plain, c.Prepare(std::string(kInsertClick) + " RETURNING id"));
  // An invalid click of a decision already billed is a duplicate (that check comes first);
  // rare enough for a lookup of its own.
  ADS_ASSIGN_OR_RETURN(
      Statement billed,
      c.Prepare("SELECT 1 FROM clicks WHERE decision_id = ?1 AND status = 'billed'"));
  for (ClickRecord& r : rows) {
    if (r.status == ClickStatus::kBilled) {
      ADS_ASSIGN_OR_RETURN(std::optional<Id> id, InsertClick(billed_once, r, node_id));
      if (id) {
        r.id = *id;
        continue;
      }
      r.status = ClickStatus::kDuplicate;
    } else if (r.status == ClickStatus::kInvalid) {
      billed.Reset();
      billed.BindBlob(1, r.decision_id.data(), r.decision_id.size());
      ADS_ASSIGN_OR_RETURN(bool already_billed, billed.Step());
      if (already_billed) r.status = ClickStatus::kDuplicate;
    }
    if (r.status != ClickStatus::kInvalid) r.reason.clear();
    r.price = 0;
    ADS_ASSIGN_OR_RETURN(std::optional<Id> id, InsertClick(plain, r, node_id));
    if (!id) return InternalError("a click row was not inserted");
    r.id = *id;
  }
  return OkStatus();
}

// The clicks after the mark, summed into minute rollups and daily invalid counts per reason.
struct ClickSlice {
  int64_t rolled = 0;
  int64_t last_id = 0;
  std::map<RollupKey, RollupRow> rollups;
  // Invalid clicks per (day, publisher, campaign, reason).
  std::map<std::tuple<int64_t, Id, Id, std::string>, int64_t> invalid_by_reason;
};

void AddClick(ClickSlice& slice, const Statement& sel) {
  ++slice.rolled;
  slice.last_id = sel.Int(0);
  const int64_t minute = FloorTo(sel.Int(1), 60);
  auto [it, added] = slice.rollups.try_emplace(
      RollupKey{minute, sel.Int(2), sel.Text(3), sel.Int(4), sel.Int(5), sel.Text(6)});
  RollupRow& rollup = it->second;
  if (added) {
    rollup.bucket = minute;
    rollup.publisher_id = sel.Int(2);
    rollup.ad_unit_id = sel.Text(3);
    rollup.campaign_id = sel.Int(4);
    rollup.ad_id = sel.Int(5);
    rollup.arm = sel.Text(6);
  }
  switch (StatusFromName(sel.Text(7))) {
    case ClickStatus::kBilled:
      rollup.clicks += 1;
      rollup.click_spend += sel.Int(8);
      break;
    case ClickStatus::kDuplicate:
      rollup.duplicate_clicks += 1;
      break;
    case ClickStatus::kExpired:
      rollup.expired_clicks += 1;
      break;
    case ClickStatus::kInvalid:
      rollup.invalid_clicks += 1;
      slice.invalid_by_reason[{FloorTo(minute, 86400), sel.Int(2), sel.Int(4), sel.Text(9)}] += 1;
      break;
  }
}

Result<ClickSlice> ReadClicksAfter(Connection& c, int64_t mark, int64_t max_rows) {
  ClickSlice slice;
  slice.last_id = mark;
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      c.Prepare("SELECT id, clicked_at, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
                "status, price_micros, reason FROM clicks WHERE id > ?1 ORDER BY id LIMIT ?2"));
  sel.Bind(1, mark).Bind(2, max_rows);
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) return slice;
    AddClick(slice, sel);
  }
}

Status AddInvalidClicks(Connection& c, const ClickSlice& slice) {
  if (slice.invalid_by_reason.empty()) return OkStatus();
  ADS_ASSIGN_OR_RETURN(
      Statement up,
      c.Prepare("INSERT INTO invalid_clicks_day (bucket, publisher_id, campaign_id, reason, "
                "clicks) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (campaign_id, bucket, "
                "publisher_id, reason) DO UPDATE SET clicks = invalid_clicks_day.clicks + "
                "excluded.clicks"));
  for (const auto& [key, count] : slice.invalid_by_reason) {
    up.Reset();
    up.Bind(1, std::get<0>(key))
        .Bind(2, std::get<1>(key))
        .Bind(3, std::get<2>(key))
        .Bind(4, std::get<3>(key))
        .Bind(5, count);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  return OkStatus();
}

Result<int64_t> ReadMark(Connection& c) {
  ADS_ASSIGN_OR_RETURN(Statement sel, c.Prepare("SELECT " + MarkValue(c)));
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row || sel.IsNull(0)) {
    return InternalError(std::string("the click rollup mark (") + kClickRollupMark +
                         ") is missing");
  }
  return sel.Int(0);
}

Status SetMark(Connection& c, int64_t mark) {
  ADS_ASSIGN_OR_RETURN(Statement up,
                       c.Prepare(std::string("UPDATE ") + ClickRollupMarkTable(c.dialect()) +
                                 " SET value = ?1 WHERE name = '" + kClickRollupMark + "'"));
  return up.Bind(1, mark).Run();
}

}  // namespace

const char* ClickRollupMarkTable(Dialect dialect) {
  return dialect == Dialect::kSqlite ? "events_meta" : "events_marks";
}

Result<std::vector<uint8_t>> SqlEvents::Secret(std::string_view name,
                                               std::span<const uint8_t> candidate) {
  return Transact<std::vector<uint8_t>>(
      runner_, true, [&](Connection& c) -> Result<std::vector<uint8_t>> {
        {
          ADS_ASSIGN_OR_RETURN(Statement ins,
                               c.Prepare("INSERT INTO events_meta (name, value) VALUES (?1, ?2) "
                                         "ON CONFLICT (name) DO NOTHING"));
          ADS_RETURN_IF_ERROR(
              ins.Bind(1, name).BindBlob(2, candidate.data(), candidate.size()).Run());
        }
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare("SELECT value, length(value) FROM events_meta WHERE name = ?1"));
        sel.Bind(1, name);
        ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
        if (!row) return InternalError("events_meta." + std::string(name) + " is missing");
        std::vector<uint8_t> value(static_cast<size_t>(std::max<int64_t>(sel.Int(1), 0)));
        if (!value.empty() && !sel.Blob(0, value.data(), value.size())) {
          return InternalError("events_meta." + std::string(name) + " is not a blob");
        }
        return value;
      });
}

Status SqlEvents::InsertClicks(std::span<ClickRecord> rows) {
  return runner_.Write(0, [&](Connection& c) { return InsertClickRows(c, rows, node_id_); });
}

Result<int64_t> SqlEvents::RollUpClicks(int64_t max_rows) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    // One roller at a time: the next one reads the mark this one leaves.
    ADS_RETURN_IF_ERROR(WriterLock(c, WriterLockKey::kRollUp));
    ADS_ASSIGN_OR_RETURN(int64_t mark, ReadMark(c));
    ADS_ASSIGN_OR_RETURN(ClickSlice slice, ReadClicksAfter(c, mark, max_rows));
    if (slice.rolled == 0) return int64_t{0};
    std::vector<RollupRow> rows;
    rows.reserve(slice.rollups.size());
    for (auto& [key, row] : slice.rollups) rows.push_back(std::move(row));
    ADS_RETURN_IF_ERROR(AddToRollups(c, rows));
    ADS_RETURN_IF_ERROR(AddInvalidClicks(c, slice));
    ADS_RETURN_IF_ERROR(SetMark(c, slice.last_id));
    return slice.rolled;
  });
}

Status SqlEvents::AddRollups(std::span<const RollupRow> rows) {
  return runner_.Write(0, [&](Connection& c) { return AddToRollups(c, rows); });
}

Result<std::vector<ClickRecord>> SqlEvents::ListClicks(const EventQuery& q) {
  return Transact<std::vector<ClickRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<ClickRecord>> {
        // NULL parameters disable their filter; one statement for every combination.
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + kClickColumns +
                      " FROM clicks WHERE (CAST(?1 AS BIGINT) IS NULL OR campaign_id = ?1) "
                      "AND (CAST(?2 AS BIGINT) IS NULL OR publisher_id = ?2) "
                      "AND (CAST(?3 AS BIGINT) IS NULL OR clicked_at >= ?3) "
                      "AND (CAST(?4 AS BIGINT) IS NULL OR clicked_at < ?4) "
                      "AND (CAST(?5 AS BIGINT) IS NULL OR id < ?5) "
                      "AND (CAST(?7 AS BIGINT) IS NULL OR campaign_id IN "
                      "(SELECT id FROM campaigns WHERE community_id = ?7)) "
                      "ORDER BY id DESC LIMIT ?6"));
        sel.Bind(1, q.campaign_id)
            .Bind(2, q.publisher_id)
            .Bind(3, q.from)
            .Bind(4, q.to)
            .Bind(5, q.before_id)
            .Bind(6, int64_t{q.limit})
            .Bind(7, q.community_id);
        return ReadRows<ClickRecord>(sel, ReadClick);
      });
}

Result<std::optional<int64_t>> SqlEvents::BilledClickAt(const DecisionIdBytes& decision_id) {
  return Transact<std::optional<int64_t>>(
      runner_, false, [&](Connection& c) -> Result<std::optional<int64_t>> {
        ADS_ASSIGN_OR_RETURN(Statement sel,
                             c.Prepare("SELECT clicked_at FROM clicks WHERE decision_id = ?1 AND "
                                       "status = 'billed'"));
        sel.BindBlob(1, decision_id.data(), decision_id.size());
        ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
        if (!row) return std::optional<int64_t>();
        return std::optional<int64_t>(sel.Int(0));
      });
}

Result<std::optional<ClickRecord>> SqlEvents::LastBilledClick(Id campaign_id, uint64_t person,
                                                              int64_t served_from,
                                                              int64_t clicked_by) {
  return Transact<std::optional<ClickRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::optional<ClickRecord>> {
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + kClickColumns +
                      " FROM clicks WHERE campaign_id = ?1 AND person = ?2 AND status = "
                      "'billed' AND clicked_at <= ?3 AND served_at >= ?4 "
                      "ORDER BY clicked_at DESC LIMIT 1"));
        sel.Bind(1, campaign_id)
            .Bind(2, static_cast<int64_t>(person))
            .Bind(3, clicked_by)
            .Bind(4, served_from);
        ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
        if (!row) return std::optional<ClickRecord>();
        return std::optional<ClickRecord>(ReadClick(sel));
      });
}

namespace {

// ---- Conversions.

constexpr const char* kConversionColumns =
    "id, campaign_id, ad_id, publisher_id, ad_unit_id, arm, decision_id, wallet, person, "
    "chain_id, tx_hash, log_index, block_number, block_hash, block_time, touch, exposed_at, "
    "price_micros, confirmed, status, recorded_at, reverted_at, COALESCE(reverted_seq, 0)";

ConversionRecord ReadConversion(const Statement& s) {
  ConversionRecord r;
  r.id = s.Int(0);
  r.campaign_id = s.Int(1);
  r.ad_id = s.Int(2);
  r.publisher_id = s.Int(3);
  r.ad_unit_id = s.Text(4);
  r.arm = s.Text(5);
  s.Blob(6, r.decision_id.data(), r.decision_id.size());
  s.Blob(7, r.wallet.bytes.data(), r.wallet.bytes.size());
  r.person = static_cast<uint64_t>(s.Int(8));
  r.chain_id = s.Int(9);
  s.Blob(10, r.tx_hash.data(), r.tx_hash.size());
  r.log_index = s.Int(11);
  r.block_number = s.Int(12);
  s.Blob(13, r.block_hash.data(), r.block_hash.size());
  r.block_time = s.Int(14);
  r.click_touch = s.Text(15) == "click";
  r.touched_at = s.Int(16);
  r.price = s.Int(17);
  r.confirmed = s.Int(18) != 0;
  const std::string status = s.Text(19);
  r.status = status == "reorged"       ? ConversionStatus::kReorged
             : status == "over_budget" ? ConversionStatus::kOverBudget
                                       : ConversionStatus::kBilled;
  r.recorded_at = s.Int(20);
  r.reverted_at = s.OptInt(21);
  r.revert_seq = s.Int(22);
  return r;
}

// What conversion `r` adds to its rollups (sign 1) or takes back (-1): a billed one its count
// and price, one over budget its count of those (issue 37).
RollupRow ConversionRollup(const ConversionRecord& r, int sign) {
  const bool billed = r.status != ConversionStatus::kOverBudget;
  return RollupRow{.bucket = r.block_time,
                   .publisher_id = r.publisher_id,
                   .ad_unit_id = r.ad_unit_id,
                   .campaign_id = r.campaign_id,
                   .ad_id = r.ad_id,
                   .arm = r.arm,
                   .conversions = billed ? sign : 0,
                   .conversion_spend = billed ? sign * r.price : 0,
                   .over_budget_conversions = billed ? 0 : sign};
}

// The statements of InsertConversions, prepared once per call.
struct ConversionStatements {
  Statement counted;    // the transaction (log) already recorded for the campaign (billed or
                        // over budget)
  Statement converted;  // the person already converted on the campaign in the window
  Statement insert;
};

Result<ConversionStatements> PrepareConversionStatements(Connection& c) {
  ADS_ASSIGN_OR_RETURN(Statement counted,
                       c.Prepare("SELECT 1 FROM conversions WHERE chain_id = ?1 AND "
                                 "tx_hash = ?2 AND log_index = ?3 AND campaign_id = ?4 AND "
                                 "status IN ('billed', 'over_budget')"));
  ADS_ASSIGN_OR_RETURN(Statement converted,
                       c.Prepare("SELECT 1 FROM conversions WHERE campaign_id = ?1 AND "
                                 "person = ?2 AND status = 'billed' AND block_time > ?3"));
  ADS_ASSIGN_OR_RETURN(
      Statement insert,
      c.Prepare("INSERT INTO conversions (campaign_id, ad_id, publisher_id, ad_unit_id, arm, "
                "decision_id, wallet, person, chain_id, tx_hash, log_index, block_number, "
                "block_hash, block_time, touch, exposed_at, price_micros, confirmed, status, "
                "recorded_at, node_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                "?13, ?14, ?15, ?16, ?17, ?18, ?20, ?19, ?21) RETURNING id"));
  return ConversionStatements{std::move(counted), std::move(converted), std::move(insert)};
}

// Whether the once-per-transaction or once-per-person rule skips `candidate`.
Result<bool> AlreadyConverted(ConversionStatements& s, const ConversionCandidate& candidate) {
  const ConversionRecord& r = candidate.record;
  s.counted.Reset();
  s.counted.Bind(1, r.chain_id)
      .BindBlob(2, r.tx_hash.data(), r.tx_hash.size())
      .Bind(3, r.log_index)
      .Bind(4, r.campaign_id);
  ADS_ASSIGN_OR_RETURN(bool counted, s.counted.Step());
  if (counted || !candidate.count_once_per_person) return counted;
  s.converted.Reset();
  s.converted.Bind(1, r.campaign_id)
      .Bind(2, static_cast<int64_t>(r.person))
      .Bind(3, r.block_time - candidate.window_seconds);
  return s.converted.Step();
}

Result<Id> InsertConversion(Statement& ins, const ConversionRecord& r, int64_t now,
                            std::string_view node_id) {
  ins.Reset();
  BindNode(ins, 21, node_id);
  ins.Bind(1, r.campaign_id)
      .Bind(2, r.ad_id)
      .Bind(3, r.publisher_id)
      .Bind(4, r.ad_unit_id)
      .Bind(5, r.arm)
      .BindBlob(6, r.decision_id.data(), r.decision_id.size())
      .BindBlob(7, r.wallet.bytes.data(), r.wallet.bytes.size())
      .Bind(8, static_cast<int64_t>(r.person))
      .Bind(9, r.chain_id)
      .BindBlob(10, r.tx_hash.data(), r.tx_hash.size())
      .Bind(11, r.log_index)
      .Bind(12, r.block_number)
      .BindBlob(13, r.block_hash.data(), r.block_hash.size())
      .Bind(14, r.block_time)
      .Bind(15, std::string_view(r.click_touch ? "click" : "view"))
      .Bind(16, r.touched_at)
      .Bind(17, r.price)
      .Bind(18, int64_t{r.confirmed ? 1 : 0})
      .Bind(19, now)
      .Bind(20, ConversionStatusName(r.status));
  ADS_ASSIGN_OR_RETURN(bool row, ins.Step());
  if (!row) return InternalError("a conversion row was not inserted");
  return Id{ins.Int(0)};
}

// Runs `billing` (SqlEvents::ConversionBilling) over `rows` when there are any.
Status Bill(const SqlEvents::ConversionBilling& billing, Connection& c,
            std::span<const ConversionRecord> rows, int sign) {
  if (!billing || rows.empty()) return OkStatus();
  return billing(c, rows, sign);
}

Result<std::vector<ConversionRecord>> InsertConversionRows(
    Connection& c, std::span<const ConversionCandidate> candidates, int64_t now,
    const SqlEvents::ConversionBilling& billing, std::string_view node_id) {
  ADS_RETURN_IF_ERROR(WriterLock(c, WriterLockKey::kConversions));
  ADS_ASSIGN_OR_RETURN(ConversionStatements s, PrepareConversionStatements(c));
  std::vector<ConversionRecord> inserted;
  std::vector<ConversionRecord> billed;
  std::vector<RollupRow> rollups;
  // What is left of each budgeted campaign's total budget as this batch bills it.
  std::unordered_map<Id, Micros> budget_left;
  for (const ConversionCandidate& candidate : candidates) {
    ADS_ASSIGN_OR_RETURN(bool skip, AlreadyConverted(s, candidate));
    if (skip) continue;
    ConversionRecord stored = candidate.record;
    stored.status = ConversionStatus::kBilled;
    if (candidate.budget_left && stored.price > 0) {
      Micros& left =
          budget_left.try_emplace(stored.campaign_id, *candidate.budget_left).first->second;
      if (stored.price > left) {
        stored.status = ConversionStatus::kOverBudget;
      } else {
        left -= stored.price;
      }
    }
    ADS_ASSIGN_OR_RETURN(stored.id, InsertConversion(s.insert, stored, now, node_id));
    stored.recorded_at = now;
    rollups.push_back(ConversionRollup(stored, 1));
    if (stored.status == ConversionStatus::kBilled) billed.push_back(stored);
    inserted.push_back(std::move(stored));
  }
  ADS_RETURN_IF_ERROR(AddToRollups(c, rollups));
  ADS_RETURN_IF_ERROR(Bill(billing, c, billed, 1));
  return inserted;
}

// The highest revert_seq so far (0 when none).
Result<int64_t> MaxRevertSeq(Connection& c) {
  ADS_ASSIGN_OR_RETURN(Statement sel,
                       c.Prepare("SELECT COALESCE(MAX(reverted_seq), 0) FROM conversions "
                                 "WHERE reverted_seq IS NOT NULL"));
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return InternalError("no answer to MAX(reverted_seq)");
  return sel.Int(0);
}

// Marks `rows` reorged at `now` (those still billed) and takes them out of the rollups; returns
// the ones it marked.
Result<std::vector<ConversionRecord>> MarkReorged(Connection& c, std::vector<ConversionRecord> rows,
                                                  int64_t now,
                                                  const SqlEvents::ConversionBilling& billing,
                                                  std::string_view node_id) {
  ADS_ASSIGN_OR_RETURN(Statement up, c.Prepare("UPDATE conversions SET status = 'reorged', "
                                               "reverted_at = ?2, reverted_seq = ?3, "
                                               "reverted_by = ?4 WHERE id = ?1 AND status = "
                                               "'billed'"));
  // Numbered in commit order: the writer lock serialises every revert.
  ADS_ASSIGN_OR_RETURN(int64_t seq, MaxRevertSeq(c));
  std::vector<ConversionRecord> reverted;
  std::vector<RollupRow> rollups;
  for (ConversionRecord& r : rows) {
    up.Reset();
    up.Bind(1, r.id).Bind(2, now).Bind(3, seq + 1);
    BindNode(up, 4, node_id);
    ADS_RETURN_IF_ERROR(up.Run());
    if (c.Changes() == 0) continue;  // reverted meanwhile
    r.revert_seq = ++seq;
    rollups.push_back(ConversionRollup(r, -1));
    reverted.push_back(std::move(r));
  }
  ADS_RETURN_IF_ERROR(AddToRollups(c, rollups));
  ADS_RETURN_IF_ERROR(Bill(billing, c, reverted, -1));
  return reverted;
}

// Deletes `rows` (conversions recorded over budget: never billed) and takes them out of the
// rollups: their block was abandoned.
Status DeleteOverBudget(Connection& c, std::span<const ConversionRecord> rows) {
  if (rows.empty()) return OkStatus();
  ADS_ASSIGN_OR_RETURN(
      Statement del, c.Prepare("DELETE FROM conversions WHERE id = ?1 AND status = 'over_budget'"));
  std::vector<RollupRow> rollups;
  for (const ConversionRecord& r : rows) {
    del.Reset();
    ADS_RETURN_IF_ERROR(del.Bind(1, r.id).Run());
    if (c.Changes() != 0) rollups.push_back(ConversionRollup(r, -1));
  }
  return AddToRollups(c, rollups);
}

// Moves the conversions recorded over budget out of `rows` into the result.
std::vector<ConversionRecord> TakeOverBudget(std::vector<ConversionRecord>& rows) {
  std::vector<ConversionRecord> over;
  std::erase_if(rows, [&](ConversionRecord& r) {
    if (r.status != ConversionStatus::kOverBudget) return false;
    over.push_back(std::move(r));
    return true;
  });
  return over;
}

}  // namespace

Result<std::vector<ConversionRecord>> SqlEvents::InsertConversions(
    std::span<const ConversionCandidate> candidates, int64_t now) {
  return Transact<std::vector<ConversionRecord>>(runner_, true, [&](Connection& c) {
    return InsertConversionRows(c, candidates, now, billing_, node_id_);
  });
}

Result<std::vector<ConversionRecord>> SqlEvents::RevertConversions(
    int64_t chain_id, int64_t block_number, const std::array<uint8_t, 32>& block_hash,
    int64_t now) {
  return Transact<std::vector<ConversionRecord>>(
      runner_, true, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_RETURN_IF_ERROR(WriterLock(c, WriterLockKey::kConversions));
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + kConversionColumns +
                      " FROM conversions WHERE chain_id = ?1 AND block_number = ?2 AND "
                      "block_hash = ?3 AND status IN ('billed', 'over_budget') ORDER BY id"));
        sel.Bind(1, chain_id)
            .Bind(2, block_number)
            .BindBlob(3, block_hash.data(), block_hash.size());
        ADS_ASSIGN_OR_RETURN(std::vector<ConversionRecord> billed,
                             ReadRows<ConversionRecord>(sel, ReadConversion));
        // Conversions recorded over budget were never billed: gone with their block.
        ADS_RETURN_IF_ERROR(DeleteOverBudget(c, TakeOverBudget(billed)));
        return MarkReorged(c, std::move(billed), now, billing_, node_id_);
      });
}

Result<std::vector<ConversionRecord>> SqlEvents::RevertReplacedConversions(
    int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) {
  std::vector<ConversionRecord> candidates;
  if (blocks.empty()) return candidates;
  // Plain variables, not a structured binding: the lambda below captures them (clang 14, the
  // fuzz build's compiler, cannot capture structured bindings).
  const auto range = std::minmax_element(
      blocks.begin(), blocks.end(),
      [](const BlockAtHeight& a, const BlockAtHeight& b) { return a.number < b.number; });
  const int64_t low_number = range.first->number;
  const int64_t high_number = range.second->number;
  static constexpr std::array<uint8_t, 32> kImported{};
  // Usually empty (these heights are being applied for the first time): read before writing.
  ADS_ASSIGN_OR_RETURN(
      std::vector<ConversionRecord> billed,
      (Transact<std::vector<ConversionRecord>>(
          runner_, false, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
            ADS_ASSIGN_OR_RETURN(
                Statement sel,
                c.Prepare(std::string("SELECT ") + kConversionColumns +
                          " FROM conversions WHERE chain_id = ?1 AND block_number BETWEEN ?2 "
                          "AND ?3 AND status IN ('billed', 'over_budget') ORDER BY id"));
            sel.Bind(1, chain_id).Bind(2, low_number).Bind(3, high_number);
            return ReadRows<ConversionRecord>(sel, ReadConversion);
          })));
  for (ConversionRecord& r : billed) {
    if (r.block_hash == kImported) continue;
    auto block = std::find_if(blocks.begin(), blocks.end(),
                              [&](const BlockAtHeight& b) { return b.number == r.block_number; });
    if (block != blocks.end() && block->hash != r.block_hash) candidates.push_back(std::move(r));
  }
  // Conversions recorded over budget were never billed: gone with their block.
  std::vector<ConversionRecord> over_budget = TakeOverBudget(candidates);
  if (candidates.empty() && over_budget.empty()) return candidates;
  return Transact<std::vector<ConversionRecord>>(
      runner_, true, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_RETURN_IF_ERROR(WriterLock(c, WriterLockKey::kConversions));
        ADS_RETURN_IF_ERROR(DeleteOverBudget(c, over_budget));
        return MarkReorged(c, std::move(candidates), now, billing_, node_id_);
      });
}

Result<std::vector<ConversionRecord>> SqlEvents::ConversionsAfter(Id after_id, int limit) {
  return Transact<std::vector<ConversionRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_ASSIGN_OR_RETURN(Statement sel,
                             c.Prepare(std::string("SELECT ") + kConversionColumns +
                                       " FROM conversions WHERE id > ?1 ORDER BY id LIMIT ?2"));
        sel.Bind(1, after_id).Bind(2, int64_t{limit});
        return ReadRows<ConversionRecord>(sel, ReadConversion);
      });
}

Result<std::vector<ConversionRecord>> SqlEvents::ReorgedConversionsSince(int64_t since,
                                                                         Id after_id,
                                                                         Id up_to_id, int limit) {
  return Transact<std::vector<ConversionRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + kConversionColumns +
                      " FROM conversions WHERE status = 'reorged' AND reverted_at >= ?1 AND "
                      "id > ?2 AND id <= ?3 ORDER BY id LIMIT ?4"));
        sel.Bind(1, since).Bind(2, after_id).Bind(3, up_to_id).Bind(4, int64_t{limit});
        return ReadRows<ConversionRecord>(sel, ReadConversion);
      });
}

Result<std::vector<ConversionRecord>> SqlEvents::ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                            int limit) {
  return Transact<std::vector<ConversionRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_ASSIGN_OR_RETURN(Statement sel,
                             c.Prepare(std::string("SELECT ") + kConversionColumns +
                                       " FROM conversions WHERE reverted_seq IS NOT NULL AND "
                                       "reverted_seq > ?1 ORDER BY reverted_seq LIMIT ?2"));
        sel.Bind(1, after_seq).Bind(2, int64_t{limit});
        return ReadRows<ConversionRecord>(sel, ReadConversion);
      });
}

Result<int64_t> SqlEvents::LastRevertSeq() {
  return Transact<int64_t>(runner_, false, [&](Connection& c) { return MaxRevertSeq(c); });
}

Result<NodeBacklog> SqlEvents::NodeBacklogAfter(std::string_view node_id, Id click_id,
                                                Id conversion_id, int64_t revert_seq) {
  // One read transaction: the three lists agree with each other.
  return Transact<NodeBacklog>(runner_, false, [&](Connection& c) -> Result<NodeBacklog> {
    NodeBacklog b{.last_click_id = click_id,
                  .last_conversion_id = conversion_id,
                  .last_revert_seq = revert_seq};
    ADS_ASSIGN_OR_RETURN(Statement clicks,
                         c.Prepare(std::string("SELECT ") + kClickColumns +
                                   " FROM clicks WHERE node_id = ?1 AND id > ?2 ORDER BY id"));
    clicks.Bind(1, node_id).Bind(2, click_id);
    ADS_ASSIGN_OR_RETURN(std::vector<ClickRecord> rows, ReadRows<ClickRecord>(clicks, ReadClick));
    for (ClickRecord& r : rows) {
      b.last_click_id = std::max(b.last_click_id, r.id);
      if (r.status == ClickStatus::kBilled) b.clicks.push_back(std::move(r));
    }
    // Billed when recorded: 'billed', or 'reorged' since (over-budget rows never were).
    ADS_ASSIGN_OR_RETURN(Statement conversions,
                         c.Prepare(std::string("SELECT ") + kConversionColumns +
                                   " FROM conversions WHERE node_id = ?1 AND id > ?2 ORDER BY id"));
    conversions.Bind(1, node_id).Bind(2, conversion_id);
    ADS_ASSIGN_OR_RETURN(std::vector<ConversionRecord> recorded,
                         ReadRows<ConversionRecord>(conversions, ReadConversion));
    for (ConversionRecord& r : recorded) {
      b.last_conversion_id = std::max(b.last_conversion_id, r.id);
      if (r.status != ConversionStatus::kOverBudget) b.conversions.push_back(std::move(r));
    }
    ADS_ASSIGN_OR_RETURN(Statement reverts,
                         c.Prepare(std::string("SELECT ") + kConversionColumns +
                                   " FROM conversions WHERE reverted_by = ?1 AND "
                                   "reverted_seq > ?2 ORDER BY reverted_seq"));
    reverts.Bind(1, node_id).Bind(2, revert_seq);
    ADS_ASSIGN_OR_RETURN(b.reverts, ReadRows<ConversionRecord>(reverts, ReadConversion));
    for (const ConversionRecord& r : b.reverts) {
      b.last_revert_seq = std::max(b.last_revert_seq, r.revert_seq);
    }
    return b;
  });
}

Result<Id> SqlEvents::LastConversionId() {
  return Transact<Id>(runner_, false, [&](Connection& c) -> Result<Id> {
    ADS_ASSIGN_OR_RETURN(Statement sel, c.Prepare("SELECT COALESCE(MAX(id), 0) FROM conversions"));
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) return InternalError("no answer to MAX(id)");
    return Id{sel.Int(0)};
  });
}

Result<std::vector<ConversionRecord>> SqlEvents::ListConversions(const EventQuery& q) {
  return Transact<std::vector<ConversionRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<ConversionRecord>> {
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + kConversionColumns +
                      " FROM conversions WHERE (CAST(?1 AS BIGINT) IS NULL OR campaign_id = ?1) "
                      "AND (CAST(?2 AS BIGINT) IS NULL OR publisher_id = ?2) "
                      "AND (CAST(?3 AS BIGINT) IS NULL OR block_time >= ?3) "
                      "AND (CAST(?4 AS BIGINT) IS NULL OR block_time < ?4) "
                      "AND (CAST(?5 AS BIGINT) IS NULL OR id < ?5) "
                      "AND (CAST(?7 AS BIGINT) IS NULL OR campaign_id IN "
                      "(SELECT id FROM campaigns WHERE community_id = ?7)) "
                      "ORDER BY id DESC LIMIT ?6"));
        sel.Bind(1, q.campaign_id)
            .Bind(2, q.publisher_id)
            .Bind(3, q.from)
            .Bind(4, q.to)
            .Bind(5, q.before_id)
            .Bind(6, int64_t{q.limit})
            .Bind(7, q.community_id);
        return ReadRows<ConversionRecord>(sel, ReadConversion);
      });
}

namespace {

// ---- Totals and counters.

Status ReadRollupTotals(Connection& c, Id campaign_id, CampaignEventTotals& totals) {
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      c.Prepare("SELECT COALESCE(SUM(fills), 0), COALESCE(SUM(impression_spend), 0), "
                "COALESCE(SUM(clicks), 0), COALESCE(SUM(duplicate_clicks), 0), "
                "COALESCE(SUM(expired_clicks), 0), COALESCE(SUM(click_spend), 0), "
                "COALESCE(SUM(conversions), 0), COALESCE(SUM(conversion_spend), 0), "
                "COALESCE(SUM(invalid_clicks), 0), COALESCE(SUM(invalid_fills), 0) "
                "FROM rollups_day WHERE campaign_id = ?1"));
  sel.Bind(1, campaign_id);
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return OkStatus();
  totals.impressions = sel.Int(0);
  totals.impression_spend = sel.Int(1);
  totals.clicks = sel.Int(2);
  totals.duplicate_clicks = sel.Int(3);
  totals.expired_clicks = sel.Int(4);
  totals.click_spend = sel.Int(5);
  totals.conversions = sel.Int(6);
  totals.conversion_spend = sel.Int(7);
  totals.invalid_clicks = sel.Int(8);
  totals.invalid_impressions = sel.Int(9);
  return OkStatus();
}

// SUM(`count_column`) per reason of the campaign in daily table `table`.
Status ReadReasons(Connection& c, const char* table, const char* count_column, Id campaign_id,
                   std::map<std::string, int64_t>& out) {
  ADS_ASSIGN_OR_RETURN(
      Statement sel, c.Prepare(std::string("SELECT reason, SUM(") + count_column + ") FROM " +
                               table + " WHERE campaign_id = ?1 GROUP BY reason ORDER BY reason"));
  sel.Bind(1, campaign_id);
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) return OkStatus();
    out[sel.Text(0)] = sel.Int(1);
  }
}

Status ReadConversionTouches(Connection& c, Id campaign_id, CampaignEventTotals& totals) {
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      c.Prepare("SELECT "
                "COALESCE(SUM(CASE WHEN status = 'billed' AND touch = 'click' THEN 1 END), 0), "
                "COALESCE(SUM(CASE WHEN status = 'billed' AND touch = 'view' THEN 1 END), 0), "
                "COALESCE(SUM(CASE WHEN status = 'reorged' THEN 1 END), 0), "
                "COALESCE(SUM(CASE WHEN status = 'over_budget' THEN 1 END), 0) "
                "FROM conversions WHERE campaign_id = ?1"));
  sel.Bind(1, campaign_id);
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return OkStatus();
  totals.click_conversions = sel.Int(0);
  totals.view_conversions = sel.Int(1);
  totals.reorged_conversions = sel.Int(2);
  totals.over_budget_conversions = sel.Int(3);
  return OkStatus();
}

// Counters of every campaign as of a day and an hour (CountersFromEvents).
class CounterSums {
 public:
  explicit CounterSums(int64_t now)
      : day_(FloorTo(now, 86400) / 86400), hour_(FloorTo(now, 3600) / 3600) {}

  Status AddDays(Connection& c) {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT campaign_id, SUM(fills), SUM(clicks), SUM(conversions), "
                  "SUM(impression_spend + click_spend + conversion_spend), "
                  "SUM(CASE WHEN bucket = ?1 THEN impression_spend + click_spend + "
                  "conversion_spend ELSE 0 END) FROM rollups_day WHERE campaign_id <> 0 "
                  "GROUP BY campaign_id"));
    sel.Bind(1, day_ * 86400);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) return OkStatus();
      CampaignCountersRecord& r = At(sel.Int(0));
      r.impressions = sel.Int(1);
      r.clicks = sel.Int(2);
      r.conversions = sel.Int(3);
      r.total_spend = sel.Int(4);
      r.day_spend = sel.Int(5);
    }
  }

  Status AddHour(Connection& c) {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT campaign_id, SUM(impression_spend + click_spend + conversion_spend) "
                  "FROM rollups_hour WHERE bucket = ?1 AND campaign_id <> 0 "
                  "GROUP BY campaign_id"));
    sel.Bind(1, hour_ * 3600);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) return OkStatus();
      At(sel.Int(0)).hour_spend = sel.Int(1);
    }
  }

  // The billed clicks after the rollup mark.
  Status AddPendingClicks(Connection& c) {
    ADS_ASSIGN_OR_RETURN(Statement sel,
                         c.Prepare("SELECT campaign_id, clicked_at, price_micros FROM clicks "
                                   "WHERE status = 'billed' AND id > " +
                                   MarkValue(c)));
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) return OkStatus();
      CampaignCountersRecord& r = At(sel.Int(0));
      const int64_t clicked_at = sel.Int(1);
      const Micros price = sel.Int(2);
      r.clicks += 1;
      r.total_spend += price;
      if (FloorTo(clicked_at, 86400) / 86400 == day_) r.day_spend += price;
      if (FloorTo(clicked_at, 3600) / 3600 == hour_) r.hour_spend += price;
    }
  }

  std::vector<CampaignCountersRecord> Take() {
    std::vector<CampaignCountersRecord> out;
    out.reserve(counters_.size());
    for (auto& [id, r] : counters_) out.push_back(std::move(r));
    return out;
  }

 private:
  CampaignCountersRecord& At(Id campaign) {
    CampaignCountersRecord& r = counters_[campaign];
    r.campaign_id = campaign;
    r.day = day_;
    r.hour = hour_;
    return r;
  }

  const int64_t day_;
  const int64_t hour_;
  std::map<Id, CampaignCountersRecord> counters_;
};

}  // namespace

Result<CampaignEventTotals> SqlEvents::CampaignTotals(Id campaign_id) {
  return Transact<CampaignEventTotals>(
      runner_, false, [&](Connection& c) -> Result<CampaignEventTotals> {
        CampaignEventTotals totals;
        ADS_RETURN_IF_ERROR(ReadRollupTotals(c, campaign_id, totals));
        ADS_RETURN_IF_ERROR(ReadReasons(c, "invalid_clicks_day", "clicks", campaign_id,
                                        totals.invalid_clicks_by_reason));
        ADS_RETURN_IF_ERROR(ReadReasons(c, "invalid_impressions_day", "impressions", campaign_id,
                                        totals.invalid_impressions_by_reason));
        ADS_RETURN_IF_ERROR(ReadConversionTouches(c, campaign_id, totals));
        return totals;
      });
}

Result<std::vector<CampaignCountersRecord>> SqlEvents::CountersFromEvents(int64_t now) {
  // One read transaction: the rollups and the click mark agree.
  return Transact<std::vector<CampaignCountersRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<CampaignCountersRecord>> {
        CounterSums sums(now);
        ADS_RETURN_IF_ERROR(sums.AddDays(c));
        ADS_RETURN_IF_ERROR(sums.AddHour(c));
        ADS_RETURN_IF_ERROR(sums.AddPendingClicks(c));
        return sums.Take();
      });
}

Result<int64_t> SqlEvents::Prune(const EventRetention& retention, int64_t now) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    struct Rule {
      std::string sql;
      int64_t keep;
    };
    const Rule rules[] = {
        {"DELETE FROM clicks WHERE clicked_at < ?1 AND id <= " + MarkValue(c),
         retention.raw_seconds},
        {"DELETE FROM rollups_minute WHERE bucket < ?1", retention.minute_rollup_seconds},
        {"DELETE FROM rollups_hour WHERE bucket < ?1", retention.hour_rollup_seconds}};
    int64_t deleted = 0;
    for (const Rule& rule : rules) {
      ADS_ASSIGN_OR_RETURN(Statement del, c.Prepare(rule.sql));
      ADS_RETURN_IF_ERROR(del.Bind(1, now - rule.keep).Run());
      deleted += c.Changes();
    }
    return deleted;
  });
}

}  // namespace adserver::store::sql
