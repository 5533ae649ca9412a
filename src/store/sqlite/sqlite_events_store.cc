#include "store/sqlite/sqlite_events_store.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

// events_meta row: the id of the last click added to the rollups (RollUpClicks).
constexpr const char* kClickRollupMark = "clicks_rolled_up_to";

constexpr const char* kRollupTables[] = {"rollups_minute", "rollups_hour", "rollups_day"};
constexpr int64_t kBucketSeconds[] = {60, 3600, 86400};

int64_t FloorTo(int64_t t, int64_t unit) {
  return t >= 0 ? t - t % unit : t - ((t % unit) + unit) % unit;
}

std::string UpsertSql(const char* table) {
  return std::string("INSERT INTO ") + table +
         " (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm, requests, fills, "
         "no_fills, errors, impression_spend, clicks, duplicate_clicks, expired_clicks, "
         "click_spend, conversions, conversion_spend, invalid_clicks, invalid_fills) VALUES (?1, "
         "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) "
         "ON CONFLICT (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm) DO UPDATE SET "
         "requests = requests + excluded.requests, fills = fills + excluded.fills, "
         "no_fills = no_fills + excluded.no_fills, errors = errors + excluded.errors, "
         "impression_spend = impression_spend + excluded.impression_spend, "
         "clicks = clicks + excluded.clicks, "
         "duplicate_clicks = duplicate_clicks + excluded.duplicate_clicks, "
         "expired_clicks = expired_clicks + excluded.expired_clicks, "
         "invalid_clicks = invalid_clicks + excluded.invalid_clicks, "
         "invalid_fills = invalid_fills + excluded.invalid_fills, "
         "click_spend = click_spend + excluded.click_spend, "
         "conversions = conversions + excluded.conversions, "
         "conversion_spend = conversion_spend + excluded.conversion_spend";
}

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

}  // namespace

SqliteEventsStore::SqliteEventsStore(std::unique_ptr<Connection> conn,
                                     std::unique_ptr<Connection> checkpoint_conn)
    : conn_(std::move(conn)), checkpoint_conn_(std::move(checkpoint_conn)) {}

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
                                "SELECT '" + kClickRollupMark +
                                "', COALESCE(MAX(id), 0) FROM clicks;";
  ADS_RETURN_IF_ERROR(conn->Exec(init_mark.c_str()));
  // The checkpointer reads and writes whole pages; it needs no cache of its own.
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> checkpoint_conn,
                       Connection::Open(path, false, options.busy_timeout, 64));
  return std::unique_ptr<SqliteEventsStore>(
      new SqliteEventsStore(std::move(conn), std::move(checkpoint_conn)));
}

Result<std::vector<uint8_t>> SqliteEventsStore::Secret(std::string_view name,
                                                       std::span<const uint8_t> candidate) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(
        Statement ins,
        c.Prepare("INSERT OR IGNORE INTO events_meta (name, value) VALUES (?1, ?2)"));
    ADS_RETURN_IF_ERROR(ins.Bind(1, name).BindBlob(2, candidate.data(), candidate.size()).Run());
  }
  std::vector<uint8_t> value;
  {
    ADS_ASSIGN_OR_RETURN(Statement sel, c.Prepare("SELECT value FROM events_meta WHERE name = ?1"));
    sel.Bind(1, name);
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) return InternalError("events_meta." + std::string(name) + " is missing");
    std::string bytes = sel.Text(0);
    value.assign(bytes.begin(), bytes.end());
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return value;
}

