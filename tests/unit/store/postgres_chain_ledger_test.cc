// PostgresActivityStore as the live indexer's ChainLedger in cluster mode (store/chain_ledger.h):
// blocks, their undo values and the chain's checkpoint committed together, so a new leader
// continues where the last one stopped and undoes its blocks, and no block is applied twice.
// Real PostgreSQL (a database of its own on the test cluster CTest starts).

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"
#include "support/postgres/test_database.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kChain = 31337;

Address Wallet(uint32_t n) {
  Address a;
  a.bytes[0] = static_cast<uint8_t>(n >> 8);
  a.bytes[1] = static_cast<uint8_t>(n);
  a.bytes[19] = 0x7c;
  return a;
}

std::string Hash(uint64_t number, char branch = 'a') {
  return "0x" + std::string(62, branch) + std::to_string(number % 10) + "0";
}

class PostgresChainLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ADSERVER_REQUIRE_TEST_DATABASE(db_);
    store_ = Open();
    ASSERT_TRUE(store_);
    auto inventory = PostgresStore::Open(db_.url());
    ASSERT_TRUE(inventory.ok()) << inventory.status().message();
    inventory_ = std::move(*inventory);
    ProjectRecord p;
    p.slug = p.name = "p";
    project_ = inventory_->CreateProject(p, kNow)->id;
  }
  std::unique_ptr<PostgresActivityStore> Open() {
    auto s = PostgresActivityStore::Open(db_.url());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  ActivityRecord Row(uint32_t wallet, int64_t day, int64_t count = 1) const {
    return {.wallet = Wallet(wallet),
            .project_id = project_,
            .chain_id = kChain,
            .last_seen = day,
            .count = count};
  }
  // Block `number` of `branch` (its parent of `parent_branch`) with one interaction per wallet
  // of `wallets`.
  IndexedBlock Block(uint64_t number, std::vector<uint32_t> wallets, char branch = 'a',
                     char parent_branch = 'a') const {
    IndexedBlock b{.number = number,
                   .hash = Hash(number, branch),
                   .parent_hash = Hash(number - 1, parent_branch),
                   .rows = {}};
    for (uint32_t w : wallets) b.rows.push_back(Row(w, kNow + int64_t(number) * 86400));
    return b;
  }
  // The wallet's (last_seen, count), or (0, 0) if it has no activity.
  std::pair<int64_t, int64_t> Value(uint32_t wallet) {
    Result<std::vector<ActivityRecord>> rows = store_->ActivityForWallet(Wallet(wallet));
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    if (!rows.ok() || rows->empty()) return {0, 0};
    return {rows->front().last_seen, rows->front().count};
  }
  Status Apply(PostgresActivityStore& s, std::vector<IndexedBlock> blocks) {
    return s.ApplyBlocks(kChain, blocks);
  }

  adserver::testing::TestDatabase db_;
  std::unique_ptr<PostgresActivityStore> store_;
  std::unique_ptr<PostgresStore> inventory_;
  Id project_ = 0;
};

TEST_F(PostgresChainLedgerTest, ACheckpointIsNotFoundUntilResetAndKeepsTheJournalGiven) {
  EXPECT_EQ(store_->LoadCheckpoint(kChain).status().code(), Code::kNotFound);
  ChainCheckpoint start{.next_block = 100,
                        .recent = {{98, Hash(98), Hash(97)}, {99, Hash(99), ""}}};
  ASSERT_TRUE(store_->ResetCheckpoint(kChain, start).ok());
  Result<ChainCheckpoint> loaded = store_->LoadCheckpoint(kChain);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->next_block, 100u);
  EXPECT_EQ(loaded->recent, start.recent);
  EXPECT_EQ(store_->ResetCheckpoint(kChain, {.next_block = 100, .recent = {{97, "x", ""}}}).code(),
            Code::kInvalidArgument);
}

