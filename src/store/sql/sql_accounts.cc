#include "store/sql/sql_accounts.h"

#include <string>
#include <utility>

#include "store/sql/detail/transact.h"

namespace adserver::store::sql {
namespace {

constexpr const char* kUserColumns =
    "SELECT id, email, password_hash, role, publisher_id, community_id, created_at, updated_at "
    "FROM users";
constexpr const char* kTokenColumns =
    "SELECT id, user_id, hash, prefix, created_at, revoked_at, expires_at FROM user_tokens";

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
  t.expires_at = s.OptInt(6);
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

Result<UserRecord> LoadUser(Connection& c, Id id) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kUserColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserRecord>(s, ReadUser), "user " + std::to_string(id));
}

Result<UserTokenRecord> LoadToken(Connection& c, Id id) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kTokenColumns) + " WHERE id = ?1"));
  s.Bind(1, id);
  return First(ReadAll<UserTokenRecord>(s, ReadToken), "token " + std::to_string(id));
}

// Names the cause of a Conflict on users: a taken email (another user's), else a missing
// publisher or community. Asked of the database, not read from an engine's message.
Status UserConflict(Connection& c, Status s, const UserRecord& u) {
  if (s.code() != Code::kConflict) return s;
  ADS_ASSIGN_OR_RETURN(Statement taken,
                       c.Prepare("SELECT 1 FROM users WHERE email_key = ?1 AND id <> ?2"));
  ADS_ASSIGN_OR_RETURN(bool row, taken.Bind(1, EmailKey(u.email)).Bind(2, u.id).Step());
  if (row) return ConflictError("a user with this email already exists");
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

Result<UserRecord> SqlAccounts::CreateUser(const UserRecord& user, int64_t now) {
  return Transact<UserRecord>(runner_, true, [&](Connection& c) -> Result<UserRecord> {
    Result<Id> id = InternalError("not inserted");
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("INSERT INTO users (email, email_key, password_hash, role, publisher_id, "
                    "community_id, created_at, updated_at) "
                    "VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) RETURNING id"));
      BindUser(s, user, now);
      Result<bool> row = s.Step();
      if (!row.ok()) {
        id = row.status();
      } else if (*row) {
        id = s.Int(0);
      }
    }
    UserRecord other = user;
    other.id = 0;
    ADS_RETURN_IF_ERROR(UserConflict(c, id.status(), other));
    return LoadUser(c, *id);
  });
}

Result<UserRecord> SqlAccounts::GetUser(Id id) {
  return Transact<UserRecord>(runner_, false, [&](Connection& c) { return LoadUser(c, id); });
}

Result<UserRecord> SqlAccounts::GetUserByEmail(std::string_view email) {
  return Transact<UserRecord>(runner_, false, [&](Connection& c) -> Result<UserRecord> {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare(std::string(kUserColumns) + " WHERE email_key = ?1"));
    s.Bind(1, EmailKey(email));
    return First(ReadAll<UserRecord>(s, ReadUser), "user");
  });
}

Result<std::vector<UserRecord>> SqlAccounts::ListUsers() {
  return Transact<std::vector<UserRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<UserRecord>> {
        ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kUserColumns) + " ORDER BY id"));
        return ReadAll<UserRecord>(s, ReadUser);
      });
}

Result<UserRecord> SqlAccounts::UpdateUser(const UserRecord& user, int64_t now) {
  return Transact<UserRecord>(runner_, true, [&](Connection& c) -> Result<UserRecord> {
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("UPDATE users SET email = ?2, email_key = ?3, password_hash = ?4, role = ?5, "
                    "publisher_id = ?6, community_id = ?7, updated_at = ?8 WHERE id = ?1"));
      s.Bind(1, user.id);
      BindUser(s, user, now);
      ADS_RETURN_IF_ERROR(UserConflict(c, s.Run(), user));
      if (c.Changes() == 0) return NotFoundError("user " + std::to_string(user.id) + " not found");
    }
    return LoadUser(c, user.id);
  });
}

Status SqlAccounts::DeleteUser(Id id) {
  return runner_.Write(0, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM users WHERE id = ?1"));
    ADS_RETURN_IF_ERROR(s.Bind(1, id).Run());
    if (c.Changes() == 0) return NotFoundError("user " + std::to_string(id) + " not found");
    return OkStatus();
  });
}

Result<bool> SqlAccounts::HasUsers() {
  return Transact<bool>(runner_, false, [&](Connection& c) -> Result<bool> {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT 1 FROM users LIMIT 1"));
    return s.Step();
  });
}

Result<UserTokenRecord> SqlAccounts::CreateToken(const UserTokenRecord& token, int64_t now,
                                                 int max_active) {
  return Transact<UserTokenRecord>(runner_, true, [&](Connection& c) -> Result<UserTokenRecord> {
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("SELECT COUNT(*) FROM user_tokens WHERE user_id = ?1 AND revoked_at IS NULL "
                    "AND (expires_at IS NULL OR expires_at > ?2)"));
      s.Bind(1, token.user_id).Bind(2, now);
      ADS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (row && s.Int(0) >= max_active) {
        return ConflictError("already has " + std::to_string(s.Int(0)) +
                             " active tokens, the most allowed: revoke one first");
      }
    }
    Id id = 0;
    {
      ADS_ASSIGN_OR_RETURN(Statement s,
                           c.Prepare("INSERT INTO user_tokens (user_id, hash, prefix, created_at, "
                                     "expires_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id"));
      s.Bind(1, token.user_id)
          .BindBlob(2, token.hash.data(), token.hash.size())
          .Bind(3, token.prefix)
          .Bind(4, now)
          .Bind(5, token.expires_at);
      ADS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return InternalError("INSERT ... RETURNING id returned no row");
      id = s.Int(0);
    }
    return LoadToken(c, id);
  });
}

