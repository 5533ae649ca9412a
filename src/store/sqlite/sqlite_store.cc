#include "store/sqlite/sqlite_store.h"

#include <charconv>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/mutex.h"
#include "store/sql/detail/counters.h"
#include "store/sql/detail/row_helpers.h"
#include "store/sqlite/detail/pooled_runner.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sql_rows::ForEachRow;
using sql_rows::MissingReference;
using sqlite_detail::Connection;
using sqlite_detail::Statement;

Status Corrupt(std::string_view what, Id id) {
  return InternalError("corrupt " + std::string(what) + " in row " + std::to_string(id));
}

// ---- Activity.

constexpr const char* kActivityColumns =
    "SELECT wallet, project_id, chain_id, last_seen, count FROM activity";

Status ReadActivity(const Statement& s, ActivityRecord& r) {
  r.project_id = s.Int(1);
  if (!s.Blob(0, r.wallet.bytes.data(), r.wallet.bytes.size())) {
    return Corrupt("activity.wallet", r.project_id);
  }
  r.chain_id = s.Int(2);
  r.last_seen = s.Int(3);
  r.count = s.Int(4);
  return OkStatus();
}

}  // namespace

// ---- Lifecycle.

SqliteStore::SqliteStore(std::unique_ptr<sqlite_detail::PooledRunner> runner)
    : SqlInventory(*runner), runner_(std::move(runner)) {}

SqliteStore::~SqliteStore() = default;

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<sqlite_detail::PooledRunner> runner,
                       sqlite_detail::PooledRunner::Open(path, options));
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(runner)));
}

Result<uint64_t> SqliteStore::ActivityChangeCounter() {
  return runner_->ChangeVersion(sql::Runner::kActivity);
}

// ---- Decision counters (issue 4; no change counter is bumped).

Status SqliteStore::SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
  return runner_->Write(0, [&](sql::Connection& c) { return sql::SaveCounters(c, rows); });
}

Result<std::vector<CampaignCountersRecord>> SqliteStore::LoadCampaignCounters() {
  std::vector<CampaignCountersRecord> out;
  ADS_RETURN_IF_ERROR(runner_->Read([&](sql::Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(out, sql::LoadCounters(c));
    return OkStatus();
  }));
  return out;
}

Status SqliteStore::SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                           const std::optional<CounterMarks>& marks) {
  return runner_->Write(0, [&](sql::Connection& c) -> Status {
    ADS_RETURN_IF_ERROR(sql::SaveCounters(c, rows));
    if (!marks) {
      ADS_ASSIGN_OR_RETURN(sql::Statement clear, c.Prepare("DELETE FROM counter_marks"));
      return clear.Run();
    }
    ADS_ASSIGN_OR_RETURN(
        sql::Statement s,
        c.Prepare("INSERT INTO counter_marks (id, conversion_id, revert_seq) VALUES (1, ?1, ?2) "
                  "ON CONFLICT (id) DO UPDATE SET conversion_id = excluded.conversion_id, "
                  "revert_seq = excluded.revert_seq"));
    return s.Bind(1, marks->conversion_id).Bind(2, marks->revert_seq).Run();
  });
}

Result<std::optional<CounterMarks>> SqliteStore::LoadCounterMarks() {
  std::optional<CounterMarks> out;
  ADS_RETURN_IF_ERROR(runner_->Read([&](sql::Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(sql::Statement s,
                         c.Prepare("SELECT conversion_id, revert_seq FROM counter_marks"));
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) out = CounterMarks{.conversion_id = s.Int(0), .revert_seq = s.Int(1)};
    return OkStatus();
  }));
  return out;
}

// ---- Activity.

Status SqliteStore::RecordActivity(const std::vector<ActivityRecord>& rows) {
  if (rows.empty()) return OkStatus();
  return runner_->WriteNative(sql::Runner::kActivity, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare("INSERT INTO activity (wallet, project_id, chain_id, last_seen, count) "
                  "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (wallet, project_id, chain_id) "
                  "DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), "
                  "count = count + excluded.count"));
    for (const ActivityRecord& r : rows) {
      s.Reset();
      Status st = s.BindBlob(1, r.wallet.bytes.data(), r.wallet.bytes.size())
                      .Bind(2, r.project_id)
                      .Bind(3, r.chain_id)
                      .Bind(4, r.last_seen)
                      .Bind(5, r.count)
                      .Run();
      if (!st.ok()) return MissingReference(c, st, "projects", "project", r.project_id);
    }
    return OkStatus();
  });
}

Result<std::vector<ActivityRecord>> SqliteStore::ActivityForWallet(const Address& wallet) {
  std::vector<ActivityRecord> out;
  ADS_RETURN_IF_ERROR(runner_->ReadNative([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare(std::string(kActivityColumns) +
                                   " WHERE wallet = ?1 ORDER BY wallet, project_id, chain_id"));
    s.BindBlob(1, wallet.bytes.data(), wallet.bytes.size());
    return ForEachRow(s, [&] { return ReadActivity(s, out.emplace_back()); });
  }));
  return out;
}

Status SqliteStore::ScanActivity(const std::function<void(const ActivityRecord&)>& fn) {
  return runner_->ReadNative([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kActivityColumns) +
                                                " ORDER BY wallet, project_id, chain_id"));
    ActivityRecord r;
    return ForEachRow(s, [&]() -> Status {
      ADS_RETURN_IF_ERROR(ReadActivity(s, r));
      fn(r);
      return OkStatus();
    });
  });
}

}  // namespace adserver::store
