// The live indexer's undo journal in the LMDB activity index (ApplyBlocks / UndoBlocksAfter),
// against a real LMDB environment in a temporary directory.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "store/lmdb/detail/block_journal.h"
#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::store {
namespace {

constexpr int64_t kChain = 1;
constexpr int64_t kDay = 86400;

Address Wallet(uint8_t n) {
  Address a;
  a.bytes[0] = n;
  a.bytes[19] = static_cast<uint8_t>(n * 3);
  return a;
}

ActivityRecord Row(uint8_t wallet, Id project, int64_t day, int64_t chain = kChain) {
  return {Wallet(wallet), project, chain, day * kDay, 1};
}

IndexedBlock Block(uint64_t number, std::vector<ActivityRecord> rows) {
  return {.number = number,
          .hash = "0xh" + std::to_string(number),
          .parent_hash = "0xh" + std::to_string(number - 1),
          .rows = std::move(rows)};
}

class LmdbBlockJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lmdb_journal_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    index_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    index_.reset();
    auto index = LmdbActivityIndex::Open(dir_.string());
    ASSERT_TRUE(index.ok()) << index.status().message();
    index_ = *index;
  }
  // Every stored entry, in key order.
  std::vector<ActivityRecord> All() {
    std::vector<ActivityRecord> rows;
    EXPECT_TRUE(index_->Scan([&](const ActivityRecord& r) { rows.push_back(r); }).ok());
    return rows;
  }
  void Apply(std::vector<IndexedBlock> blocks) {
    Status st = index_->chain_ledger().ApplyBlocks(kChain, blocks);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::vector<uint64_t> JournaledBlocks() {
    Result<ChainCheckpoint> cp = index_->chain_ledger().LoadCheckpoint(kChain);
    EXPECT_TRUE(cp.ok());
    std::vector<uint64_t> numbers;
    if (cp.ok()) {
      for (const BlockRef& b : cp->recent) numbers.push_back(b.number);
    }
    return numbers;
  }

  std::filesystem::path dir_;
  std::shared_ptr<LmdbActivityIndex> index_;
};

TEST_F(LmdbBlockJournalTest, UndoingTwoOfThreeBlocksLeavesExactlyTheStateAfterTheFirst) {
  // Before the blocks: wallet 1 uses project 5 on this chain and on chain 137; wallet 2 uses 7.
  ASSERT_TRUE(index_
                  ->Record({{Wallet(1), 5, kChain, 10 * kDay, 3},
                            {Wallet(1), 5, 137, 11 * kDay, 4},
                            {Wallet(2), 7, kChain, 12 * kDay, 2}})
                  .ok());
  // Block 101 changes an existing entry and adds a wallet.
  Apply({Block(101, {Row(1, 5, 20), Row(3, 5, 20)})});
  std::vector<ActivityRecord> after_first = All();
  // Block 102 adds an entry to an existing wallet, a new wallet, and touches wallet 3 again
  // (twice in one block); block 103 changes wallet 2 and adds wallet 5.
  Apply({Block(102, {Row(1, 6, 21), Row(4, 9, 21), Row(3, 5, 21), Row(3, 5, 21)}),
         Block(103, {Row(2, 7, 22), Row(5, 8, 22), Row(1, 5, 22)})});
  ASSERT_NE(All(), after_first);

  Status undo = index_->chain_ledger().UndoBlocksAfter(kChain, 101);
  ASSERT_TRUE(undo.ok()) << undo.ToString();

  EXPECT_EQ(All(), after_first);
  EXPECT_TRUE(index_->Lookup(Wallet(4)).empty());
  EXPECT_TRUE(index_->Lookup(Wallet(5)).empty());
  EXPECT_EQ(index_->wallet_count(), 3u);
  Result<ChainCheckpoint> cp = index_->chain_ledger().LoadCheckpoint(kChain);
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->next_block, 102u);
  EXPECT_EQ(cp->recent, (std::vector<BlockRef>{{101, "0xh101", "0xh100"}}));
}

