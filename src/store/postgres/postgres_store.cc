#include "store/postgres/postgres_store.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "common/mutex.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/detail/pg_node_counters.h"
#include "store/postgres/detail/pg_runner.h"
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
// pg_try_advisory_xact_lock key of the dead-node reconcile ("adsrvdea").
constexpr int64_t kDeadNodeLock = 0x6164737276'646561;

PgParam Digest(uint64_t digest) { return Param(static_cast<int64_t>(digest)); }

}  // namespace

PostgresStore::PostgresStore(std::unique_ptr<pg_detail::PgRunner> runner)
    : SqlInventory(*runner), SqlAccounts(*runner), runner_(std::move(runner)) {}

PostgresStore::~PostgresStore() = default;

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresStore>(
      new PostgresStore(std::make_unique<pg_detail::PgRunner>(std::move(conn))));
}

namespace {
using pg_detail::kCounterColumns;

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

Status PostgresStore::UpsertNodeCounters(const std::vector<CampaignCountersRecord>& rows,
                                         pg_detail::CountersWrite how) {
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  ADS_RETURN_IF_ERROR(pg_detail::UpsertNodeCounters(c, node_id_, rows, how));
  return txn.Commit();
}

Status PostgresStore::SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
  if (node_id_.empty()) {
    return runner_->Write(0, [&](sql::Connection& c) { return sql::SaveCounters(c, rows); });
  }
  return UpsertNodeCounters(rows, pg_detail::CountersWrite::kReplace);
}

Status PostgresStore::SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                             const std::optional<CounterMarks>& marks) {
  if (node_id_.empty()) return InternalError("counter marks need a node id");
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  // The marks row first: a dead-node reconcile (ReconcileDeadNodes) locks it before the
  // counters too, so the two take their locks in one order.
  if (marks) {
    ADS_RETURN_IF_ERROR(
        c.Exec("INSERT INTO node_counter_marks (node_id, click_id, conversion_id, revert_seq, "
               "saved_at) VALUES ($1, $2, $3, $4, extract(epoch FROM now())::bigint) "
               "ON CONFLICT (node_id) DO UPDATE SET click_id = excluded.click_id, "
               "conversion_id = excluded.conversion_id, revert_seq = excluded.revert_seq, "
               "saved_at = excluded.saved_at",
               {Param(std::string_view(node_id_)), Param(marks->click_id),
                Param(marks->conversion_id), Param(marks->revert_seq)})
            .status());
  } else {
    ADS_RETURN_IF_ERROR(c.Exec("DELETE FROM node_counter_marks WHERE node_id = $1",
                               {Param(std::string_view(node_id_))})
                            .status());
  }
  ADS_RETURN_IF_ERROR(
      pg_detail::UpsertNodeCounters(c, node_id_, rows, pg_detail::CountersWrite::kReplace));
  return txn.Commit();
}

namespace {

// ReconcileDeadNodes' reads of one dead node's events past its marks. Each query selects
// (position, campaign, price, time, billed) of the node's rows after $2 in position order; the
// mark moves past what was read and every billed row's delta (`sign`: +1 billed, -1 undone by a
// reorg) is added to `deltas`. Returns the billed rows.
constexpr std::string_view kDeadNodeClicksSql =
    "SELECT id, campaign_id, price_micros, clicked_at, (status = 'billed')::int "
    "FROM clicks WHERE node_id = $1 AND id > $2 ORDER BY id";
// Billed when recorded: still billed, or reorged since (over-budget rows never were).
constexpr std::string_view kDeadNodeConversionsSql =
    "SELECT id, campaign_id, price_micros, recorded_at, (status <> 'over_budget')::int "
    "FROM conversions WHERE node_id = $1 AND id > $2 ORDER BY id";
constexpr std::string_view kDeadNodeRevertsSql =
    "SELECT reverted_seq, campaign_id, price_micros, recorded_at, 1 FROM conversions "
    "WHERE reverted_by = $1 AND reverted_seq > $2 ORDER BY reverted_seq";

enum class DeadNodeEvent { kClick, kConversion, kRevert };

Result<int64_t> AddDeadNodeEvents(PgConnection& c, DeadNodeEvent kind, const std::string& node,
                                  int64_t& mark, std::map<Id, CampaignCountersRecord>& deltas) {
  const std::string_view sql = kind == DeadNodeEvent::kClick        ? kDeadNodeClicksSql
                               : kind == DeadNodeEvent::kConversion ? kDeadNodeConversionsSql
                                                                    : kDeadNodeRevertsSql;
  ADS_ASSIGN_OR_RETURN(PgResult rows, c.Exec(sql, {Param(std::string_view(node)), Param(mark)}));
  int64_t billed_rows = 0;
  for (int r = 0; r < rows.rows(); ++r) {
    ConversionRecord event;
    ADS_ASSIGN_OR_RETURN(int64_t position, rows.Int(r, 0));
    ADS_ASSIGN_OR_RETURN(event.campaign_id, rows.Int(r, 1));
    ADS_ASSIGN_OR_RETURN(event.price, rows.Int(r, 2));
    ADS_ASSIGN_OR_RETURN(event.recorded_at, rows.Int(r, 3));
    ADS_ASSIGN_OR_RETURN(int64_t billed, rows.Int(r, 4));
    mark = std::max(mark, position);
    if (billed == 0) continue;
    if (kind == DeadNodeEvent::kClick) {
      pg_detail::AddClickDelta(deltas, event.campaign_id, event.price, event.recorded_at);
    } else {
      pg_detail::AddConversionDelta(deltas, event, kind == DeadNodeEvent::kRevert ? -1 : 1);
    }
    ++billed_rows;
  }
  return billed_rows;
}

}  // namespace