Status SqliteEventsStore::AddToRollups(const RollupRow& row) {
  Connection& c = *conn_;
  for (size_t t = 0; t < std::size(kRollupTables); ++t) {
    ADS_ASSIGN_OR_RETURN(Statement up, c.Prepare(UpsertSql(kRollupTables[t])));
    up.Bind(1, FloorTo(row.bucket, kBucketSeconds[t]))
        .Bind(2, row.publisher_id)
        .Bind(3, row.ad_unit_id)
        .Bind(4, row.campaign_id)
        .Bind(5, row.ad_id)
        .Bind(6, row.arm)
        .Bind(7, row.requests)
        .Bind(8, row.fills)
        .Bind(9, row.no_fills)
        .Bind(10, row.errors)
        .Bind(11, row.impression_spend)
        .Bind(12, row.clicks)
        .Bind(13, row.duplicate_clicks)
        .Bind(14, row.expired_clicks)
        .Bind(15, row.click_spend)
        .Bind(16, row.conversions)
        .Bind(17, row.conversion_spend)
        .Bind(18, row.invalid_clicks)
        .Bind(19, row.invalid_fills);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  for (const auto& [reason, count] : row.invalid_fills_by_reason) {
    ADS_ASSIGN_OR_RETURN(
        Statement up,
        c.Prepare("INSERT INTO invalid_impressions_day (bucket, publisher_id, campaign_id, reason, "
                  "impressions) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (campaign_id, bucket, "
                  "publisher_id, reason) DO UPDATE SET impressions = impressions + "
                  "excluded.impressions"));
    up.Bind(1, FloorTo(row.bucket, 86400))
        .Bind(2, row.publisher_id)
        .Bind(3, row.campaign_id)
        .Bind(4, reason)
        .Bind(5, count);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  return OkStatus();
}

Status SqliteEventsStore::InsertClicks(std::span<ClickRecord> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  // A billed candidate is inserted as billed unless its decision already has a billed row
  // (the partial unique index `clicks_billed_once` answers that in the same probe as the
  // insert: no separate lookup); then it is stored as a duplicate.
  static const std::string kInsert =
      "INSERT INTO clicks (decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
      "served_at, clicked_at, price_micros, person, earlier_variant, status, reason, ip) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
  static const std::string kInsertBilledOnce =
      kInsert + " ON CONFLICT (decision_id) WHERE status = 'billed' DO NOTHING";
  auto insert = [&](ClickRecord& r, bool billed_once) -> Result<bool> {
    ADS_ASSIGN_OR_RETURN(Statement ins, c.Prepare(billed_once ? kInsertBilledOnce : kInsert));
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
    ADS_RETURN_IF_ERROR(ins.Run());
    if (c.Changes() == 0) return false;
    r.id = c.LastInsertId();
    return true;
  };
  // An invalid click of a decision already billed is a duplicate (that check comes first);
  // rare enough for a lookup of its own.
  auto already_billed = [&](const ClickRecord& r) -> Result<bool> {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT 1 FROM clicks WHERE decision_id = ?1 AND status = 'billed'"));
    sel.BindBlob(1, r.decision_id.data(), r.decision_id.size());
    return sel.Step();
  };
  for (ClickRecord& r : rows) {
    if (r.status == ClickStatus::kBilled) {
      ADS_ASSIGN_OR_RETURN(bool inserted, insert(r, /*billed_once=*/true));
      if (inserted) continue;
      r.status = ClickStatus::kDuplicate;
    } else if (r.status == ClickStatus::kInvalid) {
      ADS_ASSIGN_OR_RETURN(bool billed, already_billed(r));
      if (billed) r.status = ClickStatus::kDuplicate;
    }
    if (r.status != ClickStatus::kInvalid) r.reason.clear();
    r.price = 0;
    ADS_ASSIGN_OR_RETURN(bool inserted, insert(r, /*billed_once=*/false));
    if (!inserted) return InternalError("a click row was not inserted");
  }
  return txn.Commit();
}

Result<int64_t> SqliteEventsStore::RollUpClicks(int64_t max_rows) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  int64_t mark = 0;
  {
    ADS_ASSIGN_OR_RETURN(Statement sel, c.Prepare(std::string("SELECT value FROM events_meta "
                                                              "WHERE name = '") +
                                                  kClickRollupMark + "'"));
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) return InternalError(std::string("events_meta.") + kClickRollupMark + " is missing");
    mark = sel.Int(0);
  }
  // Rollup deltas are summed per minute and dimensions: one upsert per distinct key and table.
  std::map<std::tuple<int64_t, Id, std::string, Id, Id, std::string>, RollupRow> rollups;
  // Invalid clicks per (day, publisher, campaign, reason).
  std::map<std::tuple<int64_t, Id, Id, std::string>, int64_t> invalid_by_reason;
  int64_t rolled = 0;
  {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT id, clicked_at, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
                  "status, price_micros, reason FROM clicks WHERE id > ?1 ORDER BY id LIMIT ?2"));
    sel.Bind(1, mark).Bind(2, max_rows);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      ++rolled;
      mark = sel.Int(0);
      const int64_t minute = FloorTo(sel.Int(1), 60);
      auto [it, added] = rollups.try_emplace(
          std::make_tuple(minute, sel.Int(2), sel.Text(3), sel.Int(4), sel.Int(5), sel.Text(6)));
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
          invalid_by_reason[std::make_tuple(FloorTo(minute, 86400), sel.Int(2), sel.Int(4),
                                            sel.Text(9))] += 1;
          break;
      }
    }
  }
  if (rolled == 0) return int64_t{0};
  for (const auto& [key, rollup] : rollups) ADS_RETURN_IF_ERROR(AddToRollups(rollup));
  for (const auto& [key, count] : invalid_by_reason) {
    ADS_ASSIGN_OR_RETURN(
        Statement up,
        c.Prepare("INSERT INTO invalid_clicks_day (bucket, publisher_id, campaign_id, reason, "
                  "clicks) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (campaign_id, bucket, "
                  "publisher_id, reason) DO UPDATE SET clicks = clicks + excluded.clicks"));
    up.Bind(1, std::get<0>(key))
        .Bind(2, std::get<1>(key))
        .Bind(3, std::get<2>(key))
        .Bind(4, std::get<3>(key))
        .Bind(5, count);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  {
    ADS_ASSIGN_OR_RETURN(Statement up,
                         c.Prepare(std::string("UPDATE events_meta SET value = ?1 WHERE name = '") +
                                   kClickRollupMark + "'"));
    ADS_RETURN_IF_ERROR(up.Bind(1, mark).Run());
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return rolled;
}

Result<std::vector<CampaignCountersRecord>> SqliteEventsStore::CountersFromEvents(int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  // One read transaction: the rollups and the click mark agree.
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  const int64_t day = FloorTo(now, 86400) / 86400;
  const int64_t hour = FloorTo(now, 3600) / 3600;
  std::map<Id, CampaignCountersRecord> counters;
  auto at = [&](Id campaign) -> CampaignCountersRecord& {
    CampaignCountersRecord& r = counters[campaign];
    r.campaign_id = campaign;
    r.day = day;
    r.hour = hour;
    return r;
  };
  {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT campaign_id, SUM(fills), SUM(clicks), SUM(conversions), "
                  "SUM(impression_spend + click_spend + conversion_spend), "
                  "SUM(CASE WHEN bucket = ?1 THEN impression_spend + click_spend + "
                  "conversion_spend ELSE 0 END) FROM rollups_day WHERE campaign_id != 0 "
                  "GROUP BY campaign_id"));
    sel.Bind(1, day * 86400);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      CampaignCountersRecord& r = at(sel.Int(0));
      r.impressions = sel.Int(1);
      r.clicks = sel.Int(2);
      r.conversions = sel.Int(3);
      r.total_spend = sel.Int(4);
      r.day_spend = sel.Int(5);
    }
  }
  {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare("SELECT campaign_id, SUM(impression_spend + click_spend + conversion_spend) "
                  "FROM rollups_hour WHERE bucket = ?1 AND campaign_id != 0 "
                  "GROUP BY campaign_id"));
    sel.Bind(1, hour * 3600);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      at(sel.Int(0)).hour_spend = sel.Int(1);
    }
  }
  {
    ADS_ASSIGN_OR_RETURN(
        Statement sel,
        c.Prepare(std::string("SELECT campaign_id, clicked_at, price_micros FROM clicks WHERE "
                              "status = 'billed' AND id > (SELECT value FROM events_meta WHERE "
                              "name = '") +
                  kClickRollupMark + "')"));
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      CampaignCountersRecord& r = at(sel.Int(0));
      const int64_t clicked_at = sel.Int(1);
      const Micros price = sel.Int(2);
      r.clicks += 1;
      r.total_spend += price;
      if (FloorTo(clicked_at, 86400) / 86400 == day) r.day_spend += price;
      if (FloorTo(clicked_at, 3600) / 3600 == hour) r.hour_spend += price;
    }
  }
  std::vector<CampaignCountersRecord> out;
  out.reserve(counters.size());
  for (auto& [id, r] : counters) out.push_back(std::move(r));
  return out;
}