Result<std::vector<UserTokenRecord>> SqlAccounts::FindTokensByPrefix(std::string_view prefix) {
  return Transact<std::vector<UserTokenRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<UserTokenRecord>> {
        ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(std::string(kTokenColumns) +
                                                    " WHERE prefix = ?1 AND revoked_at IS NULL"));
        s.Bind(1, prefix);
        return ReadAll<UserTokenRecord>(s, ReadToken);
      });
}

Result<std::vector<UserTokenRecord>> SqlAccounts::ListTokens(std::optional<Id> user_id) {
  return Transact<std::vector<UserTokenRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<UserTokenRecord>> {
        ADS_ASSIGN_OR_RETURN(
            Statement s,
            c.Prepare(std::string(kTokenColumns) +
                      (user_id ? " WHERE user_id = ?1 ORDER BY id DESC" : " ORDER BY id DESC")));
        if (user_id) s.Bind(1, *user_id);
        return ReadAll<UserTokenRecord>(s, ReadToken);
      });
}

Result<UserTokenRecord> SqlAccounts::GetToken(Id id) {
  return Transact<UserTokenRecord>(runner_, false, [&](Connection& c) { return LoadToken(c, id); });
}

Result<UserTokenRecord> SqlAccounts::RevokeToken(Id id, int64_t now) {
  return Transact<UserTokenRecord>(runner_, true, [&](Connection& c) -> Result<UserTokenRecord> {
    {
      ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("UPDATE user_tokens SET revoked_at = ?2 "
                                                  "WHERE id = ?1 AND revoked_at IS NULL"));
      ADS_RETURN_IF_ERROR(s.Bind(1, id).Bind(2, now).Run());
    }
    return LoadToken(c, id);
  });
}

Result<int64_t> SqlAccounts::RevokeUserTokens(Id user_id, int64_t now) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare("UPDATE user_tokens SET revoked_at = ?2 WHERE user_id = ?1 AND "
                                   "revoked_at IS NULL RETURNING id"));
    s.Bind(1, user_id).Bind(2, now);
    int64_t revoked = 0;
    for (;;) {
      ADS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return revoked;
      ++revoked;
    }
  });
}

Status SqlAccounts::CreateSession(const SessionRecord& session, int max_per_user) {
  return runner_.Write(0, [&](Connection& c) -> Status {
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
    ADS_ASSIGN_OR_RETURN(
        Statement s, c.Prepare("DELETE FROM console_sessions WHERE user_id = ?1 AND id_hash NOT IN "
                               "(SELECT id_hash FROM console_sessions WHERE user_id = ?1 "
                               "ORDER BY created_at DESC, last_seen_at DESC LIMIT ?2)"));
    return s.Bind(1, session.user_id).Bind(2, int64_t{max_per_user}).Run();
  });
}

Result<SessionRecord> SqlAccounts::GetSession(const Sha256Digest& id_hash) {
  return Transact<SessionRecord>(runner_, false, [&](Connection& c) -> Result<SessionRecord> {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare("SELECT user_id, csrf_token, created_at, last_seen_at, "
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
  });
}

Status SqlAccounts::TouchSession(const Sha256Digest& id_hash, int64_t now) {
  return runner_.Write(0, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(
        Statement s, c.Prepare("UPDATE console_sessions SET last_seen_at = ?2 WHERE id_hash = ?1"));
    return s.BindBlob(1, id_hash.data(), id_hash.size()).Bind(2, now).Run();
  });
}

Status SqlAccounts::DeleteSession(const Sha256Digest& id_hash) {
  return runner_.Write(0, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM console_sessions WHERE id_hash = ?1"));
    return s.BindBlob(1, id_hash.data(), id_hash.size()).Run();
  });
}

Result<int64_t> SqlAccounts::DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare(keep ? "DELETE FROM console_sessions WHERE user_id = ?1 AND "
                                          "id_hash <> ?2"
                                        : "DELETE FROM console_sessions WHERE user_id = ?1"));
    s.Bind(1, user_id);
    if (keep) s.BindBlob(2, keep->data(), keep->size());
    ADS_RETURN_IF_ERROR(s.Run());
    return c.Changes();
  });
}

Result<int64_t> SqlAccounts::DeleteExpiredSessions(int64_t now, int64_t idle_before) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare("DELETE FROM console_sessions WHERE expires_at <= ?1 OR "
                                   "last_seen_at < ?2"));
    ADS_RETURN_IF_ERROR(s.Bind(1, now).Bind(2, idle_before).Run());
    return c.Changes();
  });
}

}  // namespace adserver::store::sql
