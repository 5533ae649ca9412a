#include "store/lmdb/detail/lmdb_env.h"

#include <lmdb.h>

#include <filesystem>
#include <system_error>

namespace adserver::store::detail {

Status LmdbError(std::string_view what, int rc) {
  return UnavailableError("lmdb " + std::string(what) + ": " + mdb_strerror(rc));
}

Result<std::unique_ptr<LmdbEnv>> LmdbEnv::Open(const std::string& dir,
                                               const LmdbEnvOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError("cannot create " + dir + ": " + ec.message());
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return LmdbError("env_create", rc);
  mdb_env_set_mapsize(env, options.map_size_bytes);
  mdb_env_set_maxreaders(env, 1024);
  mdb_env_set_maxdbs(env, options.max_named_databases);
  // NOTLS: read transactions belong to their owners (per-thread readers), not to LMDB's thread
  // slots. NORDAHEAD: random point lookups; read-ahead would only evict useful pages.
  unsigned flags = MDB_NOTLS | MDB_NORDAHEAD | (options.no_sync ? MDB_NOSYNC : 0u) |
                   (options.write_map ? MDB_WRITEMAP : 0u) |
                   (options.write_map && options.no_sync ? MDB_MAPASYNC : 0u);
  rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  MDB_txn* txn = nullptr;
  MDB_dbi main = 0;
  if (rc == 0) rc = mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &main);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  if (rc != 0) {
    mdb_env_close(env);
    return LmdbError("open " + dir, rc);
  }
  return std::unique_ptr<LmdbEnv>(new LmdbEnv(env, main, dir));
}

LmdbEnv::~LmdbEnv() { mdb_env_close(env_); }

uint64_t LmdbEnv::LastTxnId() const {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  return info.me_last_txnid;
}

Result<std::optional<MDB_dbi>> LmdbEnv::Named(std::string_view name, bool create) {
  MutexLock lock(mu_);
  for (const auto& [n, dbi] : named_) {
    if (n == name) return std::optional<MDB_dbi>(dbi);
  }
  const std::string key(name);
  LmdbTxn txn(*this, create ? LmdbTxn::Mode::kWrite : LmdbTxn::Mode::kRead);
  ADS_RETURN_IF_ERROR(txn.status());
  MDB_dbi dbi = 0;
  int rc = mdb_dbi_open(txn.get(), key.c_str(), create ? MDB_CREATE : 0, &dbi);
  if (rc == MDB_NOTFOUND && !create) return std::optional<MDB_dbi>();
  if (rc != 0) return LmdbError("open " + key, rc);
  if (rc = txn.Commit(); rc != 0) return LmdbError("commit " + key, rc);
  named_.emplace_back(key, dbi);
  return std::optional<MDB_dbi>(dbi);
}

Result<std::optional<MDB_dbi>> NamedDb::Open(bool create) {
  if (std::optional<MDB_dbi> open = handle()) return open;
  ADS_ASSIGN_OR_RETURN(std::optional<MDB_dbi> dbi, env_.Named(name_, create));
  if (dbi) {
    dbi_.store(*dbi, std::memory_order_relaxed);
    open_.store(true, std::memory_order_release);
  }
  return dbi;
}

LmdbTxn::LmdbTxn(const LmdbEnv& env, Mode mode) {
  rc_ = mdb_txn_begin(env.env(), nullptr, mode == Mode::kRead ? MDB_RDONLY : 0, &txn_);
  if (rc_ != 0) txn_ = nullptr;
}

LmdbTxn::~LmdbTxn() {
  if (txn_ != nullptr) mdb_txn_abort(txn_);
}

Status LmdbTxn::status() const { return rc_ == 0 ? OkStatus() : LmdbError("begin", rc_); }

uint64_t LmdbTxn::id() const { return mdb_txn_id(txn_); }

int LmdbTxn::Commit() {
  int rc = mdb_txn_commit(txn_);
  txn_ = nullptr;
  return rc;
}

}  // namespace adserver::store::detail