Result<DeadNodesReconciled> PostgresStore::ReconcileDeadNodes(int64_t dead_seconds) {
  if (node_id_.empty()) return InternalError("a dead-node reconcile needs a node id");
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
  DeadNodesReconciled out;
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  // One live node at a time (the others find the lock taken and skip the round).
  ADS_ASSIGN_OR_RETURN(PgResult leader,
                       c.Exec("SELECT pg_try_advisory_xact_lock($1)::int", {Param(kDeadNodeLock)}));
  ADS_ASSIGN_OR_RETURN(int64_t leads, leader.Int(0, 0));
  if (leads == 0) return out;
  ADS_ASSIGN_OR_RETURN(
      PgResult stale,
      c.Exec("SELECT node_id, click_id, conversion_id, revert_seq FROM node_counter_marks "
             "WHERE node_id <> $1 AND saved_at < extract(epoch FROM now())::bigint - $2 "
             "ORDER BY node_id FOR UPDATE SKIP LOCKED",
             {Param(std::string_view(node_id_)), Param(dead_seconds)}));
  for (int i = 0; i < stale.rows(); ++i) {
    const std::string node(stale.Text(i, 0));
    ADS_ASSIGN_OR_RETURN(Id click_id, stale.Int(i, 1));
    ADS_ASSIGN_OR_RETURN(Id conversion_id, stale.Int(i, 2));
    ADS_ASSIGN_OR_RETURN(int64_t revert_seq, stale.Int(i, 3));
    const Id clicks_from = click_id, conversions_from = conversion_id;
    const int64_t reverts_from = revert_seq;
    std::map<Id, CampaignCountersRecord> deltas;
    ADS_ASSIGN_OR_RETURN(int64_t clicks,
                         AddDeadNodeEvents(c, DeadNodeEvent::kClick, node, click_id, deltas));
    ADS_ASSIGN_OR_RETURN(int64_t conversions, AddDeadNodeEvents(c, DeadNodeEvent::kConversion, node,
                                                                conversion_id, deltas));
    ADS_ASSIGN_OR_RETURN(int64_t reverts,
                         AddDeadNodeEvents(c, DeadNodeEvent::kRevert, node, revert_seq, deltas));
    out.clicks += clicks;
    out.conversions += conversions;
    out.reverts += reverts;
    if (click_id == clicks_from && conversion_id == conversions_from &&
        revert_seq == reverts_from) {
      continue;
    }
    std::vector<CampaignCountersRecord> rows;
    for (const auto& [campaign, d] : deltas) rows.push_back(d);
    ADS_RETURN_IF_ERROR(
        pg_detail::UpsertNodeCounters(c, node, rows, pg_detail::CountersWrite::kAdd));
    // saved_at stays: the node is still the dead one it was.
    ADS_RETURN_IF_ERROR(c.Exec("UPDATE node_counter_marks SET click_id = $2, conversion_id = $3, "
                               "revert_seq = $4 WHERE node_id = $1",
                               {Param(std::string_view(node)), Param(click_id),
                                Param(conversion_id), Param(revert_seq)})
                            .status());
    out.nodes.push_back(node);
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<std::optional<CounterMarks>> PostgresStore::LoadCounterMarks() {
  if (node_id_.empty()) return InternalError("counter marks need a node id");
  MutexLock lock(runner_->mu());
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       runner_->conn().Exec("SELECT click_id, conversion_id, revert_seq FROM "
                                            "node_counter_marks WHERE node_id = $1",
                                            {Param(std::string_view(node_id_))}));
  if (r.rows() == 0) return std::optional<CounterMarks>();
  CounterMarks m;
  ADS_ASSIGN_OR_RETURN(m.click_id, r.Int(0, 0));
  ADS_ASSIGN_OR_RETURN(m.conversion_id, r.Int(0, 1));
  ADS_ASSIGN_OR_RETURN(m.revert_seq, r.Int(0, 2));
  return std::optional<CounterMarks>(m);
}

Status PostgresStore::AddCampaignCounters(const std::vector<CampaignCountersRecord>& deltas) {
  if (node_id_.empty()) return InternalError("AddCampaignCounters needs a node id");
  return UpsertNodeCounters(deltas, pg_detail::CountersWrite::kAdd);
}

Result<size_t> PostgresStore::DrainBudgetTakes(
    const std::function<Status(Id campaign, Micros micros)>& apply, int limit) {
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c));
  ADS_ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, campaign_id, micros FROM budget_takes "
                                          "ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
                                          {Param(int64_t{limit})}));
  // Per campaign in the order of its oldest row: the sum and the rows it is made of.
  struct Take {
    Id campaign = 0;
    Micros micros = 0;
    std::vector<int64_t> rows;
  };
  std::vector<Take> takes;
  for (int i = 0; i < r.rows(); ++i) {
    ADS_ASSIGN_OR_RETURN(int64_t id, r.Int(i, 0));
    ADS_ASSIGN_OR_RETURN(int64_t campaign, r.Int(i, 1));
    ADS_ASSIGN_OR_RETURN(int64_t micros, r.Int(i, 2));
    auto it = std::find_if(takes.begin(), takes.end(),
                           [&](const Take& t) { return t.campaign == campaign; });
    if (it == takes.end()) it = takes.insert(takes.end(), Take{.campaign = campaign});
    it->micros += micros;
    it->rows.push_back(id);
  }
  Status refused;
  size_t delivered = 0;
  for (const Take& t : takes) {
    if (t.micros != 0) refused = apply(t.campaign, t.micros);
    if (!refused.ok()) break;
    std::string ids;
    for (int64_t id : t.rows) {
      ids += ids.empty() ? '{' : ',';
      ids += std::to_string(id);
    }
    ids += '}';
    ADS_RETURN_IF_ERROR(
        c.Exec("DELETE FROM budget_takes WHERE id = ANY($1::bigint[])", {Param(ids)}).status());
    delivered += t.rows.size();
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  if (!refused.ok()) return refused;
  return delivered;
}

