// The AccountStore contract (issues 16 and 17): the SQLite and PostgreSQL adapters run the
// same SQL (store/sql/sql_accounts) through the same cases. PostgreSQL cases run on a database
// of their own (skipped by hand outside CTest, a failure with ADSERVER_REQUIRE_POSTGRES=1).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/faulty_stores.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;

class SqliteAccounts {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<InventoryStore>> Inventory() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> s, SqliteStore::Open(dir_.File("a.db")));
    return std::unique_ptr<InventoryStore>(std::move(s));
  }
  Result<std::unique_ptr<AccountStore>> Accounts() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteAccountStore> s,
                         SqliteAccountStore::Open(dir_.File("a.db")));
    return std::unique_ptr<AccountStore>(std::move(s));
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresAccounts {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  Result<std::unique_ptr<InventoryStore>> Inventory() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> s, PostgresStore::Open(db_.url()));
    return std::unique_ptr<InventoryStore>(std::move(s));
  }
  Result<std::unique_ptr<AccountStore>> Accounts() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> s, PostgresStore::Open(db_.url()));
    return std::unique_ptr<AccountStore>(std::move(s));
  }

 private:
  adserver::testing::TestDatabase db_;
};

// SQLite behind the fault-injecting wrappers (tests/support/faulty_stores.h), no fault planned
// unless a case plans one.
class WrappedSqliteAccounts {
 public:
  static constexpr const char* kName = "sqlite_behind_the_fault_wrappers";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<InventoryStore>> Inventory() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<InventoryStore> inner, inner_.Inventory());
    std::shared_ptr<InventoryStore> owned = std::move(inner);
    return std::unique_ptr<InventoryStore>(
        std::make_unique<adserver::testing::FaultyInventoryStore>(*owned, plan, owned));
  }
  Result<std::unique_ptr<AccountStore>> Accounts() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<AccountStore> inner, inner_.Accounts());
    std::shared_ptr<AccountStore> owned = std::move(inner);
    return std::unique_ptr<AccountStore>(
        std::make_unique<adserver::testing::FaultyAccountStore>(*owned, plan, owned));
  }
  adserver::testing::FaultPlan plan;

 private:
  SqliteAccounts inner_;
};

template <class Backend>
class AccountContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    auto inventory = backend_.Inventory();
    ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
    inventory_ = std::move(*inventory);
    PublisherRecord p;
    p.name = "Site";
    auto publisher = inventory_->CreatePublisher(p, kNow);
    ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
    publisher_id_ = publisher->id;
    auto accounts = backend_.Accounts();
    ASSERT_TRUE(accounts.ok()) << accounts.status().ToString();
    accounts_ = std::move(*accounts);
  }

  UserRecord User(std::string email, Role role = Role::kOperator) {
    UserRecord u;
    u.email = std::move(email);
    u.password_hash = "$argon2id$fake";
    u.role = role;
    if (role == Role::kPublisher) u.publisher_id = publisher_id_;
    return u;
  }

  Backend backend_;
  std::unique_ptr<InventoryStore> inventory_;
  std::unique_ptr<AccountStore> accounts_;
  Id publisher_id_ = 0;
};

using Backends = ::testing::Types<SqliteAccounts, PostgresAccounts, WrappedSqliteAccounts>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(AccountContractTest, Backends, BackendNames);

TYPED_TEST(AccountContractTest, UsersRoundTripAndEmailsAreUniqueCaseInsensitively) {
  EXPECT_FALSE(*this->accounts_->HasUsers());
  auto created = this->accounts_->CreateUser(this->User("Ops@Example.com"), kNow);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(*this->accounts_->HasUsers());
  EXPECT_EQ(created->email, "Ops@Example.com");
  auto found = this->accounts_->GetUserByEmail("ops@EXAMPLE.com");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->id, created->id);
  auto dup = this->accounts_->CreateUser(this->User("OPS@example.COM"), kNow);
  EXPECT_EQ(dup.status().code(), Code::kConflict);
  EXPECT_EQ(this->accounts_->GetUserByEmail("nobody@example.com").status().code(), Code::kNotFound);
}

TYPED_TEST(AccountContractTest, RoleMustCarryItsTenant) {
  UserRecord bad = this->User("p@example.com", Role::kPublisher);
  bad.publisher_id.reset();
  EXPECT_FALSE(this->accounts_->CreateUser(bad, kNow).ok());
  UserRecord missing = this->User("q@example.com", Role::kPublisher);
  missing.publisher_id = 999;
  EXPECT_EQ(this->accounts_->CreateUser(missing, kNow).status().code(), Code::kConflict);
  auto ok = this->accounts_->CreateUser(this->User("r@example.com", Role::kPublisher), kNow);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->publisher_id, this->publisher_id_);
}

TYPED_TEST(AccountContractTest, TokensAreFoundByPrefixUntilRevoked) {
  auto user = this->accounts_->CreateUser(this->User("t@example.com"), kNow);
  ASSERT_TRUE(user.ok());
  UserTokenRecord t{.user_id = user->id, .hash = Sha256("sut_secret"), .prefix = "sut_abcdefgh"};
  auto created = this->accounts_->CreateToken(t, kNow, 20);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto found = this->accounts_->FindTokensByPrefix("sut_abcdefgh");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().hash, Sha256("sut_secret"));
  auto revoked = this->accounts_->RevokeToken(created->id, kNow + 5);
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_at, kNow + 5);
  EXPECT_TRUE(this->accounts_->FindTokensByPrefix("sut_abcdefgh")->empty());
  EXPECT_EQ(this->accounts_->ListTokens(user->id)->size(), 1u);
  EXPECT_EQ(this->accounts_->RevokeToken(999, kNow).status().code(), Code::kNotFound);
}

