// app::ActivityReplica: a real LMDB index following real PostgreSQL (a database of its own on
// the test cluster CTest starts). Equality is checked against PostgreSQL as the index stores
// rows (last_seen as its day).

#include "cluster/activity_replica.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "store/postgres/postgres_store.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::app {
namespace {

using cluster::ActivityReplica;
using cluster::ActivityReplicaOptions;
using store::ActivityChanges;
using store::ActivityRecord;
using store::ActivityValue;
using store::Id;
using store::LmdbActivityIndex;
using store::PostgresActivityStore;
using store::ProjectRecord;

constexpr int64_t kDay = 86'400;
constexpr int64_t kNow = 20'454 * kDay;

Address Wallet(uint32_t n) {
  Address a;
  a.bytes[0] = static_cast<uint8_t>(n >> 8);
  a.bytes[1] = static_cast<uint8_t>(n);
  a.bytes[19] = 0xa5;
  return a;
}

ActivityRecord Row(uint32_t wallet, Id project, int64_t last_seen, int64_t count) {
  return {.wallet = Wallet(wallet),
          .project_id = project,
          .chain_id = 1,
          .last_seen = last_seen,
          .count = count};
}

class ActivityReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ADSERVER_REQUIRE_TEST_DATABASE(db_);
    auto source = PostgresActivityStore::Open(db_.url());
    ASSERT_TRUE(source.ok()) << source.status().message();
    source_ = std::move(*source);
    auto inventory = store::PostgresStore::Open(db_.url());
    ASSERT_TRUE(inventory.ok()) << inventory.status().message();
    for (const char* slug : {"a", "b"}) {
      ProjectRecord p;
      p.slug = p.name = slug;
      projects_.push_back((*inventory)->CreateProject(p, kNow)->id);
    }
    OpenIndex();
  }
  void OpenIndex() {
    index_.reset();
    auto index = LmdbActivityIndex::Open(dir_.File("activity"));
    ASSERT_TRUE(index.ok()) << index.status().message();
    index_ = *index;
  }
  std::unique_ptr<ActivityReplica> NewReplica(size_t per_batch = 10'000) {
    return std::make_unique<ActivityReplica>(
        *source_, *index_,
        ActivityReplicaOptions{.changes_per_batch = per_batch, .snapshot_rows_per_fetch = 3});
  }
  // PostgreSQL's rows as the index stores them.
  std::vector<ActivityRecord> Expected() {
    std::vector<ActivityRecord> out;
    Status st = source_->ScanActivity([&](const ActivityRecord& r) {
      ActivityRecord stored = r;
      stored.last_seen = r.last_seen / kDay * kDay;
      out.push_back(stored);
    });
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }
  std::vector<ActivityRecord> Replicated() {
    std::vector<ActivityRecord> out;
    Status st = index_->Scan([&](const ActivityRecord& r) { out.push_back(r); });
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }
  int64_t SourcePosition() { return static_cast<int64_t>(*source_->ActivityChangeCounter()); }
  void Record(const std::vector<ActivityRecord>& rows) {
    Status st = source_->RecordActivity(rows);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void Put(const std::vector<ActivityValue>& values) {
    Status st = source_->PutActivityValues(values);
    ASSERT_TRUE(st.ok()) << st.message();
  }

  adserver::testing::TestDatabase db_;
  adserver::testing::TempDir dir_;
  std::unique_ptr<PostgresActivityStore> source_;
  std::shared_ptr<LmdbActivityIndex> index_;
  std::vector<Id> projects_;
};

TEST_F(ActivityReplicaTest, BootstrapsFromASnapshotThenFollowsTheLog) {
  const Id a = projects_[0], b = projects_[1];
  std::vector<ActivityRecord> rows;
  for (uint32_t w = 0; w < 40; ++w) rows.push_back(Row(w, w % 3 ? a : b, kNow + w * 3600, 1 + w));
  Record(rows);
  auto replica = NewReplica(/*per_batch=*/4);
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(replica->stats().bootstraps, 1u);
  EXPECT_EQ(replica->position(), SourcePosition());
  EXPECT_EQ(Replicated(), Expected());
  EXPECT_EQ(*index_->ReplicaPosition(), static_cast<uint64_t>(SourcePosition()));

  const uint64_t counter = index_->ChangeCounter();
  Record({Row(1, a, kNow + 30 * kDay, 5), Row(500, b, kNow, 1), Row(3, b, kNow, 2)});
  std::vector<ActivityValue> removal{{.row = Row(2, a, 0, 0), .removed = true}};
  Put(removal);
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(replica->stats().bootstraps, 1u) << "followed, not bootstrapped again";
  EXPECT_EQ(replica->stats().changes_applied, 4u);
  EXPECT_EQ(replica->position(), SourcePosition());
  EXPECT_EQ(Replicated(), Expected());
  EXPECT_NE(index_->ChangeCounter(), counter) << "the read cache refresh sees the change";
}

