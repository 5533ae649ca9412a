// What PostgresActivityStore adds to the ActivityStore contract (activity_contract_test.cc) for
// the replicas of cluster mode: the change log, snapshots, absolute writes and pruning. Real
// PostgreSQL (a database of its own on the test cluster CTest starts).

#include "store/postgres/postgres_activity_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "store/postgres/postgres_store.h"
#include "support/postgres/test_database.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kFarFuture = int64_t{1} << 40;

Address Wallet(uint32_t n) {
  Address a;
  a.bytes[0] = static_cast<uint8_t>(n >> 8);
  a.bytes[1] = static_cast<uint8_t>(n);
  a.bytes[19] = 0x5a;
  return a;
}

ActivityRecord Row(uint32_t wallet, Id project, int64_t last_seen, int64_t count) {
  return {.wallet = Wallet(wallet),
          .project_id = project,
          .chain_id = 1,
          .last_seen = last_seen,
          .count = count};
}

using Key = std::tuple<Address, Id, int64_t>;
using Table = std::map<Key, ActivityRecord>;

// What a follower holds after applying `changes` to `table`.
void Apply(const std::vector<ActivityChange>& changes, Table& table) {
  for (const ActivityChange& c : changes) {
    Key key{c.value.row.wallet, c.value.row.project_id, c.value.row.chain_id};
    if (c.value.removed) {
      table.erase(key);
    } else {
      table[key] = c.value.row;
    }
  }
}

class PostgresActivityStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ADSERVER_REQUIRE_TEST_DATABASE(db_);
    store_ = Open();
    ASSERT_TRUE(store_);
    auto inventory = PostgresStore::Open(db_.url());
    ASSERT_TRUE(inventory.ok()) << inventory.status().message();
    inventory_ = std::move(*inventory);
    for (const char* slug : {"a", "b"}) {
      ProjectRecord p;
      p.slug = p.name = slug;
      projects_.push_back(inventory_->CreateProject(p, kNow)->id);
    }
  }
  std::unique_ptr<PostgresActivityStore> Open() {
    auto s = PostgresActivityStore::Open(db_.url());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  Table Stored() {
    Table out;
    Status st = store_->ScanActivity([&](const ActivityRecord& r) {
      out[{r.wallet, r.project_id, r.chain_id}] = r;
    });
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }
  // Follows the log from `position` into `table`; returns the new position.
  int64_t Follow(int64_t position, Table& table, size_t limit = 1000) {
    for (;;) {
      Result<ActivityChanges> batch = store_->ChangesAfter(position, limit);
      EXPECT_TRUE(batch.ok()) << batch.status().message();
      if (!batch.ok() || batch->changes.empty()) return position;
      for (const ActivityChange& c : batch->changes) EXPECT_GT(c.seq, position);
      Apply(batch->changes, table);
      position = batch->position;
    }
  }

  adserver::testing::TestDatabase db_;
  std::unique_ptr<PostgresActivityStore> store_;
  std::unique_ptr<PostgresStore> inventory_;
  std::vector<Id> projects_;
};

// Two writers commit concurrently (overlapping keys, so their transactions wait on each other)
// while a follower polls: it misses no change and ends equal to the table.
TEST_F(PostgresActivityStoreTest, AFollowerOfTwoConcurrentWritersMissesNoChange) {
  auto second = Open();
  ASSERT_TRUE(second);
  std::atomic<int> writers_done{0};
  auto write = [&](PostgresActivityStore& s, uint32_t offset) {
    for (uint32_t i = 0; i < 60; ++i) {
      std::vector<ActivityRecord> rows;
      for (uint32_t w = 0; w < 20; ++w) {
        rows.push_back(Row((i * 7 + w + offset) % 97, projects_[w % 2], kNow + i, 1));
      }
      EXPECT_TRUE(s.RecordActivity(rows).ok());
    }
    ++writers_done;
  };
  Table followed;
  int64_t position = 0;
  std::thread a(write, std::ref(*store_), 0), b(write, std::ref(*second), 50);
  auto follower = Open();
  ASSERT_TRUE(follower);
  while (writers_done.load() < 2) {
    Result<ActivityChanges> batch = follower->ChangesAfter(position, 37);
    ASSERT_TRUE(batch.ok()) << batch.status().message();
    for (const ActivityChange& c : batch->changes) ASSERT_GT(c.seq, position);
    Apply(batch->changes, followed);
    position = batch->position;
  }
  a.join();
  b.join();
  position = Follow(position, followed);
  EXPECT_EQ(followed, Stored());
  EXPECT_EQ(position, static_cast<int64_t>(*store_->ActivityChangeCounter()));
  int64_t total = 0;
  for (const auto& [key, row] : followed) total += row.count;
  EXPECT_EQ(total, 2 * 60 * 20);
}

