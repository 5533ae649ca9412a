#include "store/sqlite/sqlite_identity_store.h"

#include <algorithm>
#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

constexpr const char* kDeleteEmptyIdentities =
    "DELETE FROM identities WHERE NOT EXISTS "
    "(SELECT 1 FROM identity_wallets w WHERE w.identity_id = identities.id)";

// Reads the wallets of one identity, most recent first, leaving out links older than
// `min_last_seen`.
Status ReadWallets(Connection& c, IdentityRecord& record, int64_t min_last_seen) {
  ADS_ASSIGN_OR_RETURN(Statement stmt, c.Prepare("SELECT wallet, last_seen FROM identity_wallets "
                                                 "WHERE identity_id = ?1 AND last_seen >= ?2 "
                                                 "ORDER BY last_seen DESC"));
  stmt.BindBlob(1, record.key.data(), record.key.size()).Bind(2, min_last_seen);
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    IdentityWalletRecord w;
    if (!stmt.Blob(0, w.wallet.bytes.data(), w.wallet.bytes.size())) continue;
    w.last_seen = stmt.Int(1);
    record.wallets.push_back(w);
  }
  return OkStatus();
}

bool ReadHead(const Statement& stmt, IdentityRecord& record) {
  if (!stmt.Blob(0, record.key.data(), record.key.size())) return false;
  int64_t kind = stmt.Int(1);
  if (kind != 1 && kind != 2) return false;
  record.kind = static_cast<IdentityKind>(kind);
  record.last_seen = stmt.Int(2);
  return true;
}

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

Status SqliteIdentityStore::PutIdentities(const std::vector<IdentityRecord>& identities) {
  if (identities.empty()) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  for (const IdentityRecord& r : identities) {
    {
      ADS_ASSIGN_OR_RETURN(Statement up,
                           c.Prepare("INSERT INTO identities (id, kind, last_seen) "
                                     "VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET "
                                     "last_seen = excluded.last_seen"));
      ADS_RETURN_IF_ERROR(up.BindBlob(1, r.key.data(), r.key.size())
                              .Bind(2, int64_t{static_cast<uint8_t>(r.kind)})
                              .Bind(3, r.last_seen)
                              .Run());
    }
    {
      ADS_ASSIGN_OR_RETURN(Statement del,
                           c.Prepare("DELETE FROM identity_wallets WHERE identity_id = ?1"));
      ADS_RETURN_IF_ERROR(del.BindBlob(1, r.key.data(), r.key.size()).Run());
    }
    ADS_ASSIGN_OR_RETURN(Statement ins, c.Prepare("INSERT INTO identity_wallets "
                                                  "(identity_id, wallet, last_seen) "
                                                  "VALUES (?1, ?2, ?3)"));
    for (const IdentityWalletRecord& w : r.wallets) {
      ADS_RETURN_IF_ERROR(ins.BindBlob(1, r.key.data(), r.key.size())
                              .BindBlob(2, w.wallet.bytes.data(), w.wallet.bytes.size())
                              .Bind(3, w.last_seen)
                              .Run());
      ins.Reset();
    }
  }
  return txn.Commit();
}

Status SqliteIdentityStore::ScanIdentities(int64_t min_last_seen,
                                           const std::function<void(IdentityRecord&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  // One pass over the links joined with their identity, grouped by identity.
  ADS_ASSIGN_OR_RETURN(
      Statement stmt,
      c.Prepare("SELECT i.id, i.kind, i.last_seen, w.wallet, w.last_seen FROM identities i "
                "JOIN identity_wallets w ON w.identity_id = i.id "
                "WHERE i.last_seen >= ?1 AND w.last_seen >= ?1 "
                "ORDER BY i.id, w.last_seen DESC"));
  stmt.Bind(1, min_last_seen);
  IdentityRecord current;
  bool have = false;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    IdentityRecord head;
    if (!ReadHead(stmt, head)) continue;
    if (!have || head.key != current.key) {
      if (have) fn(std::move(current));
      current = std::move(head);
      have = true;
    }
    IdentityWalletRecord w;
    if (!stmt.Blob(3, w.wallet.bytes.data(), w.wallet.bytes.size())) continue;
    w.last_seen = stmt.Int(4);
    current.wallets.push_back(w);
  }
  if (have) fn(std::move(current));
  return txn.Commit();
}

Result<std::vector<IdentityRecord>> SqliteIdentityStore::IdentitiesForWallet(
    const Address& wallet) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kRead));
  std::vector<IdentityRecord> out;
  {
    ADS_ASSIGN_OR_RETURN(Statement stmt,
                         c.Prepare("SELECT i.id, i.kind, i.last_seen FROM identities i "
                                   "JOIN identity_wallets w ON w.identity_id = i.id "
                                   "WHERE w.wallet = ?1 ORDER BY i.last_seen DESC"));
    stmt.BindBlob(1, wallet.bytes.data(), wallet.bytes.size());
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      IdentityRecord r;
      if (ReadHead(stmt, r)) out.push_back(std::move(r));
    }
  }
  for (IdentityRecord& r : out) ADS_RETURN_IF_ERROR(ReadWallets(c, r, INT64_MIN));
  ADS_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<int64_t> SqliteIdentityStore::EraseWallet(const Address& wallet) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(Statement del,
                         c.Prepare("DELETE FROM identity_wallets WHERE wallet = ?1"));
    ADS_RETURN_IF_ERROR(del.BindBlob(1, wallet.bytes.data(), wallet.bytes.size()).Run());
  }
  int64_t removed = sqlite3_changes(c.db());
  if (removed > 0) ADS_RETURN_IF_ERROR(c.Exec(kDeleteEmptyIdentities));
  ADS_RETURN_IF_ERROR(txn.Commit());
  return removed;
}

Result<int64_t> SqliteIdentityStore::DeleteIdentitiesBefore(int64_t cutoff) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(Statement del,
                         c.Prepare("DELETE FROM identity_wallets WHERE last_seen < ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, cutoff).Run());
  }
  int64_t deleted = 0;
  {
    ADS_ASSIGN_OR_RETURN(Statement del, c.Prepare("DELETE FROM identities WHERE last_seen < ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, cutoff).Run());
    deleted = sqlite3_changes(c.db());
  }
  ADS_RETURN_IF_ERROR(c.Exec(kDeleteEmptyIdentities));
  deleted += sqlite3_changes(c.db());
  ADS_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

}  // namespace adserver::store
