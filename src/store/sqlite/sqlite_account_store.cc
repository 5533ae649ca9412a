#include "store/sqlite/sqlite_account_store.h"

#include <utility>

#include "store/sqlite/detail/migrations.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {
namespace {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

constexpr const char* kUserColumns =
    "SELECT id, email, password_hash, role, publisher_id, community_id, created_at, updated_at "
    "FROM users";
constexpr const char* kTokenColumns =
    "SELECT id, user_id, hash, prefix, created_at, revoked_at FROM user_tokens";

Result<UserRecord> ReadUser(const Statement& s) {
  UserRecord u;
  u.id = s.Int(0);
  u.email = s.Text(1);
  u.password_hash = s.Text(2);
  std::optional<Role> role = ParseRole(s.Text(3));
  if (!role) return InternalError("corrupt users.role in row " + std::to_string(u.id));
  u.role = *role;
  u.publisher_id = s.OptInt(4);
  u.community_id = s.OptInt(5);
  u.created_at = s.Int(6);
  u.updated_at = s.Int(7);
  return u;
}

Result<UserTokenRecord> ReadToken(const Statement& s) {
  UserTokenRecord t;
  t.id = s.Int(0);
  t.user_id = s.Int(1);
  if (!s.Blob(2, t.hash.data(), t.hash.size())) {
    return InternalError("corrupt user_tokens.hash in row " + std::to_string(t.id));
  }
  t.prefix = s.Text(3);
  t.created_at = s.Int(4);
  t.revoked_at = s.OptInt(5);
  return t;
}

template <typename R, typename Read>
Result<std::vector<R>> ReadAll(Statement& s, Read read) {
  std::vector<R> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    ADS_ASSIGN_OR_RETURN(R r, read(s));
    out.push_back(std::move(r));
  }
}

template <typename R>
Result<R> First(Result<std::vector<R>> rows, std::string what) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFoundError(std::move(what) + " not found");
  return std::move(rows->front());
}

// Names the cause of a Conflict on users: a taken email, else a missing publisher/community.
Status UserConflict(Status s) {
  if (s.code() != Code::kConflict) return s;
  if (s.message().find("UNIQUE") != std::string::npos) {
    return ConflictError("a user with this email already exists");
  }
  return ConflictError("the user's publisher or community does not exist");
}

void BindUser(Statement& s, const UserRecord& u, int64_t now) {
  s.Bind(2, u.email)
      .Bind(3, EmailKey(u.email))
      .Bind(4, u.password_hash)
      .Bind(5, RoleName(u.role))
      .Bind(6, u.publisher_id)
      .Bind(7, u.community_id)
      .Bind(8, now);
}

}  // namespace

SqliteAccountStore::SqliteAccountStore(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}

SqliteAccountStore::~SqliteAccountStore() = default;

Result<std::unique_ptr<SqliteAccountStore>> SqliteAccountStore::Open(const std::string& path,
                                                                     const SqliteOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, options.create_if_missing, options.busy_timeout,
                                        options.cache_size_kib));
  ADS_RETURN_IF_ERROR(sqlite_detail::ApplyMigrations(*conn));
  return std::unique_ptr<SqliteAccountStore>(new SqliteAccountStore(std::move(conn)));
}

Result<UserRecord> SqliteAccountStore::CreateUser(const UserRecord& user, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare("INSERT INTO users (email, email_key, password_hash, role, publisher_id, "
                  "community_id, created_at, updated_at) VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)"));
    BindUser(s, user, now);
    ADS_RETURN_IF_ERROR(UserConflict(s.Run()));
  }
  Id id = c.LastInsertId();
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kUserColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserRecord>(s, ReadUser), "user " + std::to_string(id));
}

Result<UserRecord> SqliteAccountStore::GetUser(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kUserColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserRecord>(s, ReadUser), "user " + std::to_string(id));
}

Result<UserRecord> SqliteAccountStore::GetUserByEmail(std::string_view email) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare(std::string(kUserColumns) + " WHERE email_key = ?1"));
  s.Bind(1, EmailKey(email));
  return First(ReadAll<UserRecord>(s, ReadUser), "user");
}

Result<std::vector<UserRecord>> SqliteAccountStore::ListUsers() {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kUserColumns) + " ORDER BY id"));
  return ReadAll<UserRecord>(s, ReadUser);
}

Result<UserRecord> SqliteAccountStore::UpdateUser(const UserRecord& user, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare("UPDATE users SET email = ?2, email_key = ?3, password_hash = ?4, role = ?5, "
                  "publisher_id = ?6, community_id = ?7, updated_at = ?8 WHERE id = ?1"));
    s.Bind(1, user.id);
    BindUser(s, user, now);
    ADS_RETURN_IF_ERROR(UserConflict(s.Run()));
    if (c.Changes() == 0) return NotFoundError("user " + std::to_string(user.id) + " not found");
  }
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kUserColumns) + " WHERE id = ?1"));
  s.Bind(1, user.id);
  return First(ReadAll<UserRecord>(s, ReadUser), "user " + std::to_string(user.id));
}

Status SqliteAccountStore::DeleteUser(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("DELETE FROM users WHERE id = ?1"));
  ADS_RETURN_IF_ERROR(s.Bind(1, id).Run());
  if (conn_->Changes() == 0) return NotFoundError("user " + std::to_string(id) + " not found");
  return OkStatus();
}

Result<bool> SqliteAccountStore::HasUsers() {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT EXISTS (SELECT 1 FROM users)"));
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  return row && s.Int(0) != 0;
}

