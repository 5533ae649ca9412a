#pragma once

// An LMDB environment as store/lmdb's adapters use it: the environment and its main database,
// the named databases this process opened in it (opened once, then shared by every role), and
// transactions that abort unless committed. Only this file's .cc and the roles' .cc files
// include <lmdb.h>.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "store/lmdb/detail/lmdb_handles.h"

namespace adserver::store::detail {

struct LmdbEnvOptions {
  uint64_t map_size_bytes = uint64_t{1} << 40;
  unsigned max_named_databases = 6;
  // Skip fsync at commit; a crash may lose the last commits.
  bool no_sync = false;
  // MDB_WRITEMAP: a commit changes the mapped pages in place instead of writing each dirty
  // page with writev (for writes that hit random pages).
  bool write_map = false;
};

// Unavailable: "lmdb <what>: <LMDB's message for rc>".
Status LmdbError(std::string_view what, int rc);

class LmdbEnv {
 public:
  // Opens (creating the directory and the environment) `dir`. Read transactions belong to
  // their owners, not to LMDB's thread slots (MDB_NOTLS); no read-ahead (random lookups).
  static Result<std::unique_ptr<LmdbEnv>> Open(const std::string& dir,
                                               const LmdbEnvOptions& options);
  ~LmdbEnv();
  LmdbEnv(const LmdbEnv&) = delete;
  LmdbEnv& operator=(const LmdbEnv&) = delete;

  MDB_env* env() const { return env_; }
  MDB_dbi main() const { return main_; }
  const std::string& dir() const { return dir_; }
  // The id of the last committed write transaction (any process). Cheap.
  uint64_t LastTxnId() const;

  // The handle of the named database `name`, opened in a transaction of its own the first
  // time (LMDB wants a transaction that opens a database to end before another opens one),
  // then kept. With `create` it is created if missing; without, nullopt if it does not exist
  // (another process may create it later: the next call looks again).
  Result<std::optional<MDB_dbi>> Named(std::string_view name, bool create);

 private:
  LmdbEnv(MDB_env* env, MDB_dbi main, std::string dir)
      : env_(env), main_(main), dir_(std::move(dir)) {}

  MDB_env* env_;
  MDB_dbi main_;
  std::string dir_;
  Mutex mu_;  // one mdb_dbi_open at a time in this process
  std::vector<std::pair<std::string, MDB_dbi>> named_ ADS_GUARDED_BY(mu_);
};

// A named database as a role keeps it: opened once through LmdbEnv::Named, then its handle is
// read without a lock, from any thread.
class NamedDb {
 public:
  NamedDb(LmdbEnv& env, const char* name) : env_(env), name_(name) {}
  // The handle, opening the database first if needed (creating it when `create`); nullopt if
  // it does not exist and `create` is false. With `create`, call it outside any write
  // transaction of this thread.
  Result<std::optional<MDB_dbi>> Open(bool create);
  // Opens it, creating it if missing; outside any write transaction of this thread (a role's
  // writer calls it before its first write transaction).
  Status Create() { return Open(/*create=*/true).status(); }
  // The handle once opened by any thread; nullopt before.
  std::optional<MDB_dbi> handle() const {
    if (!open_.load(std::memory_order_acquire)) return std::nullopt;
    return dbi_.load(std::memory_order_relaxed);
  }
  const char* name() const { return name_; }

 private:
  LmdbEnv& env_;
  const char* name_;
  std::atomic<MDB_dbi> dbi_{0};  // valid once open_ (every opener stores the same handle)
  std::atomic<bool> open_{false};
};

// A transaction that is aborted unless committed. A read-only one that opened a database keeps
// the handle for the environment only when committed.
class LmdbTxn {
 public:
  enum class Mode { kRead, kWrite };
  LmdbTxn(const LmdbEnv& env, Mode mode);
  ~LmdbTxn();
  LmdbTxn(const LmdbTxn&) = delete;
  LmdbTxn& operator=(const LmdbTxn&) = delete;

  // LMDB's result of beginning the transaction (0: begun).
  int rc() const { return rc_; }
  // rc() as a Status.
  Status status() const;
  MDB_txn* get() { return txn_; }
  // The transaction's id (LMDB's txnid: the last committed write, for a read transaction).
  uint64_t id() const;
  int Commit();

 private:
  MDB_txn* txn_ = nullptr;
  int rc_ = 0;
};

}  // namespace adserver::store::detail
