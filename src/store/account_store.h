#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto.h"
#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// What a user may reach (issue 16): everything, one publisher, or one community.
enum class Role : uint8_t { kOperator, kPublisher, kAdvertiser };
inline std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kOperator:
      return "operator";
    case Role::kPublisher:
      return "publisher";
    case Role::kAdvertiser:
      return "advertiser";
  }
  return "operator";
}
inline std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kOperator, Role::kPublisher, Role::kAdvertiser}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

// The key emails are unique by: the email in ASCII lower case.
inline std::string EmailKey(std::string_view email) {
  std::string key(email);
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return key;
}

// A console/API user. Exactly one of publisher_id (kPublisher) and community_id (kAdvertiser)
// is set; neither for kOperator.
struct UserRecord {
  Id id = 0;
  std::string email;          // as given; unique case-insensitively (compared lower-cased)
  std::string password_hash;  // argon2id string (common/password.h); never leaves the server
  Role role = Role::kOperator;
  std::optional<Id> publisher_id;
  std::optional<Id> community_id;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

// A bearer token issued to a user: only its SHA-256 and its first characters are kept.
struct UserTokenRecord {
  Id id = 0;
  Id user_id = 0;
  Sha256Digest hash{};
  std::string prefix;  // first 8 characters, to recognise it in a listing
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
  // When the token stops working (issue 39); nullopt = never (tokens issued before expiry
  // existed got one at the upgrade).
  std::optional<int64_t> expires_at;
};

// A console session: the SHA-256 of the cookie's secret, the CSRF token bound to it, and its
// idle and absolute expiry (Unix seconds).
struct SessionRecord {
  Sha256Digest id_hash{};
  Id user_id = 0;
  std::string csrf_token;
  int64_t created_at = 0;
  int64_t last_seen_at = 0;
  int64_t expires_at = 0;  // absolute
};

// Persistence of users, their tokens and console sessions. Implementations are thread-safe.
class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // Returns Conflict if another user has the email (case-insensitively) or the publisher or
  // community does not exist.
  virtual Result<UserRecord> CreateUser(const UserRecord& user, int64_t now) = 0;
  // NotFound if no user has `id`.
  virtual Result<UserRecord> GetUser(Id id) = 0;
  // NotFound if no user has `email` (case-insensitively).
  virtual Result<UserRecord> GetUserByEmail(std::string_view email) = 0;
  virtual Result<std::vector<UserRecord>> ListUsers() = 0;
  // Writes every field but id and created_at. NotFound, or Conflict as for CreateUser.
  virtual Result<UserRecord> UpdateUser(const UserRecord& user, int64_t now) = 0;
  // Deletes the user with its tokens and sessions. NotFound if no user has `id`.
  virtual Status DeleteUser(Id id) = 0;
  // True once any user exists.
  virtual Result<bool> HasUsers() = 0;

  // Conflict if the user does not exist, the hash is taken, or the user already has
  // `max_active` unrevoked, unexpired tokens (checked and inserted in one transaction; the
  // message says which). Stores `token.expires_at`.
  virtual Result<UserTokenRecord> CreateToken(const UserTokenRecord& token, int64_t now,
                                              int max_active) = 0;
  // Unrevoked tokens whose prefix is `prefix` (the caller compares hashes in constant time).
  virtual Result<std::vector<UserTokenRecord>> FindTokensByPrefix(std::string_view prefix) = 0;
  // Every token of `user_id`, or of every user when unset, newest first.
  virtual Result<std::vector<UserTokenRecord>> ListTokens(std::optional<Id> user_id) = 0;
  virtual Result<UserTokenRecord> GetToken(Id id) = 0;
  // Marks the token revoked (idempotent). NotFound if no token has `id`.
  virtual Result<UserTokenRecord> RevokeToken(Id id, int64_t now) = 0;
  // Revokes every unrevoked token of `user_id`; returns how many.
  virtual Result<int64_t> RevokeUserTokens(Id user_id, int64_t now) = 0;

  // Conflict if the user does not exist. Keeps the user's `max_per_user` newest sessions and
  // deletes older ones, so signing in again and again cannot grow the table.
  virtual Status CreateSession(const SessionRecord& session, int max_per_user) = 0;
  // NotFound if no session has `id_hash` (expired ones may still be found: check expiry).
  virtual Result<SessionRecord> GetSession(const Sha256Digest& id_hash) = 0;
  virtual Status TouchSession(const Sha256Digest& id_hash, int64_t now) = 0;
  // Deleting a missing session is not an error.
  virtual Status DeleteSession(const Sha256Digest& id_hash) = 0;
  // Deletes every session of `user_id` but `keep` (when set). Returns how many it deleted.
  virtual Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) = 0;
  // Deletes sessions that expired (absolute) before `now` or were idle since `idle_before`.
  virtual Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before) = 0;
};

}  // namespace adserver::store
