#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "store/account_store.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

// AccountStore on the same SQLite file as SqliteStore (tables `users`, `user_tokens`,
// `console_sessions`, migration 9). Uses its own connection, serialised by a mutex: calls come
// from admin workers (one or two short statements per authenticated admin call).
class SqliteAccountStore final : public AccountStore {
 public:
  // Opens the database at `path` and applies pending migrations (as SqliteStore::Open does).
  static Result<std::unique_ptr<SqliteAccountStore>> Open(const std::string& path,
                                                          const SqliteOptions& options = {});
  ~SqliteAccountStore() override;
  SqliteAccountStore(const SqliteAccountStore&) = delete;
  SqliteAccountStore& operator=(const SqliteAccountStore&) = delete;

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

  Status CreateSession(const SessionRecord& session, int max_per_user) override;
  Result<SessionRecord> GetSession(const Sha256Digest& id_hash) override;
  Status TouchSession(const Sha256Digest& id_hash, int64_t now) override;
  Status DeleteSession(const Sha256Digest& id_hash) override;
  Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) override;
  Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before) override;

 private:
  explicit SqliteAccountStore(std::unique_ptr<sqlite_detail::Connection> conn);

  std::mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_;  // guarded by mu_
};

}  // namespace adserver::store