Status SqliteEventsStore::Checkpoint() {
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  // PASSIVE: copies what no reader still needs, never waits for the writer or blocks it.
  int log = 0, done = 0;
  int rc = sqlite3_wal_checkpoint_v2(checkpoint_conn_->db(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                     &log, &done);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
    return InternalError(std::string("checkpoint: ") + sqlite3_errmsg(checkpoint_conn_->db()));
  }
  return OkStatus();
}

Status SqliteEventsStore::AddRollups(std::span<const RollupRow> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*conn_, Transaction::Kind::kWrite));
  for (const RollupRow& row : rows) ADS_RETURN_IF_ERROR(AddToRollups(row));
  return txn.Commit();
}

Result<std::vector<ClickRecord>> SqliteEventsStore::ListClicks(const EventQuery& q) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  // NULL parameters disable their filter; one statement for every combination.
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      c.Prepare(std::string("SELECT ") + kClickColumns +
                " FROM clicks WHERE (?1 IS NULL OR campaign_id = ?1) "
                "AND (?2 IS NULL OR publisher_id = ?2) AND (?3 IS NULL OR clicked_at >= ?3) "
                "AND (?4 IS NULL OR clicked_at < ?4) AND (?5 IS NULL OR id < ?5) "
                "AND (?7 IS NULL OR campaign_id IN "
                "(SELECT id FROM campaigns WHERE community_id = ?7)) "
                "ORDER BY id DESC LIMIT ?6"));
  sel.Bind(1, q.campaign_id)
      .Bind(2, q.publisher_id)
      .Bind(3, q.from)
      .Bind(4, q.to)
      .Bind(5, q.before_id)
      .Bind(6, int64_t{q.limit})
      .Bind(7, q.community_id);
  std::vector<ClickRecord> rows;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    rows.push_back(ReadClick(sel));
  }
  return rows;
}