Result<UserTokenRecord> SqliteAccountStore::CreateToken(const UserTokenRecord& token, int64_t now,
                                                        int max_active) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT COUNT(*) FROM user_tokens WHERE "
                                                "user_id = ?1 AND revoked_at IS NULL"));
    s.Bind(1, token.user_id);
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row && s.Int(0) >= max_active) {
      return ConflictError("already has " + std::to_string(s.Int(0)) +
                           " active tokens, the most allowed: revoke one first");
    }
  }
  {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare("INSERT INTO user_tokens (user_id, hash, prefix, created_at) "
                                   "VALUES (?1, ?2, ?3, ?4)"));
    s.Bind(1, token.user_id)
        .BindBlob(2, token.hash.data(), token.hash.size())
        .Bind(3, token.prefix)
        .Bind(4, now);
    ADS_RETURN_IF_ERROR(s.Run());
  }
  Id id = c.LastInsertId();
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kTokenColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  Result<UserTokenRecord> created =
      First(ReadAll<UserTokenRecord>(s, ReadToken), "token " + std::to_string(id));
  if (!created.ok()) return created.status();
  ADS_RETURN_IF_ERROR(txn.Commit());
  return created;
}

Result<std::vector<UserTokenRecord>> SqliteAccountStore::FindTokensByPrefix(
    std::string_view prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kTokenColumns) +
                                                   " WHERE prefix = ?1 AND revoked_at IS NULL"));
  s.Bind(1, prefix);
  return ReadAll<UserTokenRecord>(s, ReadToken);
}

Result<std::vector<UserTokenRecord>> SqliteAccountStore::ListTokens(std::optional<Id> user_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kTokenColumns) +
                                                   (user_id ? " WHERE user_id = ?1 ORDER BY id DESC"
                                                            : " ORDER BY id DESC")));
  if (user_id) s.Bind(1, *user_id);
  return ReadAll<UserTokenRecord>(s, ReadToken);
}

Result<UserTokenRecord> SqliteAccountStore::GetToken(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kTokenColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserTokenRecord>(s, ReadToken), "token " + std::to_string(id));
}

Result<UserTokenRecord> SqliteAccountStore::RevokeToken(Id id, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("UPDATE user_tokens SET revoked_at = ?2 "
                                                "WHERE id = ?1 AND revoked_at IS NULL"));
    ADS_RETURN_IF_ERROR(s.Bind(1, id).Bind(2, now).Run());
  }
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kTokenColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserTokenRecord>(s, ReadToken), "token " + std::to_string(id));
}

Status SqliteAccountStore::CreateSession(const SessionRecord& session, int max_per_user) {
  std::lock_guard<std::mutex> lock(mu_);
  Connection& c = *conn_;
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c, Transaction::Kind::kWrite));
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare("INSERT INTO console_sessions (id_hash, user_id, csrf_token, created_at, "
                  "last_seen_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    ADS_RETURN_IF_ERROR(s.BindBlob(1, session.id_hash.data(), session.id_hash.size())
                            .Bind(2, session.user_id)
                            .Bind(3, session.csrf_token)
                            .Bind(4, session.created_at)
                            .Bind(5, session.last_seen_at)
                            .Bind(6, session.expires_at)
                            .Run());
  }
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s, c.Prepare("DELETE FROM console_sessions WHERE user_id = ?1 AND id_hash NOT IN "
                               "(SELECT id_hash FROM console_sessions WHERE user_id = ?1 "
                               "ORDER BY created_at DESC, last_seen_at DESC LIMIT ?2)"));
    ADS_RETURN_IF_ERROR(s.Bind(1, session.user_id).Bind(2, int64_t{max_per_user}).Run());
  }
  return txn.Commit();
}

Result<SessionRecord> SqliteAccountStore::GetSession(const Sha256Digest& id_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("SELECT user_id, csrf_token, created_at, last_seen_at, "
                                      "expires_at FROM console_sessions WHERE id_hash = ?1"));
  s.BindBlob(1, id_hash.data(), id_hash.size());
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFoundError("session not found");
  return SessionRecord{.id_hash = id_hash,
                       .user_id = s.Int(0),
                       .csrf_token = s.Text(1),
                       .created_at = s.Int(2),
                       .last_seen_at = s.Int(3),
                       .expires_at = s.Int(4)};
}

Status SqliteAccountStore::TouchSession(const Sha256Digest& id_hash, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("UPDATE console_sessions SET last_seen_at = ?2 WHERE id_hash = ?1"));
  return s.BindBlob(1, id_hash.data(), id_hash.size()).Bind(2, now).Run();
}

Status SqliteAccountStore::DeleteSession(const Sha256Digest& id_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("DELETE FROM console_sessions WHERE id_hash = ?1"));
  return s.BindBlob(1, id_hash.data(), id_hash.size()).Run();
}

Result<int64_t> SqliteAccountStore::DeleteUserSessions(Id user_id,
                                                       std::optional<Sha256Digest> keep) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("DELETE FROM console_sessions WHERE user_id = ?1 AND "
                                      "(?2 IS NULL OR id_hash <> ?2)"));
  s.Bind(1, user_id);
  if (keep) {
    s.BindBlob(2, keep->data(), keep->size());
  } else {
    s.BindNull(2);
  }
  ADS_RETURN_IF_ERROR(s.Run());
  return conn_->Changes();
}

Result<int64_t> SqliteAccountStore::DeleteExpiredSessions(int64_t now, int64_t idle_before) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("DELETE FROM console_sessions WHERE expires_at <= ?1 OR "
                                      "last_seen_at < ?2"));
  ADS_RETURN_IF_ERROR(s.Bind(1, now).Bind(2, idle_before).Run());
  return conn_->Changes();
}

}  // namespace adserver::store
