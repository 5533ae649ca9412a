#pragma once

// Users, their tokens and console sessions (AccountStore) in SQL, shared by the SQLite and
// PostgreSQL adapters (store/sql/sql.h); the adapter supplies transactions and forwards its
// AccountStore methods here. The error contract is AccountStore's.

#include <optional>
#include <string_view>
#include <vector>

#include "store/account_store.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlAccounts {
 public:
  explicit SqlAccounts(Runner& runner) : runner_(runner) {}

  Result<UserRecord> CreateUser(const UserRecord& user, int64_t now);
  Result<UserRecord> GetUser(Id id);
  Result<UserRecord> GetUserByEmail(std::string_view email);
  Result<std::vector<UserRecord>> ListUsers();
  Result<UserRecord> UpdateUser(const UserRecord& user, int64_t now);
  Status DeleteUser(Id id);
  Result<bool> HasUsers();
  Result<UserTokenRecord> CreateToken(const UserTokenRecord& token, int64_t now, int max_active);
  Result<std::vector<UserTokenRecord>> FindTokensByPrefix(std::string_view prefix);
  Result<std::vector<UserTokenRecord>> ListTokens(std::optional<Id> user_id);
  Result<UserTokenRecord> GetToken(Id id);
  Result<UserTokenRecord> RevokeToken(Id id, int64_t now);
  Result<int64_t> RevokeUserTokens(Id user_id, int64_t now);
  Status CreateSession(const SessionRecord& session, int max_per_user);
  Result<SessionRecord> GetSession(const Sha256Digest& id_hash);
  Status TouchSession(const Sha256Digest& id_hash, int64_t now);
  Status DeleteSession(const Sha256Digest& id_hash);
  Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep);
  Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before);

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