TEST_F(PostgresActivityStoreTest, AbsoluteValuesAreIdempotentAndLogOnlyWhatChanged) {
  const Id a = projects_[0];
  ASSERT_TRUE(store_->RecordActivity({Row(1, a, kNow, 3), Row(2, a, kNow, 1)}).ok());
  const int64_t before = static_cast<int64_t>(*store_->ActivityChangeCounter());
  // The undo of a block that raised wallet 1 and created wallet 3's entry.
  std::vector<ActivityValue> undo{{.row = Row(1, a, kNow - 10, 2)},
                                  {.row = Row(3, a, 0, 0), .removed = true}};
  ASSERT_TRUE(store_->PutActivityValues(undo).ok());
  Result<ActivityChanges> logged = store_->ChangesAfter(before, 100);
  ASSERT_TRUE(logged.ok());
  ASSERT_EQ(logged->changes.size(), 1u) << "wallet 3 was absent: nothing deleted, nothing logged";
  ActivityValue expected{.row = Row(1, a, kNow - 10, 2)};
  EXPECT_EQ(logged->changes[0].value, expected);
  const int64_t after = logged->position;
  ASSERT_TRUE(store_->PutActivityValues(undo).ok());
  EXPECT_EQ(static_cast<int64_t>(*store_->ActivityChangeCounter()), after) << "nothing new";
  // Removing an entry that exists is logged as removed.
  std::vector<ActivityValue> remove{{.row = Row(2, a, 0, 0), .removed = true}};
  ASSERT_TRUE(store_->PutActivityValues(remove).ok());
  logged = store_->ChangesAfter(after, 100);
  ASSERT_TRUE(logged.ok());
  ASSERT_EQ(logged->changes.size(), 1u);
  EXPECT_TRUE(logged->changes[0].value.removed);
  EXPECT_EQ(logged->changes[0].value.row.wallet, Wallet(2));
  std::vector<ActivityValue> unknown_project{{.row = Row(4, 99'999, kNow, 1)}};
  EXPECT_EQ(store_->PutActivityValues(unknown_project).code(), Code::kConflict);
}

TEST_F(PostgresActivityStoreTest, DeletingAProjectLogsTheRemovalOfItsActivity) {
  ASSERT_TRUE(
      store_->RecordActivity({Row(1, projects_[0], kNow, 1), Row(1, projects_[1], kNow, 1)}).ok());
  Table followed;
  int64_t position = Follow(0, followed);
  ASSERT_TRUE(inventory_->DeleteProject(projects_[1]).ok());
  Follow(position, followed);
  EXPECT_EQ(followed.size(), 1u);
  EXPECT_EQ(followed, Stored());
}

TEST_F(PostgresActivityStoreTest, ASnapshotHoldsTheRowsOfItsPositionInWalletOrder) {
  const Id a = projects_[0];
  ASSERT_TRUE(store_->RecordActivity({Row(300, a, kNow, 1), Row(2, a, kNow, 1)}).ok());
  ASSERT_TRUE(store_->RecordActivity({Row(1, a, kNow, 1)}).ok());
  const int64_t position = static_cast<int64_t>(*store_->ActivityChangeCounter());
  auto snapshot = store_->OpenSnapshot(/*batch=*/2);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
  // Written after the snapshot began: not in it.
  ASSERT_TRUE(store_->RecordActivity({Row(0, a, kNow, 1), Row(1, a, kNow, 5)}).ok());
  EXPECT_EQ((*snapshot)->position(), position);
  std::vector<ActivityRecord> rows, batch;
  do {
    ASSERT_TRUE((*snapshot)->Next(batch).ok());
    rows.insert(rows.end(), batch.begin(), batch.end());
  } while (!batch.empty());
  std::vector<ActivityRecord> expected{Row(1, a, kNow, 1), Row(2, a, kNow, 1),
                                       Row(300, a, kNow, 1)};
  EXPECT_EQ(rows, expected);
}

TEST_F(PostgresActivityStoreTest, AFollowerBehindThePrunedLogIsToldToBootstrap) {
  const Id a = projects_[0];
  ASSERT_TRUE(store_->RecordActivity({Row(1, a, kNow, 1)}).ok());
  ASSERT_TRUE(store_->RecordActivity({Row(2, a, kNow, 1)}).ok());
  const int64_t position = static_cast<int64_t>(*store_->ActivityChangeCounter());
  EXPECT_EQ(*store_->PruneChangesBefore(0), 0) << "nothing is that old";
  ASSERT_TRUE(store_->ChangesAfter(0, 10).ok());
  EXPECT_EQ(*store_->PruneChangesBefore(kFarFuture), 2);
  EXPECT_EQ(store_->ChangesAfter(0, 10).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->ChangesAfter(position - 1, 10).status().code(), Code::kNotFound);
  // A follower at the position misses nothing: it follows on.
  ASSERT_TRUE(store_->RecordActivity({Row(3, a, kNow, 1)}).ok());
  Result<ActivityChanges> after = store_->ChangesAfter(position, 10);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->changes.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(*store_->ActivityChangeCounter()), after->position);
}

}  // namespace
}  // namespace adserver::store
