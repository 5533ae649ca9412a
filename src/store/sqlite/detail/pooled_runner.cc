#include "store/sqlite/detail/pooled_runner.h"

#include <string_view>
#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_sql.h"

namespace adserver::store::sqlite_detail {
namespace {

Status BumpVersion(Connection& c, const char* key) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("UPDATE meta SET value = value + 1 WHERE key = ?1"));
  return s.Bind(1, std::string_view(key)).Run();
}

Status EnableWal(Connection& c) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("PRAGMA journal_mode=WAL"));
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  std::string mode = row ? s.Text(0) : "";
  if (mode != "wal") return InternalError("cannot enable WAL mode (journal_mode=" + mode + ")");
  return OkStatus();
}

Status RunInReadTransaction(Connection& c, const std::function<Status(Connection&)>& fn) {
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  ADS_RETURN_IF_ERROR(fn(c));
  return txn.Commit();
}

}  // namespace

PooledRunner::PooledRunner(std::string path, const SqliteOptions& options,
                           std::unique_ptr<Connection> writer)
    : path_(std::move(path)),
      options_(options),
      shared_connection_(path_.empty() || path_ == ":memory:"),
      writer_(std::move(writer)) {}

Result<std::unique_ptr<PooledRunner>> PooledRunner::Open(const std::string& path,
                                                         const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> writer,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  if (!path.empty() && path != ":memory:") ADS_RETURN_IF_ERROR(EnableWal(*writer));
  ADS_RETURN_IF_ERROR(ApplyMigrations(*writer));
  return std::unique_ptr<PooledRunner>(new PooledRunner(path, options, std::move(writer)));
}

Status PooledRunner::WriteNative(unsigned bump, const std::function<Status(Connection&)>& fn) {
  MutexLock lock(mu_);
  Connection& c = *writer_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  ADS_RETURN_IF_ERROR(fn(c));
  if (bump & kCatalog) ADS_RETURN_IF_ERROR(BumpVersion(c, "catalog_version"));
  if (bump & kActivity) ADS_RETURN_IF_ERROR(BumpVersion(c, "activity_version"));
  return txn.Commit();
}

Status PooledRunner::ReadNative(const std::function<Status(Connection&)>& fn) {
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

Status PooledRunner::Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) {
  return WriteNative(bump, [&](Connection& c) {
    SqlConnection conn(c);
    return fn(conn);
  });
}

Status PooledRunner::Read(const std::function<Status(sql::Connection&)>& fn) {
  return ReadNative([&](Connection& c) {
    SqlConnection conn(c);
    return fn(conn);
  });
}

Result<uint64_t> PooledRunner::ChangeVersion(Bump which) {
  const char* key = which == kCatalog ? "catalog_version" : "activity_version";
  uint64_t value = 0;
  ADS_RETURN_IF_ERROR(ReadNative([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT value FROM meta WHERE key = ?1"));
    ADS_ASSIGN_OR_RETURN(bool row, s.Bind(1, std::string_view(key)).Step());
    if (!row) return InternalError(std::string("meta counter '") + key + "' is missing");
    value = static_cast<uint64_t>(s.Int(0));
    return OkStatus();
  }));
  return value;
}

Result<std::unique_ptr<Connection>> PooledRunner::AcquireReader() {
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

void PooledRunner::ReleaseReader(std::unique_ptr<Connection> conn) {
  MutexLock lock(readers_mu_);
  if (static_cast<int>(idle_readers_.size()) < options_.max_idle_read_connections) {
    idle_readers_.push_back(std::move(conn));
  }
}

}  // namespace adserver::store::sqlite_detail