TYPED_TEST(AccountContractTest, SessionsExpireAndGoWithTheirUser) {
  auto user = this->accounts_->CreateUser(this->User("s@example.com"), kNow);
  ASSERT_TRUE(user.ok());
  SessionRecord s{.id_hash = Sha256("cookie"),
                  .user_id = user->id,
                  .csrf_token = "csrf",
                  .created_at = kNow,
                  .last_seen_at = kNow,
                  .expires_at = kNow + 100};
  ASSERT_TRUE(this->accounts_->CreateSession(s, 5).ok());
  ASSERT_TRUE(this->accounts_->TouchSession(s.id_hash, kNow + 50).ok());
  auto got = this->accounts_->GetSession(s.id_hash);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->last_seen_at, kNow + 50);
  EXPECT_EQ(got->csrf_token, "csrf");
  EXPECT_EQ(*this->accounts_->DeleteExpiredSessions(kNow + 99, kNow), 0);
  EXPECT_EQ(*this->accounts_->DeleteExpiredSessions(kNow + 100, kNow), 1);
  ASSERT_TRUE(this->accounts_->CreateSession(s, 5).ok());
  ASSERT_TRUE(this->accounts_->DeleteUser(user->id).ok());
  EXPECT_EQ(this->accounts_->GetSession(s.id_hash).status().code(), Code::kNotFound);
}

TYPED_TEST(AccountContractTest, SigningInAgainKeepsOnlyTheNewestSessions) {
  auto user = this->accounts_->CreateUser(this->User("many@example.com"), kNow);
  ASSERT_TRUE(user.ok());
  for (int i = 0; i < 10; ++i) {
    SessionRecord s{.id_hash = Sha256("cookie" + std::to_string(i)),
                    .user_id = user->id,
                    .csrf_token = "csrf",
                    .created_at = kNow + i,
                    .last_seen_at = kNow + i,
                    .expires_at = kNow + 1000};
    ASSERT_TRUE(this->accounts_->CreateSession(s, 3).ok());
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(this->accounts_->GetSession(Sha256("cookie" + std::to_string(i))).ok(), i >= 7) << i;
  }
}

TYPED_TEST(AccountContractTest, ActiveTokensAreCappedPerUserAndRevokingFreesASlot) {
  auto user = this->accounts_->CreateUser(this->User("cap@example.com"), kNow);
  auto other = this->accounts_->CreateUser(this->User("other@example.com"), kNow);
  ASSERT_TRUE(user.ok() && other.ok());
  auto token = [&](Id owner, int i) {
    return UserTokenRecord{.user_id = owner,
                           .hash = Sha256("sut_" + std::to_string(owner) + "_" + std::to_string(i)),
                           .prefix = "sut_" + std::to_string(i)};
  };
  std::vector<Id> ids;
  for (int i = 0; i < 3; ++i) {
    auto created = this->accounts_->CreateToken(token(user->id, i), kNow, 3);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ids.push_back(created->id);
  }
  auto fourth = this->accounts_->CreateToken(token(user->id, 3), kNow, 3);
  EXPECT_EQ(fourth.status().code(), Code::kConflict);
  EXPECT_NE(fourth.status().message().find("3 active tokens"), std::string::npos)
      << fourth.status().ToString();
  EXPECT_EQ(this->accounts_->ListTokens(user->id)->size(), 3u);  // nothing was written
  // Another user's tokens do not count; a revoked one frees a slot.
  EXPECT_TRUE(this->accounts_->CreateToken(token(other->id, 0), kNow, 3).ok());
  ASSERT_TRUE(this->accounts_->RevokeToken(ids[0], kNow + 1).ok());
  EXPECT_TRUE(this->accounts_->CreateToken(token(user->id, 3), kNow, 3).ok());
  EXPECT_EQ(this->accounts_->CreateToken(token(user->id, 4), kNow, 3).status().code(),
            Code::kConflict);
}

TYPED_TEST(AccountContractTest, DeleteUserSessionsKeepsOnlyTheOneAskedFor) {
  auto user = this->accounts_->CreateUser(this->User("sessions@example.com"), kNow);
  auto other = this->accounts_->CreateUser(this->User("bystander@example.com"), kNow);
  ASSERT_TRUE(user.ok() && other.ok());
  auto session = [&](const std::string& cookie, Id owner) {
    SessionRecord s{.id_hash = Sha256(cookie),
                    .user_id = owner,
                    .csrf_token = "csrf",
                    .created_at = kNow,
                    .last_seen_at = kNow,
                    .expires_at = kNow + 1000};
    EXPECT_TRUE(this->accounts_->CreateSession(s, 10).ok());
  };
  for (const char* c : {"a", "b", "c"}) session(c, user->id);
  session("theirs", other->id);
  auto ended = this->accounts_->DeleteUserSessions(user->id, Sha256("b"));
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  EXPECT_EQ(*ended, 2);
  EXPECT_FALSE(this->accounts_->GetSession(Sha256("a")).ok());
  EXPECT_TRUE(this->accounts_->GetSession(Sha256("b")).ok());
  EXPECT_TRUE(this->accounts_->GetSession(Sha256("theirs")).ok());
  EXPECT_EQ(*this->accounts_->DeleteUserSessions(user->id, std::nullopt), 1);
  EXPECT_FALSE(this->accounts_->GetSession(Sha256("b")).ok());
  EXPECT_TRUE(this->accounts_->GetSession(Sha256("theirs")).ok());
}

}  // namespace
}  // namespace adserver::store
