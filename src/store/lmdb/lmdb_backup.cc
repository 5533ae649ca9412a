#include "store/lmdb/lmdb_backup.h"

#include <lmdb.h>

#include <filesystem>
#include <system_error>

namespace adserver::store {
namespace {

// Named databases an environment of ours may hold (the activity index has the most).
constexpr unsigned kMaxDbs = 16;

Status LmdbStatus(int rc, const std::string& what) {
  return UnavailableError(what + ": " + mdb_strerror(rc));
}

// An environment opened read-only, closed on scope exit.
class ReadOnlyEnv {
 public:
  Status Open(const std::string& dir) {
    int rc = mdb_env_create(&env_);
    if (rc != 0) return LmdbStatus(rc, "lmdb " + dir);
    mdb_env_set_maxdbs(env_, kMaxDbs);
    // Map size 0: the size the environment was written with.
    rc = mdb_env_open(env_, dir.c_str(), MDB_RDONLY | MDB_NOTLS, 0644);
    if (rc != 0) return LmdbStatus(rc, "cannot open " + dir);
    return OkStatus();
  }
  ~ReadOnlyEnv() {
    if (env_ != nullptr) mdb_env_close(env_);
  }
  MDB_env* get() const { return env_; }

 private:
  MDB_env* env_ = nullptr;
};

}  // namespace

Result<int64_t> BackupLmdbEnvironment(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(to) / "data.mdb", ec)) {
    return InvalidArgumentError(to + " already holds an environment");
  }
  std::filesystem::create_directories(to, ec);
  if (ec) return UnavailableError("cannot create " + to + ": " + ec.message());
  ReadOnlyEnv env;
  ADS_RETURN_IF_ERROR(env.Open(from));
  int rc = mdb_env_copy2(env.get(), to.c_str(), MDB_CP_COMPACT);
  if (rc != 0) return LmdbStatus(rc, "cannot copy " + from);
  ADS_RETURN_IF_ERROR(CheckLmdbEnvironment(to));
  auto size = std::filesystem::file_size(std::filesystem::path(to) / "data.mdb", ec);
  if (ec) return UnavailableError("cannot stat the copy of " + from + ": " + ec.message());
  return static_cast<int64_t>(size);
}

Status CheckLmdbEnvironment(const std::string& dir) {
  ReadOnlyEnv env;
  ADS_RETURN_IF_ERROR(env.Open(dir));
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env.get(), nullptr, MDB_RDONLY, &txn);
  if (rc != 0) return LmdbStatus(rc, "cannot read " + dir);
  MDB_dbi dbi;
  rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  MDB_stat stat;
  if (rc == 0) rc = mdb_stat(txn, dbi, &stat);
  mdb_txn_abort(txn);
  if (rc != 0) return LmdbStatus(rc, "cannot read " + dir);
  return OkStatus();
}

}  // namespace adserver::store
