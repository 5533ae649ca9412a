#pragma once

#include <memory>
#include <string>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"
#include "store/account_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_accounts.h"
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

  Result<UserRecord> CreateUser(const UserRecord& user, int64_t now) override {
    return accounts_.CreateUser(user, now);
  }
  Result<UserRecord> GetUser(Id id) override { return accounts_.GetUser(id); }
  Result<UserRecord> GetUserByEmail(std::string_view email) override {
    return accounts_.GetUserByEmail(email);
  }
  Result<std::vector<UserRecord>> ListUsers() override { return accounts_.ListUsers(); }
  Result<UserRecord> UpdateUser(const UserRecord& user, int64_t now) override {
    return accounts_.UpdateUser(user, now);
  }
  Status DeleteUser(Id id) override { return accounts_.DeleteUser(id); }
  Result<bool> HasUsers() override { return accounts_.HasUsers(); }
  Result<UserTokenRecord> CreateToken(const UserTokenRecord& token, int64_t now,
                                      int max_active) override {
    return accounts_.CreateToken(token, now, max_active);
  }
  Result<std::vector<UserTokenRecord>> FindTokensByPrefix(std::string_view prefix) override {
    return accounts_.FindTokensByPrefix(prefix);
  }
  Result<std::vector<UserTokenRecord>> ListTokens(std::optional<Id> user_id) override {
    return accounts_.ListTokens(user_id);
  }
  Result<UserTokenRecord> GetToken(Id id) override { return accounts_.GetToken(id); }
  Result<UserTokenRecord> RevokeToken(Id id, int64_t now) override {
    return accounts_.RevokeToken(id, now);
  }
  Result<int64_t> RevokeUserTokens(Id user_id, int64_t now) override {
    return accounts_.RevokeUserTokens(user_id, now);
  }
  Status CreateSession(const SessionRecord& session, int max_per_user) override {
    return accounts_.CreateSession(session, max_per_user);
  }
  Result<SessionRecord> GetSession(const Sha256Digest& id_hash) override {
    return accounts_.GetSession(id_hash);
  }
  Status TouchSession(const Sha256Digest& id_hash, int64_t now) override {
    return accounts_.TouchSession(id_hash, now);
  }
  Status DeleteSession(const Sha256Digest& id_hash) override {
    return accounts_.DeleteSession(id_hash);
  }
  Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) override {
    return accounts_.DeleteUserSessions(user_id, std::move(keep));
  }
  Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before) override {
    return accounts_.DeleteExpiredSessions(now, idle_before);
  }

 private:
  class SqlRunner final : public sql::Runner {
   public:
    explicit SqlRunner(SqliteAccountStore& store) : store_(store) {}
    Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
    Status Read(const std::function<Status(sql::Connection&)>& fn) override;

   private:
    SqliteAccountStore& store_;
  };

  explicit SqliteAccountStore(std::unique_ptr<sqlite_detail::Connection> conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
  SqlRunner runner_;
  sql::SqlAccounts accounts_;
};

}  // namespace adserver::store