TEST_F(LmdbBlockJournalTest, UndoingEveryBlockRestoresPreviousValuesAndRemovesNewWallets) {
  ASSERT_TRUE(index_->Record({{Wallet(1), 5, kChain, 10 * kDay, 3}}).ok());
  std::vector<ActivityRecord> before = All();
  Apply({Block(7, {Row(1, 5, 30), Row(2, 5, 30)}), Block(8, {Row(1, 6, 31)})});
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 6).ok());
  EXPECT_EQ(All(), before);
  EXPECT_EQ(index_->wallet_count(), 1u);
  EXPECT_EQ(index_->chain_ledger().LoadCheckpoint(kChain)->next_block, 7u);
  EXPECT_TRUE(JournaledBlocks().empty());
  // The chain goes on from the ancestor.
  Apply({Block(7, {Row(9, 5, 30)})});
  EXPECT_EQ(index_->Lookup(Wallet(9)).size(), 1u);
}

TEST_F(LmdbBlockJournalTest, JournalKeepsOnlyTheLast64Blocks) {
  std::vector<ActivityRecord> after_block_6;
  for (uint64_t n = 1; n <= 70; ++n) {
    Apply({Block(n, {Row(static_cast<uint8_t>(n % 5 + 1), static_cast<Id>(n % 3 + 1), 40)})});
    if (n == 6) after_block_6 = All();
  }
  std::vector<uint64_t> journaled = JournaledBlocks();
  ASSERT_EQ(journaled.size(), kJournalDepth);
  EXPECT_EQ(journaled.front(), 7u);
  EXPECT_EQ(journaled.back(), 70u);

  // Block 6 left the journal: undoing it is refused and changes nothing.
  std::vector<ActivityRecord> now = All();
  EXPECT_EQ(index_->chain_ledger().UndoBlocksAfter(kChain, 5).code(), Code::kConflict);
  EXPECT_EQ(All(), now);
  EXPECT_EQ(index_->chain_ledger().LoadCheckpoint(kChain)->next_block, 71u);

  // All 64 journaled blocks can be undone.
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 6).ok());
  EXPECT_EQ(All(), after_block_6);
}

TEST_F(LmdbBlockJournalTest, BatchesArePrunedToo) {
  std::vector<IndexedBlock> blocks;
  for (uint64_t n = 1; n <= 100; ++n) blocks.push_back(Block(n, {Row(1, 1, 1)}));
  Apply(blocks);
  std::vector<uint64_t> journaled = JournaledBlocks();
  ASSERT_EQ(journaled.size(), kJournalDepth);
  EXPECT_EQ(journaled.front(), 37u);
}

TEST_F(LmdbBlockJournalTest, RefusesBlocksThatDoNotFollowTheCheckpoint) {
  Apply({Block(10, {Row(1, 5, 1)})});
  EXPECT_EQ(index_->chain_ledger().ApplyBlocks(kChain, std::vector{Block(12, {Row(2, 5, 1)})}).code(),
            Code::kConflict);
  EXPECT_EQ(index_->chain_ledger().ApplyBlocks(kChain, std::vector{Block(10, {Row(2, 5, 1)})}).code(),
            Code::kConflict);
  EXPECT_TRUE(index_->Lookup(Wallet(2)).empty());
}

TEST_F(LmdbBlockJournalTest, RefusesRowsOfAnotherChainAndWritesNothing) {
  EXPECT_EQ(
      index_->chain_ledger().ApplyBlocks(kChain, std::vector{Block(1, {Row(1, 5, 1), Row(2, 5, 1, 10)})}).code(),
      Code::kInvalidArgument);
  EXPECT_EQ(index_->wallet_count(), 0u);
  EXPECT_EQ(index_->chain_ledger().LoadCheckpoint(kChain).status().code(), Code::kNotFound);
}

TEST_F(LmdbBlockJournalTest, UndoLeavesOtherChainsAlone) {
  ASSERT_TRUE(index_->chain_ledger().ApplyBlocks(10, std::vector{Block(500, {Row(1, 5, 3, 10)})}).ok());
  Apply({Block(1, {Row(1, 5, 2)})});
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 0).ok());
  std::vector<ActivityRecord> all = All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].chain_id, 10);
  EXPECT_EQ(index_->chain_ledger().LoadCheckpoint(10)->next_block, 501u);
}

