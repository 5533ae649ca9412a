#include "store/sqlite/sqlite_advertiser_events_store.h"

#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

}  // namespace

SqliteAdvertiserEventsStore::SqliteAdvertiserEventsStore(std::unique_ptr<Connection> conn)
    : conn_(std::move(conn)) {}

SqliteAdvertiserEventsStore::~SqliteAdvertiserEventsStore() = default;

Result<std::unique_ptr<SqliteAdvertiserEventsStore>> SqliteAdvertiserEventsStore::Open(
    const std::string& path, const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteAdvertiserEventsStore>(
      new SqliteAdvertiserEventsStore(std::move(conn)));
}

Result<std::optional<Id>> SqliteAdvertiserEventsStore::CampaignOfClick(
    const std::array<uint8_t, 16>& decision_id) {
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT campaign_id FROM clicks WHERE decision_id = ?1 ORDER BY id LIMIT 1"));
  sel.BindBlob(1, decision_id.data(), decision_id.size());
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return std::optional<Id>();
  return std::optional<Id>(sel.Int(0));
}

Status SqliteAdvertiserEventsStore::Insert(AdvertiserEventRecord& e) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  e.campaign_id.reset();
  if (e.decision_id) {
    ADS_ASSIGN_OR_RETURN(e.campaign_id, CampaignOfClick(*e.decision_id));
  }
  {
    ADS_ASSIGN_OR_RETURN(
        Statement ins,
        c.Prepare("INSERT INTO advertiser_events (community_id, key_id, name, url, decision_id, "
                  "campaign_id, person, created_at, invalid_reason) VALUES (?1, ?2, ?3, ?4, ?5, "
                  "?6, ?7, ?8, ?9)"));
    ins.Bind(1, e.community_id).Bind(2, e.key_id).Bind(3, e.name);
    if (e.url) {
      ins.Bind(4, *e.url);
    } else {
      ins.BindNull(4);
    }
    if (e.decision_id) {
      ins.BindBlob(5, e.decision_id->data(), e.decision_id->size());
    } else {
      ins.BindNull(5);
    }
    ins.Bind(6, e.campaign_id).Bind(7, static_cast<int64_t>(e.person)).Bind(8, e.created_at);
    if (e.invalid_reason.empty()) {
      ins.BindNull(9);
    } else {
      ins.Bind(9, e.invalid_reason);
    }
    ADS_RETURN_IF_ERROR(ins.Run());
    e.id = c.LastInsertId();
  }
  if (!e.invalid_reason.empty()) {
    ADS_ASSIGN_OR_RETURN(
        Statement count,
        c.Prepare("INSERT INTO advertiser_event_invalid_counts (community_id, campaign_id, reason, "
                  "count) VALUES (?1, ?2, ?3, 1) ON CONFLICT (community_id, campaign_id, reason) "
                  "DO UPDATE SET count = count + 1"));
    ADS_RETURN_IF_ERROR(count.Bind(1, e.community_id)
                            .Bind(2, e.campaign_id.value_or(0))
                            .Bind(3, e.invalid_reason)
                            .Run());
  } else {
    ADS_ASSIGN_OR_RETURN(
        Statement count,
        c.Prepare("INSERT INTO advertiser_event_counts (community_id, campaign_id, name, count) "
                  "VALUES (?1, ?2, ?3, 1) ON CONFLICT (community_id, campaign_id, name) "
                  "DO UPDATE SET count = count + 1"));
    ADS_RETURN_IF_ERROR(
        count.Bind(1, e.community_id).Bind(2, e.campaign_id.value_or(0)).Bind(3, e.name).Run());
  }
  return txn.Commit();
}

Result<std::vector<AdvertiserEventRecord>> SqliteAdvertiserEventsStore::List(
    const AdvertiserEventQuery& q) {
  std::lock_guard<std::mutex> lock(mu_);
  // NULL parameters disable their filter; one statement for every combination.
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT id, community_id, key_id, name, url, decision_id, campaign_id, "
                     "person, created_at, invalid_reason FROM advertiser_events "
                     "WHERE (?1 IS NULL OR campaign_id = ?1) "
                     "AND (?2 IS NULL OR community_id = ?2) AND (?3 IS NULL OR created_at >= ?3) "
                     "AND (?4 IS NULL OR created_at < ?4) AND (?5 IS NULL OR id < ?5) "
                     "ORDER BY id DESC LIMIT ?6"));
  sel.Bind(1, q.campaign_id)
      .Bind(2, q.community_id)
      .Bind(3, q.from)
      .Bind(4, q.to)
      .Bind(5, q.before_id)
      .Bind(6, int64_t{q.limit});
  std::vector<AdvertiserEventRecord> rows;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    AdvertiserEventRecord& e = rows.emplace_back();
    e.id = sel.Int(0);
    e.community_id = sel.Int(1);
    e.key_id = sel.Int(2);
    e.name = sel.Text(3);
    if (!sel.IsNull(4)) e.url = sel.Text(4);
    std::array<uint8_t, 16> decision{};
    if (sel.Blob(5, decision.data(), decision.size())) e.decision_id = decision;
    e.campaign_id = sel.OptInt(6);
    e.person = static_cast<uint64_t>(sel.Int(7));
    e.created_at = sel.Int(8);
    if (!sel.IsNull(9)) e.invalid_reason = sel.Text(9);
  }
  return rows;
}

Result<std::vector<AdvertiserEventCount>> SqliteAdvertiserEventsStore::Counts(
    std::optional<Id> campaign_id, std::optional<Id> community_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT name, SUM(count) FROM advertiser_event_counts "
                     "WHERE (?1 IS NULL OR campaign_id = ?1) AND (?2 IS NULL OR community_id = ?2) "
                     "GROUP BY name ORDER BY name"));
  sel.Bind(1, campaign_id).Bind(2, community_id);
  std::vector<AdvertiserEventCount> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    out.push_back({.name = sel.Text(0), .count = sel.Int(1)});
  }
  return out;
}

Result<std::vector<AdvertiserEventCount>> SqliteAdvertiserEventsStore::InvalidCounts(
    std::optional<Id> campaign_id, std::optional<Id> community_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      conn_->Prepare("SELECT reason, SUM(count) FROM advertiser_event_invalid_counts "
                     "WHERE (?1 IS NULL OR campaign_id = ?1) AND (?2 IS NULL OR community_id = ?2) "
                     "GROUP BY reason ORDER BY reason"));
  sel.Bind(1, campaign_id).Bind(2, community_id);
  std::vector<AdvertiserEventCount> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row) break;
    out.push_back({.name = sel.Text(0), .count = sel.Int(1)});
  }
  return out;
}

Result<int64_t> SqliteAdvertiserEventsStore::Prune(int64_t before) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement del,
                       conn_->Prepare("DELETE FROM advertiser_events WHERE created_at < ?1"));
  ADS_RETURN_IF_ERROR(del.Bind(1, before).Run());
  return conn_->Changes();
}

}  // namespace adserver::store
