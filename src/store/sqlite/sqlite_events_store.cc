#include "store/sqlite/sqlite_events_store.h"

#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

constexpr const char* kRollupTables[] = {"rollups_minute", "rollups_hour", "rollups_day"};
constexpr int64_t kBucketSeconds[] = {60, 3600, 86400};

int64_t FloorTo(int64_t t, int64_t unit) {
  return t >= 0 ? t - t % unit : t - ((t % unit) + unit) % unit;
}

std::string UpsertSql(const char* table) {
  return std::string("INSERT INTO ") + table +
         " (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm, requests, fills, "
         "no_fills, errors, impression_spend, clicks, duplicate_clicks, expired_clicks, "
         "click_spend) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
         "ON CONFLICT (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm) DO UPDATE SET "
         "requests = requests + excluded.requests, fills = fills + excluded.fills, "
         "no_fills = no_fills + excluded.no_fills, errors = errors + excluded.errors, "
         "impression_spend = impression_spend + excluded.impression_spend, "
         "clicks = clicks + excluded.clicks, "
         "duplicate_clicks = duplicate_clicks + excluded.duplicate_clicks, "
         "expired_clicks = expired_clicks + excluded.expired_clicks, "
         "click_spend = click_spend + excluded.click_spend";
}

ClickStatus StatusFromName(std::string_view name) {
  if (name == "duplicate") return ClickStatus::kDuplicate;
  if (name == "expired") return ClickStatus::kExpired;
  return ClickStatus::kBilled;
}

}  // namespace

SqliteEventsStore::SqliteEventsStore(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}

SqliteEventsStore::~SqliteEventsStore() = default;

Result<std::unique_ptr<SqliteEventsStore>> SqliteEventsStore::Open(const std::string& path,
                                                                   const SqliteOptions& options,
                                                                   bool synchronous_full) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  if (synchronous_full) ADS_RETURN_IF_ERROR(conn->Exec("PRAGMA synchronous=FULL;"));
  return std::unique_ptr<SqliteEventsStore>(new SqliteEventsStore(std::move(conn)));
}

Result<std::vector<uint8_t>> SqliteEventsStore::Secret(std::string_view name,
                                                       std::span<const uint8_t> candidate) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(
        Statement ins, c.Prepare("INSERT OR IGNORE INTO events_meta (name, value) VALUES (?1, ?2)"));
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
        .Bind(15, row.click_spend);
    ADS_RETURN_IF_ERROR(up.Run());
  }
  return OkStatus();
}

Status SqliteEventsStore::InsertClicks(std::span<ClickRecord> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  for (ClickRecord& r : rows) {
    if (r.status == ClickStatus::kBilled) {
      ADS_ASSIGN_OR_RETURN(
          Statement sel,
          c.Prepare("SELECT 1 FROM clicks WHERE decision_id = ?1 AND status = 'billed'"));
      sel.BindBlob(1, r.decision_id.data(), r.decision_id.size());
      ADS_ASSIGN_OR_RETURN(bool billed_before, sel.Step());
      if (billed_before) r.status = ClickStatus::kDuplicate;
    }
    if (r.status != ClickStatus::kBilled) r.price = 0;
    {
      ADS_ASSIGN_OR_RETURN(
          Statement ins,
          c.Prepare("INSERT INTO clicks (decision_id, publisher_id, ad_unit_id, campaign_id, "
                    "ad_id, arm, served_at, clicked_at, price_micros, person, earlier_variant, "
                    "status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
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
          .Bind(12, ClickStatusName(r.status));
      ADS_RETURN_IF_ERROR(ins.Run());
      r.id = c.LastInsertId();
    }
    RollupRow rollup{.bucket = r.clicked_at,
                     .publisher_id = r.publisher_id,
                     .ad_unit_id = r.ad_unit_id,
                     .campaign_id = r.campaign_id,
                     .ad_id = r.ad_id,
                     .arm = r.arm};
    switch (r.status) {
      case ClickStatus::kBilled:
        rollup.clicks = 1;
        rollup.click_spend = r.price;
        break;
      case ClickStatus::kDuplicate:
        rollup.duplicate_clicks = 1;
        break;
      case ClickStatus::kExpired:
        rollup.expired_clicks = 1;
        break;
    }
    ADS_RETURN_IF_ERROR(AddToRollups(rollup));
  }
  return txn.Commit();
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
      c.Prepare("SELECT id, decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
                "served_at, clicked_at, price_micros, person, earlier_variant, status "
                "FROM clicks WHERE (?1 IS NULL OR campaign_id = ?1) "
                "AND (?2 IS NULL OR publisher_id = ?2) AND (?3 IS NULL OR clicked_at >= ?3) "
                "AND (?4 IS NULL OR clicked_at < ?4) AND (?5 IS NULL OR id < ?5) "
                "ORDER BY id DESC LIMIT ?6"));
  sel.Bind(1, q.campaign_id)
      .Bind(2, q.publisher_id)
      .Bind(3, q.from)
      .Bind(4, q.to)
      .Bind(5, q.before_id)
      .Bind(6, int64_t{q.limit});
  std::vector<ClickRecord> rows;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
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
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<CampaignEventTotals> SqliteEventsStore::CampaignTotals(Id campaign_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT COALESCE(SUM(fills), 0), COALESCE(SUM(impression_spend), 0), "
                     "COALESCE(SUM(clicks), 0), COALESCE(SUM(duplicate_clicks), 0), "
                     "COALESCE(SUM(expired_clicks), 0), COALESCE(SUM(click_spend), 0) "
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
  for (Rule rule : {Rule{"DELETE FROM clicks WHERE clicked_at < ?1", retention.raw_seconds},
                    Rule{"DELETE FROM rollups_minute WHERE bucket < ?1",
                         retention.minute_rollup_seconds},
                    Rule{"DELETE FROM rollups_hour WHERE bucket < ?1",
                         retention.hour_rollup_seconds}}) {
    ADS_ASSIGN_OR_RETURN(Statement del, c.Prepare(rule.sql));
    ADS_RETURN_IF_ERROR(del.Bind(1, now - rule.keep).Run());
    deleted += c.Changes();
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

}  // namespace adserver::store