TEST_F(LmdbBlockJournalTest, CheckpointAndJournalSurviveReopen) {
  Apply({Block(41, {Row(1, 5, 2)}), Block(42, {Row(2, 5, 2)})});
  Reopen();
  Result<ChainCheckpoint> cp = index_->chain_ledger().LoadCheckpoint(kChain);
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->next_block, 43u);
  EXPECT_EQ(cp->recent.size(), 2u);
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 41).ok());
  EXPECT_TRUE(index_->Lookup(Wallet(2)).empty());
  EXPECT_EQ(index_->Lookup(Wallet(1)).size(), 1u);
}

TEST_F(LmdbBlockJournalTest, ResetCheckpointJournalsBlocksWithNothingToUndo) {
  ASSERT_TRUE(index_->Record({{Wallet(1), 5, kChain, kDay, 1}}).ok());
  ChainCheckpoint legacy{.next_block = 10, .recent = {{8, "0xa", ""}, {9, "0xb", ""}}};
  ASSERT_TRUE(index_->chain_ledger().ResetCheckpoint(kChain, legacy).ok());
  Result<ChainCheckpoint> cp = index_->chain_ledger().LoadCheckpoint(kChain);
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->next_block, 10u);
  EXPECT_EQ(cp->recent, legacy.recent);
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 7).ok());
  EXPECT_EQ(index_->Lookup(Wallet(1)).size(), 1u);
  EXPECT_EQ(index_->chain_ledger().LoadCheckpoint(kChain)->next_block, 8u);
  EXPECT_EQ(index_->chain_ledger().ResetCheckpoint(kChain, {.next_block = 10, .recent = {{7, "0xa", ""}}}).code(),
            Code::kInvalidArgument);
}

TEST_F(LmdbBlockJournalTest, ChangeCounterMovesOnUndo) {
  Apply({Block(1, {Row(1, 5, 2)})});
  uint64_t before = index_->ChangeCounter();
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(kChain, 0).ok());
  EXPECT_GT(index_->ChangeCounter(), before);
}

TEST_F(LmdbBlockJournalTest, JournalDatabasesAreNotWalletsAndLoadSortedStillWorks) {
  ASSERT_TRUE(index_->chain_ledger().ResetCheckpoint(kChain, {.next_block = 1, .recent = {}}).ok());
  EXPECT_EQ(index_->wallet_count(), 0u);
  // Wallets sorting before and after the journal's database names (keys of the main database).
  std::vector<Address> wallets;
  for (int b : {0x00, 0x10, 0x69, 0x70, 0xff}) {
    Address a;
    a.bytes.fill(static_cast<uint8_t>(b));
    wallets.push_back(a);
  }
  size_t i = 0;
  Status st = index_->LoadSorted([&](Address& w, std::vector<decision::Interaction>& items) {
    if (i == wallets.size()) return false;
    w = wallets[i++];
    items.push_back({.project_id = 1, .chain_id = 1, .last_seen_day = 1, .count = 1});
    return true;
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(index_->wallet_count(), wallets.size());
  EXPECT_EQ(All().size(), wallets.size());
}

TEST(BlockJournalCodecTest, RoundTripsAndRejectsTruncation) {
  detail::JournalRecord record{
      .hash = "0xabc",
      .parent_hash = "0xdef",
      .entries = {
          {.wallet = Wallet(1), .project_id = 5, .previous_day = 20000, .previous_count = 7},
          {.wallet = Wallet(2), .project_id = 900000}}};
  std::string bytes;
  detail::EncodeJournalRecord(record, bytes);
  auto span = [](const std::string& s, size_t n) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), n);
  };
  detail::JournalRecord out;
  ASSERT_TRUE(detail::DecodeJournalRecord(span(bytes, bytes.size()), out));
  EXPECT_EQ(out.hash, record.hash);
  EXPECT_EQ(out.parent_hash, record.parent_hash);
  EXPECT_EQ(out.entries, record.entries);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(detail::DecodeJournalRecord(span(bytes, n), out)) << n;
  }
}

}  // namespace
}  // namespace adserver::store