// The leader applies blocks 100 and 101 and dies; another node's store continues from
// PostgreSQL's checkpoint, finds 101 abandoned by a reorg and undoes it with the dead leader's
// journal: values restored, an entry 101 created removed, an entry imported before kept.
TEST_F(PostgresChainLedgerTest, ANewLeaderContinuesFromTheCheckpointAndUndoesTheOldLeadersBlocks) {
  ASSERT_TRUE(store_->RecordActivity({Row(1, kNow, 5)}).ok());  // an import before the blocks
  ASSERT_TRUE(store_->ResetCheckpoint(kChain, {.next_block = 100, .recent = {}}).ok());
  ASSERT_TRUE(Apply(*store_, {Block(100, {1}), Block(101, {1, 2})}).ok());
  EXPECT_EQ(Value(1).second, 7);
  EXPECT_EQ(Value(2).second, 1);

  auto successor = Open();
  ASSERT_TRUE(successor);
  Result<ChainCheckpoint> cp = successor->LoadCheckpoint(kChain);
  ASSERT_TRUE(cp.ok()) << cp.status().message();
  EXPECT_EQ(cp->next_block, 102u);
  ASSERT_EQ(cp->recent.size(), 2u);
  EXPECT_EQ(cp->recent.back().hash, Hash(101));
  ASSERT_TRUE(successor->UndoBlocksAfter(kChain, 100).ok());
  EXPECT_EQ(Value(1), std::make_pair(kNow + 100 * 86400, int64_t{6}));
  EXPECT_EQ(Value(2), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(successor->LoadCheckpoint(kChain)->next_block, 101u);
  ASSERT_TRUE(Apply(*successor, {Block(101, {3}, 'b')}).ok());
  EXPECT_EQ(Value(3).second, 1);
  ASSERT_TRUE(successor->UndoBlocksAfter(kChain, 99).ok());
  EXPECT_EQ(Value(1), std::make_pair(kNow, int64_t{5}));
  EXPECT_EQ(Value(3).second, 0);
  EXPECT_TRUE(successor->LoadCheckpoint(kChain)->recent.empty());
}

// A block already committed (a leader that crashed before finishing its step, or two nodes
// both believing they lead) is refused with nothing written: never applied twice.
TEST_F(PostgresChainLedgerTest, ABlockIsNeverAppliedTwice) {
  ASSERT_TRUE(store_->ResetCheckpoint(kChain, {.next_block = 100, .recent = {}}).ok());
  ASSERT_TRUE(Apply(*store_, {Block(100, {1})}).ok());
  EXPECT_EQ(Apply(*store_, {Block(100, {1})}).code(), Code::kConflict);
  EXPECT_EQ(Apply(*store_, {Block(102, {1})}).code(), Code::kConflict);
  // A child of another branch's 100 does not follow the journal.
  EXPECT_EQ(Apply(*store_, {Block(101, {1}, 'z', 'z')}).code(), Code::kConflict);
  EXPECT_EQ(Value(1).second, 1);

  // Two leaders racing with the same blocks: exactly one commits.
  auto second = Open();
  ASSERT_TRUE(second);
  std::atomic<int> committed{0}, conflicts{0};
  auto lead = [&](PostgresActivityStore& s) {
    for (uint64_t n = 101; n < 131; ++n) {
      Status st = Apply(s, {Block(n, {1, 2})});
      if (st.ok()) ++committed;
      if (st.code() == Code::kConflict) ++conflicts;
    }
  };
  std::thread a(lead, std::ref(*store_)), b(lead, std::ref(*second));
  a.join();
  b.join();
  EXPECT_EQ(committed.load(), 30);
  EXPECT_EQ(conflicts.load(), 30);
  EXPECT_EQ(Value(1).second, 31);
  EXPECT_EQ(Value(2).second, 30);
  EXPECT_EQ(store_->LoadCheckpoint(kChain)->next_block, 131u);
}

TEST_F(PostgresChainLedgerTest, TheJournalKeepsTheLast64BlocksAndADeeperUndoChangesNothing) {
  ASSERT_TRUE(store_->ResetCheckpoint(kChain, {.next_block = 100, .recent = {}}).ok());
  std::vector<IndexedBlock> blocks;
  for (uint64_t n = 100; n < 170; ++n) blocks.push_back(Block(n, {uint32_t(n % 3)}));
  ASSERT_TRUE(Apply(*store_, blocks).ok());
  Result<ChainCheckpoint> cp = store_->LoadCheckpoint(kChain);
  ASSERT_TRUE(cp.ok());
  ASSERT_EQ(cp->recent.size(), kJournalDepth);
  EXPECT_EQ(cp->recent.front().number, 170 - kJournalDepth);
  int64_t before = Value(0).second + Value(1).second + Value(2).second;
  EXPECT_EQ(store_->UndoBlocksAfter(kChain, 100).code(), Code::kConflict);
  EXPECT_EQ(Value(0).second + Value(1).second + Value(2).second, before);
  EXPECT_EQ(store_->LoadCheckpoint(kChain)->next_block, 170u);
  // As deep as the journal goes is fine.
  ASSERT_TRUE(store_->UndoBlocksAfter(kChain, 170 - kJournalDepth - 1).ok());
  EXPECT_EQ(Value(0).second + Value(1).second + Value(2).second, 170 - kJournalDepth - 100);
}

// Every node's replica follows the undo: the log carries the restored values and removals.
TEST_F(PostgresChainLedgerTest, AnUndoIsLoggedForTheReplicas) {
  ASSERT_TRUE(store_->ResetCheckpoint(kChain, {.next_block = 100, .recent = {}}).ok());
  ASSERT_TRUE(Apply(*store_, {Block(100, {1}), Block(101, {1, 2})}).ok());
  int64_t position = static_cast<int64_t>(*store_->ActivityChangeCounter());
  ASSERT_TRUE(store_->UndoBlocksAfter(kChain, 100).ok());
  Result<ActivityChanges> changes = store_->ChangesAfter(position, 100);
  ASSERT_TRUE(changes.ok()) << changes.status().message();
  ASSERT_EQ(changes->changes.size(), 2u);
  for (const ActivityChange& c : changes->changes) {
    if (c.value.row.wallet == Wallet(2)) {
      EXPECT_TRUE(c.value.removed);
    } else {
      EXPECT_FALSE(c.value.removed);
      EXPECT_EQ(c.value.row.count, 1);
    }
  }
}

}  // namespace
}  // namespace adserver::store