Result<CampaignEventTotals> SqliteEventsStore::CampaignTotals(Id campaign_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT COALESCE(SUM(fills), 0), COALESCE(SUM(impression_spend), 0), "
                     "COALESCE(SUM(clicks), 0), COALESCE(SUM(duplicate_clicks), 0), "
                     "COALESCE(SUM(expired_clicks), 0), COALESCE(SUM(click_spend), 0), "
                     "COALESCE(SUM(conversions), 0), COALESCE(SUM(conversion_spend), 0), "
                     "COALESCE(SUM(invalid_clicks), 0), COALESCE(SUM(invalid_fills), 0) "
                     "FROM rollups_day WHERE campaign_id = ?1"));
  sel.Bind(1, campaign_id);
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  CampaignEventTotals totals;
  if (row) {
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
  }
  sel.Reset();
  ADS_ASSIGN_OR_RETURN(Statement reasons,
                       conn_->Prepare("SELECT reason, SUM(clicks) FROM invalid_clicks_day WHERE "
                                      "campaign_id = ?1 GROUP BY reason ORDER BY reason"));
  reasons.Bind(1, campaign_id);
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool reason_row, reasons.Step());
    if (!reason_row) break;
    totals.invalid_clicks_by_reason[reasons.Text(0)] = reasons.Int(1);
  }
  ADS_ASSIGN_OR_RETURN(
      Statement impression_reasons,
      conn_->Prepare("SELECT reason, SUM(impressions) FROM invalid_impressions_day WHERE "
                     "campaign_id = ?1 GROUP BY reason ORDER BY reason"));
  impression_reasons.Bind(1, campaign_id);
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool reason_row, impression_reasons.Step());
    if (!reason_row) break;
    totals.invalid_impressions_by_reason[impression_reasons.Text(0)] = impression_reasons.Int(1);
  }
  ADS_ASSIGN_OR_RETURN(
      Statement touch,
      conn_->Prepare(
          "SELECT COALESCE(SUM(status = 'billed' AND touch = 'click'), 0), "
          "COALESCE(SUM(status = 'billed' AND touch = 'view'), 0), "
          "COALESCE(SUM(status = 'reorged'), 0) FROM conversions WHERE campaign_id = ?1"));
  touch.Bind(1, campaign_id);
  ADS_ASSIGN_OR_RETURN(bool touch_row, touch.Step());
  if (touch_row) {
    totals.click_conversions = touch.Int(0);
    totals.view_conversions = touch.Int(1);
    totals.reorged_conversions = touch.Int(2);
  }
  return totals;
}

