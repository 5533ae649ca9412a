#include "store/sqlite/sqlite_store.h"

#include <charconv>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/mutex.h"
#include "store/sql/detail/counters.h"
#include "store/sql/detail/row_helpers.h"
#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sql_rows::ForEachRow;
using sql_rows::MissingReference;
using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

Status Corrupt(std::string_view what, Id id) {
  return InternalError("corrupt " + std::string(what) + " in row " + std::to_string(id));
}

Status BumpCounter(Connection& c, const char* key) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("UPDATE meta SET value = value + 1 WHERE key = ?1"));
  return s.Bind(1, std::string_view(key)).Run();
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

Status EnableWal(Connection& c) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("PRAGMA journal_mode=WAL"));
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  std::string mode = row ? s.Text(0) : "";
  if (mode != "wal") return InternalError("cannot enable WAL mode (journal_mode=" + mode + ")");
  return OkStatus();
}

}  // namespace

// ---- Lifecycle and transactions.

SqliteStore::SqliteStore(std::string path, const SqliteOptions& options,
                         std::unique_ptr<Connection> writer)
    : path_(std::move(path)),
      options_(options),
      shared_connection_(path_.empty() || path_ == ":memory:"),
      writer_(std::move(writer)),
      runner_(*this),
      inventory_(runner_) {}

SqliteStore::~SqliteStore() = default;

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> writer,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  if (!path.empty() && path != ":memory:") ADS_RETURN_IF_ERROR(EnableWal(*writer));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*writer));
  return std::unique_ptr<SqliteStore>(new SqliteStore(path, options, std::move(writer)));
}

Status SqliteStore::Write(unsigned bump, const std::function<Status(Connection&)>& fn) {
  MutexLock lock(mu_);
  Connection& c = *writer_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  ADS_RETURN_IF_ERROR(fn(c));
  if (bump & kCatalog) ADS_RETURN_IF_ERROR(BumpCounter(c, "catalog_version"));
  if (bump & kActivity) ADS_RETURN_IF_ERROR(BumpCounter(c, "activity_version"));
  return txn.Commit();
}

Status SqliteStore::SqlRunner::Write(unsigned bump,
                                     const std::function<Status(sql::Connection&)>& fn) {
  return store_.Write(bump, [&](Connection& c) {
    sqlite_detail::SqlConnection conn(c);
    return fn(conn);
  });
}

Status SqliteStore::SqlRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  return store_.Read([&](Connection& c) {
    sqlite_detail::SqlConnection conn(c);
    return fn(conn);
  });
}

namespace {
Status RunInReadTransaction(Connection& c, const std::function<Status(Connection&)>& fn) {
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  ADS_RETURN_IF_ERROR(fn(c));
  return txn.Commit();
}
}  // namespace

Status SqliteStore::Read(const std::function<Status(Connection&)>& fn) {
  if (shared_connection_) {
    MutexLock lock(mu_);
    return RunInReadTransaction(*writer_, fn);
  }
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> reader, AcquireReader());
  Status s = RunInReadTransaction(*reader, fn);
  // A connection that failed at the I/O level is dropped rather than reused.
  if (s.code() != Code::kUnavailable) ReleaseReader(std::move(reader));
  return s;
}

Result<std::unique_ptr<Connection>> SqliteStore::AcquireReader() {
  {
    MutexLock lock(readers_mu_);
    if (!idle_readers_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return conn;
    }
  }
  ADS_ASSIGN_OR_RETURN(
      std::unique_ptr<Connection> conn,
      Connection::Open(path_, /*create=*/false, options_.busy_timeout, options_.cache_size_kib));
  ADS_RETURN_IF_ERROR(conn->Exec("PRAGMA query_only=ON"));
  return conn;
}

void SqliteStore::ReleaseReader(std::unique_ptr<Connection> conn) {
  MutexLock lock(readers_mu_);
  if (static_cast<int>(idle_readers_.size()) < options_.max_idle_read_connections) {
    idle_readers_.push_back(std::move(conn));
  }
}

Result<uint64_t> SqliteStore::ReadCounter(const char* key) {
  uint64_t value = 0;
  ADS_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT value FROM meta WHERE key = ?1"));
    ADS_ASSIGN_OR_RETURN(bool row, s.Bind(1, std::string_view(key)).Step());
    if (!row) return InternalError(std::string("meta counter '") + key + "' is missing");
    value = static_cast<uint64_t>(s.Int(0));
    return OkStatus();
  }));
  return value;
}

Result<uint64_t> SqliteStore::ChangeCounter() { return ReadCounter("catalog_version"); }
Result<uint64_t> SqliteStore::ActivityChangeCounter() { return ReadCounter("activity_version"); }

// ---- Decision counters (issue 4; no change counter is bumped).

Status SqliteStore::SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
  return runner_.Write(0, [&](sql::Connection& c) { return sql::SaveCounters(c, rows); });
}

Result<std::vector<CampaignCountersRecord>> SqliteStore::LoadCampaignCounters() {
  std::vector<CampaignCountersRecord> out;
  ADS_RETURN_IF_ERROR(runner_.Read([&](sql::Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(out, sql::LoadCounters(c));
    return OkStatus();
  }));
  return out;
}

Status SqliteStore::SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                           const std::optional<CounterMarks>& marks) {
  return runner_.Write(0, [&](sql::Connection& c) -> Status {
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
  ADS_RETURN_IF_ERROR(runner_.Read([&](sql::Connection& c) -> Status {
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
  return Write(kActivity, [&](Connection& c) -> Status {
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
  ADS_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare(std::string(kActivityColumns) +
                                   " WHERE wallet = ?1 ORDER BY wallet, project_id, chain_id"));
    s.BindBlob(1, wallet.bytes.data(), wallet.bytes.size());
    return ForEachRow(s, [&] { return ReadActivity(s, out.emplace_back()); });
  }));
  return out;
}

Status SqliteStore::ScanActivity(const std::function<void(const ActivityRecord&)>& fn) {
  return Read([&](Connection& c) -> Status {
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

// ---- Catalog.

}  // namespace adserver::store
