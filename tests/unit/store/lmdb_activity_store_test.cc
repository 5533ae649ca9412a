#include "store/lmdb/lmdb_activity_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01

Address Wallet(uint8_t n) {
  Address a;
  a.bytes[0] = n;
  a.bytes[19] = static_cast<uint8_t>(n * 7);
  return a;
}

ActivityRecord Row(uint8_t wallet, Id project, int64_t day, int64_t count) {
  return {.wallet = Wallet(wallet),
          .project_id = project,
          .chain_id = 1,
          .last_seen = day * 86400 + 3600,
          .count = count};
}

class LmdbActivityStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sqlite = SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(sqlite.ok());
    auto index = LmdbActivityIndex::Open(dir_.File("activity.lmdb"));
    ASSERT_TRUE(index.ok());
    sqlite_ = std::move(sqlite).value();
    store_ = std::make_unique<LmdbActivityStore>(sqlite_, *index);
    for (const char* slug : {"a", "b"}) {
      ProjectRecord p;
      p.slug = slug;
      p.name = slug;
      projects_.push_back(sqlite_->CreateProject(p, kNow)->id);
    }
  }
  std::vector<ActivityRecord> Get(uint8_t wallet) {
    return *store_->ActivityForWallet(Wallet(wallet));
  }

  testing::TempDir dir_;
  std::shared_ptr<SqliteStore> sqlite_;  // the projects
  std::unique_ptr<LmdbActivityStore> store_;
  std::vector<Id> projects_;
};

// Sorted rows into an empty index take the append path; what is stored is what Record stores.
TEST_F(LmdbActivityStoreTest, SortedFirstLoadMergesLikeRecord) {
  Id a = projects_[0], b = projects_[1];
  ASSERT_TRUE(store_
                  ->RecordActivity(
                      {Row(1, a, 100, 2), Row(1, a, 90, 1), Row(1, b, 95, 4), Row(3, a, 80, 1)})
                  .ok());
  std::vector<ActivityRecord> one = Get(1);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].project_id, a);
  EXPECT_EQ(one[0].count, 3);
  EXPECT_EQ(one[0].last_seen, 100 * 86400);
  EXPECT_EQ(one[1].count, 4);
  // Now the index is not empty: unsorted rows merge through Record.
  ASSERT_TRUE(store_->RecordActivity({Row(3, a, 85, 1), Row(2, b, 70, 1), Row(1, a, 50, 1)}).ok());
  EXPECT_EQ(Get(1)[0].count, 4);
  EXPECT_EQ(Get(1)[0].last_seen, 100 * 86400);
  EXPECT_EQ(Get(2).size(), 1u);
  EXPECT_EQ(Get(3)[0].count, 2);
  EXPECT_EQ(Get(3)[0].last_seen, 85 * 86400);
}

TEST_F(LmdbActivityStoreTest, UnsortedOrInvalidFirstLoadFallsBackToRecord) {
  Id a = projects_[0];
  ASSERT_TRUE(store_->RecordActivity({Row(5, a, 10, 1), Row(4, a, 11, 1), Row(5, a, 12, 1)}).ok());
  EXPECT_EQ(Get(5)[0].count, 2);
  EXPECT_EQ(Get(4)[0].count, 1);
  Status unknown = store_->RecordActivity({Row(9, 999, 10, 1)});
  EXPECT_EQ(unknown.code(), Code::kConflict);
}

TEST_F(LmdbActivityStoreTest, InvalidIdsWriteNothingOnAnEmptyIndex) {
  ActivityRecord bad = Row(1, projects_[0], 10, 1);
  bad.chain_id = 0;
  EXPECT_EQ(store_->RecordActivity({Row(0, projects_[0], 10, 1), bad}).code(),
            Code::kInvalidArgument);
  EXPECT_TRUE(Get(0).empty());
}

}  // namespace
}  // namespace adserver::store