Result<std::vector<CampaignCountersRecord>> PostgresStore::LoadCampaignCounters() {
  if (node_id_.empty()) {
    std::vector<CampaignCountersRecord> out;
    ADS_RETURN_IF_ERROR(runner_->Read([&](sql::Connection& c) -> Status {
      ADS_ASSIGN_OR_RETURN(out, sql::LoadCounters(c));
      return OkStatus();
    }));
    return out;
  }
  MutexLock lock(runner_->mu());
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       runner_->conn().Exec(std::string("SELECT ") + kCounterColumns +
                                                " FROM node_campaign_counters WHERE node_id = "
                                                "$1 ORDER BY campaign_id",
                                            {Param(std::string_view(node_id_))}));
  return CounterRows(r);
}

Result<std::vector<CampaignCountersRecord>> PostgresStore::LoadOtherNodesCounters(int64_t day,
                                                                                  int64_t hour) {
  if (node_id_.empty()) return std::vector<CampaignCountersRecord>{};
  MutexLock lock(runner_->mu());
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      runner_->conn().Exec(
          "SELECT campaign_id, sum(total_spend_micros)::bigint, sum(impressions)::bigint, "
          "sum(clicks)::bigint, sum(conversions)::bigint, $2::bigint, "
          "sum(CASE WHEN day = $2 THEN day_spend_micros ELSE 0 END)::bigint, $3::bigint, "
          "sum(CASE WHEN hour = $3 THEN hour_spend_micros ELSE 0 END)::bigint "
          "FROM node_campaign_counters WHERE node_id <> $1 "
          "GROUP BY campaign_id ORDER BY campaign_id",
          {Param(std::string_view(node_id_)), Param(day), Param(hour)}));
  return CounterRows(r);
}

Result<ErasureDigestKey> PostgresStore::DigestKey(const ErasureDigestKey& candidate) {
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
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
  MutexLock lock(runner_->mu());
  PgConnection& c = runner_->conn();
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
  MutexLock lock(runner_->mu());
  ADS_ASSIGN_OR_RETURN(PgResult result,
                       runner_->conn().Exec("SELECT seq, digest, erased_at FROM identity_erasures "
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
  MutexLock lock(runner_->mu());
  ADS_ASSIGN_OR_RETURN(
      PgResult result,
      runner_->conn().Exec("DELETE FROM identity_erasures WHERE erased_at < $1", {Param(cutoff)}));
  return result.Changed();
}

}  // namespace adserver::store