Result<int64_t> SqliteEventsStore::Prune(const EventRetention& retention, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  int64_t deleted = 0;
  struct Rule {
    const char* sql;
    int64_t keep;
  };
  for (Rule rule :
       {Rule{"DELETE FROM clicks WHERE clicked_at < ?1 AND id <= (SELECT value FROM events_meta "
             "WHERE name = 'clicks_rolled_up_to')",
             retention.raw_seconds},
        Rule{"DELETE FROM rollups_minute WHERE bucket < ?1", retention.minute_rollup_seconds},
        Rule{"DELETE FROM rollups_hour WHERE bucket < ?1", retention.hour_rollup_seconds}}) {
    ADS_ASSIGN_OR_RETURN(Statement del, c.Prepare(rule.sql));
    ADS_RETURN_IF_ERROR(del.Bind(1, now - rule.keep).Run());
    deleted += c.Changes();
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

Result<std::optional<ClickRecord>> SqliteEventsStore::LastBilledClick(Id campaign_id,
                                                                      uint64_t person,
                                                                      int64_t served_from,
                                                                      int64_t clicked_by) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare(std::string("SELECT ") + kClickColumns +
                     " FROM clicks WHERE campaign_id = ?1 AND person = ?2 AND status = 'billed' "
                     "AND clicked_at <= ?3 AND served_at >= ?4 ORDER BY clicked_at DESC LIMIT 1"));
  sel.Bind(1, campaign_id)
      .Bind(2, static_cast<int64_t>(person))
      .Bind(3, clicked_by)
      .Bind(4, served_from);
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return std::optional<ClickRecord>();
  return std::optional<ClickRecord>(ReadClick(sel));
}

Result<std::optional<int64_t>> SqliteEventsStore::BilledClickAt(
    const DecisionIdBytes& decision_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT clicked_at FROM clicks WHERE decision_id = ?1 AND status = 'billed'"));
  sel.BindBlob(1, decision_id.data(), decision_id.size());
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(sel.Int(0));
}

namespace {

constexpr const char* kConversionColumns =
    "id, campaign_id, ad_id, publisher_id, ad_unit_id, arm, decision_id, wallet, person, "
    "chain_id, tx_hash, log_index, block_number, block_hash, block_time, touch, exposed_at, "
    "price_micros, confirmed, status, recorded_at, reverted_at";

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
  r.status = s.Text(19) == "reorged" ? ConversionStatus::kReorged : ConversionStatus::kBilled;
  r.recorded_at = s.Int(20);
  r.reverted_at = s.OptInt(21);
  return r;
}

