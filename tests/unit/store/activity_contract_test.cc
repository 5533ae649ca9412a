// The ActivityStore contract (store/activity_store.h) run against every adapter: SQLite, the
// LMDB index (with SQLite holding the projects) and PostgreSQL (cluster mode; a database of
// its own on the test cluster, skipped outside CTest unless ADSERVER_REQUIRE_POSTGRES=1).
// last_seen values are whole days: the LMDB index keeps days.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_activity_store.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kDay = 86'400;
constexpr int64_t kNow = 20'454 * kDay;

ProjectRecord NewProject(const std::string& slug) {
  ProjectRecord p;
  p.slug = slug;
  p.name = slug;
  return p;
}

class SqliteBackend {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  // Another "process" on the same database each time.
  std::shared_ptr<ActivityStore> Open() {
    auto s = SqliteStore::Open(dir_.File("adserver.db"));
    return s.ok() ? std::shared_ptr<ActivityStore>(std::move(*s)) : nullptr;
  }
  Result<Id> CreateProject(const std::string& slug) {
    ADS_ASSIGN_OR_RETURN(auto s, SqliteStore::Open(dir_.File("adserver.db")));
    ADS_ASSIGN_OR_RETURN(ProjectRecord p, s->CreateProject(NewProject(slug), kNow));
    return p.id;
  }

 private:
  adserver::testing::TempDir dir_;
};

// LMDB allows one environment per directory and process: every Open shares one store.
class LmdbBackend {
 public:
  static constexpr const char* kName = "lmdb";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  std::shared_ptr<ActivityStore> Open() {
    if (store_ == nullptr) {
      auto sqlite = SqliteStore::Open(dir_.File("adserver.db"));
      auto index = LmdbActivityIndex::Open(dir_.File("activity"));
      if (!sqlite.ok() || !index.ok()) return nullptr;
      sqlite_ = std::move(*sqlite);
      store_ = std::make_shared<LmdbActivityStore>(sqlite_, *index);
    }
    return store_;
  }
  Result<Id> CreateProject(const std::string& slug) {
    if (Open() == nullptr) return InternalError("cannot open the LMDB store");
    ADS_ASSIGN_OR_RETURN(ProjectRecord p, sqlite_->CreateProject(NewProject(slug), kNow));
    return p.id;
  }

 private:
  adserver::testing::TempDir dir_;
  std::shared_ptr<SqliteStore> sqlite_;  // the projects
  std::shared_ptr<LmdbActivityStore> store_;
};

class PostgresBackend {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  std::shared_ptr<ActivityStore> Open() {
    auto s = PostgresActivityStore::Open(db_.url());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::shared_ptr<ActivityStore>(std::move(*s)) : nullptr;
  }
  Result<Id> CreateProject(const std::string& slug) {
    ADS_ASSIGN_OR_RETURN(auto s, PostgresStore::Open(db_.url()));
    ADS_ASSIGN_OR_RETURN(ProjectRecord p, s->CreateProject(NewProject(slug), kNow));
    return p.id;
  }

 private:
  adserver::testing::TestDatabase db_;
};

template <class Backend>
class ActivityContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    for (const char* slug : {"alpha", "beta"}) {
      Result<Id> id = backend_.CreateProject(slug);
      ASSERT_TRUE(id.ok()) << id.status().message();
      projects_.push_back(*id);
    }
  }
  std::vector<ActivityRecord> Scan(ActivityStore& s) {
    std::vector<ActivityRecord> out;
    Status st = s.ScanActivity([&](const ActivityRecord& r) { out.push_back(r); });
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }
  Backend backend_;
  std::vector<Id> projects_;
};

using Backends = ::testing::Types<SqliteBackend, LmdbBackend, PostgresBackend>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(ActivityContractTest, Backends, BackendNames);

Address Wallet(uint8_t n) {
  Address a;
  a.bytes[0] = n;
  a.bytes[19] = static_cast<uint8_t>(0xff - n);
  return a;
}

ActivityRecord Row(uint8_t wallet, Id project, int64_t day, int64_t count, int64_t chain = 1) {
  return {.wallet = Wallet(wallet),
          .project_id = project,
          .chain_id = chain,
          .last_seen = day * kDay,
          .count = count};
}

TYPED_TEST(ActivityContractTest, RecordActivityKeepsTheLatestDayAndSumsCounts) {
  auto s = this->backend_.Open();
  ASSERT_TRUE(s);
  const Id a = this->projects_[0];
  ASSERT_TRUE(s->RecordActivity({Row(1, a, 500, 2)}).ok());
  ASSERT_TRUE(s->RecordActivity({Row(1, a, 300, 5)}).ok()) << "older: last_seen stays";
  // The same key twice in one batch merges as two batches would.
  ASSERT_TRUE(s->RecordActivity({Row(1, a, 900, 1), Row(1, a, 800, 1)}).ok());
  std::vector<ActivityRecord> expected{Row(1, a, 900, 9)};
  EXPECT_EQ(*s->ActivityForWallet(Wallet(1)), expected);
  EXPECT_TRUE(s->ActivityForWallet(Wallet(2))->empty());
}

TYPED_TEST(ActivityContractTest, AnUnknownProjectConflictsAndNothingOfTheBatchIsWritten) {
  auto s = this->backend_.Open();
  ASSERT_TRUE(s);
  const Id a = this->projects_[0];
  ASSERT_TRUE(s->RecordActivity({Row(1, a, 100, 1)}).ok());
  Status st = s->RecordActivity({Row(1, a, 200, 1), Row(2, a, 200, 1), Row(3, 987'654, 200, 1)});
  EXPECT_EQ(st.code(), Code::kConflict) << st.message();
  std::vector<ActivityRecord> before{Row(1, a, 100, 1)};
  EXPECT_EQ(this->Scan(*s), before);
}

TYPED_TEST(ActivityContractTest, ScanIsInWalletOrderAndAWalletsRowsInProjectOrder) {
  auto s = this->backend_.Open();
  ASSERT_TRUE(s);
  const Id a = this->projects_[0], b = this->projects_[1];
  ASSERT_TRUE(s->RecordActivity({Row(9, b, 10, 1), Row(3, b, 11, 2), Row(3, a, 12, 3, 10),
                                 Row(3, a, 13, 4, 1), Row(200, a, 14, 5)})
                  .ok());
  std::vector<ActivityRecord> expected{Row(3, a, 13, 4, 1), Row(3, a, 12, 3, 10),
                                       Row(3, b, 11, 2), Row(9, b, 10, 1), Row(200, a, 14, 5)};
  EXPECT_EQ(this->Scan(*s), expected);
  std::vector<ActivityRecord> three(expected.begin(), expected.begin() + 3);
  EXPECT_EQ(*s->ActivityForWallet(Wallet(3)), three);
}

TYPED_TEST(ActivityContractTest, TheChangeCounterMovesWithAnotherProcesssWrite) {
  auto reader = this->backend_.Open();
  auto writer = this->backend_.Open();
  ASSERT_TRUE(reader && writer);
  const uint64_t before = *reader->ActivityChangeCounter();
  ASSERT_TRUE(writer->RecordActivity({Row(1, this->projects_[0], 100, 1)}).ok());
  EXPECT_NE(*reader->ActivityChangeCounter(), before);
}

}  // namespace
}  // namespace adserver::store