TEST_F(ActivityReplicaTest, ReapplyingChangesAlreadyAppliedChangesNothing) {
  const Id a = projects_[0];
  auto replica = NewReplica();
  ASSERT_TRUE(replica->Step().ok()) << "an empty source bootstraps an empty index";
  Record({Row(1, a, kNow, 1), Row(2, a, kNow, 1)});
  Record({Row(1, a, kNow + kDay, 1)});
  ASSERT_TRUE(replica->Step().ok());
  std::vector<ActivityRecord> once = Replicated();
  ASSERT_EQ(once, Expected());
  // A crash after the LMDB commit but before the position moved in memory: the same entries
  // again.
  Result<ActivityChanges> all = source_->ChangesAfter(0, 100);
  ASSERT_TRUE(all.ok());
  std::vector<ActivityValue> values;
  for (const auto& c : all->changes) values.push_back(c.value);
  ASSERT_TRUE(index_->PutReplicaValues(values, static_cast<uint64_t>(all->position)).ok());
  ASSERT_TRUE(index_->PutReplicaValues(values, static_cast<uint64_t>(all->position)).ok());
  EXPECT_EQ(Replicated(), once);
}

// The live indexer's leader applies a block (RecordActivity), then a reorg undoes it: it writes
// the restored values (the entry the block created is removed). Every replica follows both.
TEST_F(ActivityReplicaTest, AnUndoWrittenAsAbsoluteValuesReachesTheReplica) {
  const Id a = projects_[0], b = projects_[1];
  Record({Row(1, a, kNow, 2)});
  auto replica = NewReplica();
  ASSERT_TRUE(replica->Step().ok());
  const std::vector<ActivityRecord> before_block = Replicated();
  Record({Row(1, a, kNow + 2 * kDay, 1), Row(1, b, kNow + 2 * kDay, 1)});
  ASSERT_TRUE(replica->Step().ok());
  ASSERT_EQ(Replicated(), Expected());
  ASSERT_NE(Replicated(), before_block);
  std::vector<ActivityValue> undo{{.row = Row(1, a, kNow, 2)},
                                  {.row = Row(1, b, 0, 0), .removed = true}};
  Put(undo);
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(Replicated(), before_block);
  EXPECT_EQ(Replicated(), Expected());
}

TEST_F(ActivityReplicaTest, ARestartedNodeFollowsOnFromTheIndexsPosition) {
  const Id a = projects_[0];
  Record({Row(1, a, kNow, 1)});
  ASSERT_TRUE(NewReplica()->Step().ok());
  Record({Row(2, a, kNow, 1)});
  OpenIndex();  // the process restarts
  auto replica = NewReplica();
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(replica->stats().bootstraps, 0u);
  EXPECT_EQ(replica->stats().changes_applied, 1u);
  EXPECT_EQ(Replicated(), Expected());
}

// Down longer than the log's retention: the index is not empty, so the bootstrap writes only
// what differs, wallets deleted meanwhile included.
TEST_F(ActivityReplicaTest, AReplicaBehindThePrunedLogBootstrapsAgain) {
  const Id a = projects_[0], b = projects_[1];
  std::vector<ActivityRecord> rows;
  for (uint32_t w = 0; w < 30; ++w) rows.push_back(Row(w, a, kNow, 1));
  Record(rows);
  auto replica = NewReplica();
  ASSERT_TRUE(replica->Step().ok());
  Record({Row(5, a, kNow + kDay, 1), Row(5, b, kNow, 1), Row(100, b, kNow, 1)});
  std::vector<ActivityValue> removals;
  for (uint32_t w : {0u, 7u, 29u}) removals.push_back({.row = Row(w, a, 0, 0), .removed = true});
  Put(removals);
  ASSERT_GT(*source_->PruneChangesBefore(int64_t{1} << 40), 0);
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(replica->stats().bootstraps, 2u);
  EXPECT_EQ(replica->position(), SourcePosition());
  EXPECT_EQ(Replicated(), Expected());
  EXPECT_EQ(index_->wallet_count(), 28u);
}

// A bootstrap cut short leaves no position: the next start bootstraps again (into the
// non-empty index) instead of following from a position the index does not reflect.
TEST_F(ActivityReplicaTest, AnIndexWithoutAPositionIsBootstrappedNotFollowed) {
  const Id a = projects_[0];
  Record({Row(1, a, kNow, 1), Row(2, a, kNow, 1)});
  ASSERT_TRUE(index_->Record({Row(9, a, kNow, 4)}).ok());  // left by an earlier load
  ASSERT_FALSE(index_->ReplicaPosition()->has_value());
  auto replica = NewReplica();
  ASSERT_TRUE(replica->Step().ok());
  EXPECT_EQ(replica->stats().bootstraps, 1u);
  EXPECT_EQ(Replicated(), Expected());
}

}  // namespace
}  // namespace adserver::app