RollupRow ConversionRollup(const ConversionRecord& r, int sign) {
  return RollupRow{.bucket = r.block_time,
                   .publisher_id = r.publisher_id,
                   .ad_unit_id = r.ad_unit_id,
                   .campaign_id = r.campaign_id,
                   .ad_id = r.ad_id,
                   .arm = r.arm,
                   .conversions = sign,
                   .conversion_spend = sign * r.price};
}

}  // namespace

Result<std::vector<ConversionRecord>> SqliteEventsStore::InsertConversions(
    std::span<const ConversionCandidate> candidates, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  std::vector<ConversionRecord> inserted;
  for (const ConversionCandidate& candidate : candidates) {
    const ConversionRecord& r = candidate.record;
    {
      ADS_ASSIGN_OR_RETURN(Statement dup,
                           c.Prepare("SELECT 1 FROM conversions WHERE chain_id = ?1 AND "
                                     "tx_hash = ?2 AND log_index = ?3 AND campaign_id = ?4 AND "
                                     "status = 'billed'"));
      dup.Bind(1, r.chain_id)
          .BindBlob(2, r.tx_hash.data(), r.tx_hash.size())
          .Bind(3, r.log_index)
          .Bind(4, r.campaign_id);
      ADS_ASSIGN_OR_RETURN(bool counted, dup.Step());
      if (counted) continue;
    }
    if (candidate.count_once_per_person) {
      ADS_ASSIGN_OR_RETURN(Statement once,
                           c.Prepare("SELECT 1 FROM conversions WHERE campaign_id = ?1 AND "
                                     "person = ?2 AND status = 'billed' AND block_time > ?3"));
      once.Bind(1, r.campaign_id)
          .Bind(2, static_cast<int64_t>(r.person))
          .Bind(3, r.block_time - candidate.window_seconds);
      ADS_ASSIGN_OR_RETURN(bool converted, once.Step());
      if (converted) continue;
    }
    ADS_ASSIGN_OR_RETURN(
        Statement ins,
        c.Prepare("INSERT INTO conversions (campaign_id, ad_id, publisher_id, ad_unit_id, arm, "
                  "decision_id, wallet, person, chain_id, tx_hash, log_index, block_number, "
                  "block_hash, block_time, touch, exposed_at, price_micros, confirmed, status, "
                  "recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                  "?14, ?15, ?16, ?17, ?18, 'billed', ?19)"));
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
        .Bind(19, now);
    ADS_RETURN_IF_ERROR(ins.Run());
    ConversionRecord stored = r;
    stored.id = c.LastInsertId();
    stored.status = ConversionStatus::kBilled;
    stored.recorded_at = now;
    ADS_RETURN_IF_ERROR(AddToRollups(ConversionRollup(stored, 1)));
    inserted.push_back(std::move(stored));
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return inserted;
}

Result<std::vector<ConversionRecord>> SqliteEventsStore::RevertConversions(
    int64_t chain_id, int64_t block_number, const std::array<uint8_t, 32>& block_hash,
    int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  std::vector<ConversionRecord> reverted;
  {
    ADS_ASSIGN_OR_RETURN(
        Statement sel, c.Prepare(std::string("SELECT ") + kConversionColumns +
                                 " FROM conversions WHERE chain_id = ?1 AND block_number = ?2 AND "
                                 "block_hash = ?3 AND status = 'billed'"));
    sel.Bind(1, chain_id).Bind(2, block_number).BindBlob(3, block_hash.data(), block_hash.size());
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      reverted.push_back(ReadConversion(sel));
    }
  }
  for (const ConversionRecord& r : reverted) {
    ADS_ASSIGN_OR_RETURN(Statement up,
                         c.Prepare("UPDATE conversions SET status = 'reorged', reverted_at = ?2 "
                                   "WHERE id = ?1"));
    ADS_RETURN_IF_ERROR(up.Bind(1, r.id).Bind(2, now).Run());
    ADS_RETURN_IF_ERROR(AddToRollups(ConversionRollup(r, -1)));
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return reverted;
}

Result<std::vector<ConversionRecord>> SqliteEventsStore::RevertReplacedConversions(
    int64_t chain_id, std::span<const BlockAtHeight> blocks, int64_t now) {
  std::vector<ConversionRecord> reverted;
  if (blocks.empty()) return reverted;
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  auto [low, high] = std::minmax_element(
      blocks.begin(), blocks.end(),
      [](const BlockAtHeight& a, const BlockAtHeight& b) { return a.number < b.number; });
  static constexpr std::array<uint8_t, 32> kImported{};
  std::vector<ConversionRecord> candidates;
  {
    // Usually empty: these heights are being applied for the first time.
    ADS_ASSIGN_OR_RETURN(
        Statement sel, c.Prepare(std::string("SELECT ") + kConversionColumns +
                                 " FROM conversions WHERE chain_id = ?1 AND block_number BETWEEN "
                                 "?2 AND ?3 AND status = 'billed'"));
    sel.Bind(1, chain_id).Bind(2, low->number).Bind(3, high->number);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) break;
      ConversionRecord r = ReadConversion(sel);
      if (r.block_hash == kImported) continue;
      auto block = std::find_if(blocks.begin(), blocks.end(), [&](const BlockAtHeight& b) {
        return b.number == r.block_number;
      });
      if (block != blocks.end() && block->hash != r.block_hash) candidates.push_back(std::move(r));
    }
  }
  if (candidates.empty()) return reverted;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  for (ConversionRecord& r : candidates) {
    ADS_ASSIGN_OR_RETURN(Statement up,
                         c.Prepare("UPDATE conversions SET status = 'reorged', reverted_at = ?2 "
                                   "WHERE id = ?1 AND status = 'billed'"));
    ADS_RETURN_IF_ERROR(up.Bind(1, r.id).Bind(2, now).Run());
    if (c.Changes() == 0) continue;  // reverted meanwhile
    ADS_RETURN_IF_ERROR(AddToRollups(ConversionRollup(r, -1)));
    reverted.push_back(std::move(r));
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return reverted;
}

Result<std::vector<ConversionRecord>> SqliteEventsStore::BilledConversionsAfter(Id after_id,
                                                                               int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement sel,
                       conn_->Prepare(std::string("SELECT ") + kConversionColumns +
                                      " FROM conversions WHERE id > ?1 AND status = 'billed' "
                                      "ORDER BY id LIMIT ?2"));
  sel.Bind(1, after_id).Bind(2, int64_t{limit});
  std::vector<ConversionRecord> rows;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    rows.push_back(ReadConversion(sel));
  }
  return rows;
}

