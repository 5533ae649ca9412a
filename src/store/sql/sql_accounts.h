#pragma once

// Users, their tokens and console sessions (AccountStore) in SQL, shared by the SQLite and
// PostgreSQL adapters (store/sql/sql.h): the AccountStore itself, over the adapter's
// transactions (an adapter derives from it). The error contract is AccountStore's.

#include <optional>
#include <string_view>
#include <vector>

#include "store/account_store.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlAccounts : public AccountStore {
 public:
  explicit SqlAccounts(Runner& runner) : runner_(runner) {}

  Result<UserRecord> CreateUser(const UserRecord& user, int64_t now) override;
  Result<UserRecord> GetUser(Id id) override;
  Result<UserRecord> GetUserByEmail(std::string_view email) override;
  Result<std::vector<UserRecord>> ListUsers() override;
  Result<UserRecord> UpdateUser(const UserRecord& user, int64_t now) override;
  Status DeleteUser(Id id) override;
  Result<bool> HasUsers() override;
  Result<UserTokenRecord> CreateToken(const UserTokenRecord& token, int64_t now,
                                      int max_active) override;
  Result<std::vector<UserTokenRecord>> FindTokensByPrefix(std::string_view prefix) override;
  Result<std::vector<UserTokenRecord>> ListTokens(std::optional<Id> user_id) override;
  Result<UserTokenRecord> GetToken(Id id) override;
  Result<UserTokenRecord> RevokeToken(Id id, int64_t now) override;
  Result<int64_t> RevokeUserTokens(Id user_id, int64_t now) override;
  Status CreateSession(const SessionRecord& session, int max_per_user) override;
  Result<SessionRecord> GetSession(const Sha256Digest& id_hash) override;
  Status TouchSession(const Sha256Digest& id_hash, int64_t now) override;
  Status DeleteSession(const Sha256Digest& id_hash) override;
  Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) override;
  Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before) override;

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
