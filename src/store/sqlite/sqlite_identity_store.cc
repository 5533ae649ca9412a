#include "store/sqlite/sqlite_identity_store.h"

#include <utility>

#include "common/mutex.h"
#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

constexpr std::string_view kDigestKeyName = "digest_key";

}  // namespace

SqliteIdentityStore::SqliteIdentityStore(std::unique_ptr<Connection> conn)
    : conn_(std::move(conn)) {}

SqliteIdentityStore::~SqliteIdentityStore() = default;

Result<std::unique_ptr<SqliteIdentityStore>> SqliteIdentityStore::Open(
    const std::string& path, const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteIdentityStore>(new SqliteIdentityStore(std::move(conn)));
}

Result<ErasureDigestKey> SqliteIdentityStore::DigestKey(const ErasureDigestKey& candidate) {
  MutexLock lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(
        Statement ins,
        c.Prepare("INSERT OR IGNORE INTO identity_meta (name, value) VALUES (?1, ?2)"));
    ADS_RETURN_IF_ERROR(
        ins.Bind(1, kDigestKeyName).BindBlob(2, candidate.data(), candidate.size()).Run());
  }
  ErasureDigestKey key{};
  {
    ADS_ASSIGN_OR_RETURN(Statement sel,
                         c.Prepare("SELECT value FROM identity_meta WHERE name = ?1"));
    sel.Bind(1, kDigestKeyName);
    ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
    if (!row || !sel.Blob(0, key.data(), key.size())) {
      return InternalError("identity_meta.digest_key is missing or not 16 bytes");
    }
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return key;
}

Result<ErasureRecord> SqliteIdentityStore::PutErasure(uint64_t digest, int64_t erased_at) {
  MutexLock lock(mu_);
  Connection& c = *conn_;
  // REPLACE deletes the older row of the digest and inserts a new one, so a repeated erasure
  // gets a new (larger) seq that every syncing process sees.
  ADS_ASSIGN_OR_RETURN(Statement ins,
                       c.Prepare("INSERT OR REPLACE INTO identity_erasures (digest, erased_at) "
                                 "VALUES (?1, ?2)"));
  ADS_RETURN_IF_ERROR(ins.Bind(1, static_cast<int64_t>(digest)).Bind(2, erased_at).Run());
  return ErasureRecord{.digest = digest, .erased_at = erased_at, .seq = c.LastInsertId()};
}

Status SqliteIdentityStore::ScanErasures(int64_t after_seq,
                                         const std::function<void(const ErasureRecord&)>& fn) {
  MutexLock lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  {
    ADS_ASSIGN_OR_RETURN(Statement stmt,
                         c.Prepare("SELECT seq, digest, erased_at FROM identity_erasures "
                                   "WHERE seq > ?1 ORDER BY seq"));
    stmt.Bind(1, after_seq);
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      fn(ErasureRecord{.digest = static_cast<uint64_t>(stmt.Int(1)),
                       .erased_at = stmt.Int(2),
                       .seq = stmt.Int(0)});
    }
  }
  return txn.Commit();
}

Result<int64_t> SqliteIdentityStore::DeleteErasuresBefore(int64_t cutoff) {
  MutexLock lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Statement del,
                       c.Prepare("DELETE FROM identity_erasures WHERE erased_at < ?1"));
  ADS_RETURN_IF_ERROR(del.Bind(1, cutoff).Run());
  return c.Changes();
}

}  // namespace adserver::store