Result<Id> SqliteEventsStore::LastConversionId() {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement sel, conn_->Prepare("SELECT COALESCE(MAX(id), 0) FROM conversions"));
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return InternalError("no answer to MAX(id)");
  return Id{sel.Int(0)};
}

Result<std::vector<ConversionRecord>> SqliteEventsStore::ListConversions(const EventQuery& q) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare(std::string("SELECT ") + kConversionColumns +
                     " FROM conversions WHERE (?1 IS NULL OR campaign_id = ?1) "
                     "AND (?2 IS NULL OR publisher_id = ?2) AND (?3 IS NULL OR block_time >= ?3) "
                     "AND (?4 IS NULL OR block_time < ?4) AND (?5 IS NULL OR id < ?5) "
                     "AND (?7 IS NULL OR campaign_id IN "
                     "(SELECT id FROM campaigns WHERE community_id = ?7)) "
                     "ORDER BY id DESC LIMIT ?6"));
  sel.Bind(1, q.campaign_id)
      .Bind(2, q.publisher_id)
      .Bind(3, q.from)
      .Bind(4, q.to)
      .Bind(5, q.before_id)
      .Bind(6, int64_t{q.limit})
      .Bind(7, q.community_id);
  std::vector<ConversionRecord> rows;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    rows.push_back(ReadConversion(sel));
  }
  return rows;
}

}  // namespace adserver::store
