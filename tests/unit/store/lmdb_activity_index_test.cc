#include "store/lmdb/lmdb_activity_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "store/lmdb/detail/activity_codec.h"

namespace adserver::store {
namespace {

using decision::Interaction;

Address Wallet(uint8_t n) {
  Address a;
  a.bytes[0] = n;
  a.bytes[19] = static_cast<uint8_t>(n * 7);
  return a;
}

class LmdbActivityIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lmdb_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto index = LmdbActivityIndex::Open(dir_.string());
    ASSERT_TRUE(index.ok()) << index.status().message();
    index_ = *index;
  }
  void TearDown() override {
    index_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::vector<Interaction> Get(const Address& w) {
    std::span<const Interaction> s = index_->Lookup(w);
    return {s.begin(), s.end()};
  }
  std::filesystem::path dir_;
  std::shared_ptr<LmdbActivityIndex> index_;
};

TEST(ActivityCodecTest, RoundTripsSortedInteractions) {
  std::vector<Interaction> in = {
      {.project_id = 3, .chain_id = 1, .last_seen_day = 20000, .count = 1},
      {.project_id = 3, .chain_id = 8453, .last_seen_day = 5, .count = 300},
      {.project_id = 900000, .chain_id = 11155111, .last_seen_day = 65535, .count = 4000000000u}};
  std::string bytes;
  detail::EncodeInteractions(in, bytes);
  std::vector<Interaction> out;
  ASSERT_TRUE(detail::DecodeInteractions(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, out));
  EXPECT_EQ(out, in);
}

TEST(ActivityCodecTest, TypicalInteractionTakesAtMostEightBytes) {
  std::vector<Interaction> in;
  for (uint32_t p = 1; p <= 5; ++p) {
    in.push_back({.project_id = p * 97, .chain_id = 1, .last_seen_day = 20400, .count = 12});
  }
  std::string bytes;
  detail::EncodeInteractions(in, bytes);
  EXPECT_LE(bytes.size(), 5u * 8u);
}

TEST(ActivityCodecTest, RejectsTruncatedValue) {
  std::vector<Interaction> in = {
      {.project_id = 3, .chain_id = 1, .last_seen_day = 20000, .count = 1}};
  std::string bytes;
  detail::EncodeInteractions(in, bytes);
  std::vector<Interaction> out;
  EXPECT_FALSE(detail::DecodeInteractions(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 1}, out));
}

TEST_F(LmdbActivityIndexTest, RecordMergesByProjectAndChain) {
  ASSERT_TRUE(index_
                  ->Record({{Wallet(1), 9, 1, 5 * 86400, 1},
                            {Wallet(1), 3, 137, 6 * 86400, 2},
                            {Wallet(2), 4, 1, 8 * 86400, 4}})
                  .ok());
  ASSERT_TRUE(
      index_->Record({{Wallet(1), 3, 137, 4 * 86400, 5}, {Wallet(1), 3, 1, 7 * 86400, 3}}).ok());
  EXPECT_EQ(Get(Wallet(1)), (std::vector<Interaction>{
                                {.project_id = 3, .chain_id = 1, .last_seen_day = 7, .count = 3},
                                {.project_id = 3, .chain_id = 137, .last_seen_day = 6, .count = 7},
                                {.project_id = 9, .chain_id = 1, .last_seen_day = 5, .count = 1}}));
  EXPECT_TRUE(Get(Wallet(3)).empty());
  EXPECT_EQ(index_->wallet_count(), 2u);
}

TEST_F(LmdbActivityIndexTest, LookupAllKeepsEverySpanOfTheBatchValid) {
  ASSERT_TRUE(index_->Record({{Wallet(1), 1, 1, 86400, 1}, {Wallet(2), 2, 1, 86400, 1}}).ok());
  std::vector<Address> wallets = {Wallet(1), Wallet(9), Wallet(2)};
  std::vector<std::span<const Interaction>> got;
  index_->LookupAll(wallets, [&](std::span<const Interaction> s) { got.push_back(s); });
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(got[0].size(), 1u);
  EXPECT_EQ(got[0][0].project_id, 1u);
  EXPECT_TRUE(got[1].empty());
  ASSERT_EQ(got[2].size(), 1u);
  EXPECT_EQ(got[2][0].project_id, 2u);
}

TEST_F(LmdbActivityIndexTest, ReadersSeeEachCommitAndChangeCounterMoves) {
  uint64_t before = index_->ChangeCounter();
  EXPECT_TRUE(Get(Wallet(1)).empty());  // the reader's transaction exists now
  ASSERT_TRUE(index_->Record({{Wallet(1), 1, 1, 86400, 1}}).ok());
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);
  EXPECT_GT(index_->ChangeCounter(), before);
}

TEST_F(LmdbActivityIndexTest, RejectsNonPositiveIds) {
  EXPECT_EQ(index_->Record({{Wallet(1), 0, 1, 86400, 1}}).code(), Code::kInvalidArgument);
  EXPECT_EQ(index_->wallet_count(), 0u);
}

TEST_F(LmdbActivityIndexTest, LoadSortedAppendsAndScanReadsBack) {
  int n = 0;
  ASSERT_TRUE(index_
                  ->LoadSorted([&](Address& w, std::vector<Interaction>& items) {
                    if (n == 100) return false;
                    w = Wallet(static_cast<uint8_t>(n + 1));
                    items.push_back(
                        {.project_id = 5, .chain_id = 1, .last_seen_day = 10, .count = 2});
                    ++n;
                    return true;
                  })
                  .ok());
  size_t rows = 0;
  ASSERT_TRUE(index_
                  ->Scan([&](const ActivityRecord& r) {
                    EXPECT_EQ(r.project_id, 5);
                    EXPECT_EQ(r.last_seen, 10 * 86400);
                    ++rows;
                  })
                  .ok());
  EXPECT_EQ(rows, 100u);
  EXPECT_EQ(index_->LoadSorted([](Address&, std::vector<Interaction>&) { return false; }).code(),
            Code::kConflict);
}

TEST_F(LmdbActivityIndexTest, ConcurrentReadersNeverSeeTornValues) {
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        for (const Interaction& i : index_->Lookup(Wallet(1))) {
          if (i.count != i.project_id) bad.fetch_add(1);
        }
      }
    });
  }
  for (uint32_t p = 1; p <= 200; ++p) {
    ASSERT_TRUE(index_->Record({{Wallet(1), p, 1, 86400, p}}).ok());
  }
  stop.store(true);
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(Get(Wallet(1)).size(), 200u);
}

// --- serving read cache (wallet table + change log) ---------------------------------------------

ActivityRecord Row(const Address& w, Id project, int64_t day, int64_t count = 1) {
  return {
      .wallet = w, .project_id = project, .chain_id = 1, .last_seen = day * 86400, .count = count};
}

Address NumberedWallet(uint32_t i) {
  Address a;
  a.bytes[0] = 0xA0;
  std::memcpy(a.bytes.data() + 1, &i, sizeof i);
  return a;
}

// More wallets than one change-log entry lists (kMaxLoggedWallets): logged as a bulk change.
std::vector<ActivityRecord> BulkRows() {
  std::vector<ActivityRecord> rows;
  for (uint32_t i = 0; i < 5000; ++i) rows.push_back(Row(NumberedWallet(i), 9, 110));
  return rows;
}

constexpr ReadCacheOptions kEagerCache{.max_recent_wallets = 3,
                                       .min_rebuild_interval = std::chrono::milliseconds(0),
                                       .quiet_period = std::chrono::milliseconds(0),
                                       .max_stale = std::chrono::milliseconds(0),
                                       .min_wallets_kept_through_bulk = 0};

TEST_F(LmdbActivityIndexTest, ReadCacheAnswersFromTableAndSeesLaterWrites) {
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100), Row(Wallet(2), 6, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().table);  // none on disk yet
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);  // read from LMDB meanwhile
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  ReadCacheStatus status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table);
  EXPECT_EQ(status.table_wallets, 2u);
  EXPECT_EQ(status.recent_wallets, 0u);
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(Wallet(2)),
            (std::vector<Interaction>{
                {.project_id = 6, .chain_id = 1, .last_seen_day = 100, .count = 1}}));

  // A change to a wallet of the table, and a new wallet: seen after the next refresh.
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 120, 2), Row(Wallet(3), 7, 120)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table);
  EXPECT_EQ(status.recent_wallets, 2u);
  EXPECT_EQ(Get(Wallet(1)),
            (std::vector<Interaction>{
                {.project_id = 5, .chain_id = 1, .last_seen_day = 120, .count = 3}}));
  EXPECT_EQ(Get(Wallet(3)).size(), 1u);
  EXPECT_EQ(Get(Wallet(2)).size(), 1u);  // unchanged: still from the table
  EXPECT_TRUE(Get(Wallet(9)).empty());

  // Past max_recent_wallets the table asks to be rebuilt; the rebuilt one has no recent set.
  ASSERT_TRUE(index_->Record({Row(Wallet(4), 8, 120), Row(Wallet(5), 8, 120)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  status = index_->read_cache().GetStatus();
  EXPECT_EQ(status.table_wallets, 5u);
  EXPECT_EQ(status.recent_wallets, 0u);
  EXPECT_EQ(Get(Wallet(5)).size(), 1u);
}

TEST_F(LmdbActivityIndexTest, ReadCacheKeepsTheTableThroughABulkWriteUntilRebuilt) {
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  ASSERT_TRUE(index_->Record(BulkRows()).ok());  // a bulk marker in the change log
  // A later change of one wallet (a block) is logged wallet by wallet as usual.
  ASSERT_TRUE(index_->Record({Row(Wallet(2), 6, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  ReadCacheStatus status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table);  // still answering
  EXPECT_TRUE(status.bulk_pending);
  EXPECT_EQ(status.recent_wallets, 1u);
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());  // quiet_period 0
  EXPECT_TRUE(Get(NumberedWallet(4999)).empty());  // the bulk change: not served yet
  EXPECT_EQ(Get(Wallet(2)).size(), 1u);             // the later change: at once, from LMDB
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);             // unchanged: from the table
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  status = index_->read_cache().GetStatus();
  EXPECT_EQ(status.table_wallets, 5002u);
  EXPECT_FALSE(status.bulk_pending);
  EXPECT_EQ(status.recent_wallets, 0u);
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(NumberedWallet(4999)).size(), 1u);
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);
}

TEST_F(LmdbActivityIndexTest, ReadCacheDropsASmallTableOnABulkWrite) {
  ReadCacheOptions small = kEagerCache;
  small.min_wallets_kept_through_bulk = 1000;
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(small).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());  // one wallet: under the 1000
  ASSERT_TRUE(index_->Record(BulkRows()).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().table);
  EXPECT_EQ(Get(NumberedWallet(4999)).size(), 1u);  // LMDB answers at once
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());  // 5001 wallets: kept through the next one
  ASSERT_TRUE(index_->Record(BulkRows()).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().table);
  EXPECT_TRUE(index_->read_cache().GetStatus().bulk_pending);
}

TEST_F(LmdbActivityIndexTest, ReadCacheWaitsForBulkWritesToPauseBeforeRebuilding) {
  ReadCacheOptions patient = kEagerCache;
  patient.quiet_period = std::chrono::hours(1);
  patient.max_stale = std::chrono::hours(1);
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(patient).ok());
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());  // no table at all yet: at once
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  ASSERT_TRUE(index_->Record(BulkRows()).ok());  // a bulk marker in the change log
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().table);  // the table answers meanwhile
  EXPECT_TRUE(index_->read_cache().GetStatus().bulk_pending);
  // The import may still be writing; even too many recent wallets do not hurry the rebuild.
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  for (uint8_t w = 20; w < 25; ++w) ASSERT_TRUE(index_->Record({Row(Wallet(w), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_EQ(index_->read_cache().GetStatus().recent_wallets, 5u);
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(Wallet(22)).size(), 1u);
  // Too many recent wallets on a table without a pending bulk change: replaced without waiting.
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().bulk_pending);
  for (uint8_t w = 30; w < 35; ++w) ASSERT_TRUE(index_->Record({Row(Wallet(w), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().table);
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
}

TEST_F(LmdbActivityIndexTest, ReadCacheRetriesAFailedBuildOnlyAfterTheInterval) {
  ReadCacheOptions slow = kEagerCache;
  slow.min_rebuild_interval = std::chrono::hours(1);
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(slow).ok());
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());  // never built: at once, whatever the uptime
  // The build cannot create its temporary file (a directory is in the way).
  std::filesystem::create_directories(dir_ / ("wallets.table.tmp." + std::to_string(getpid())));
  EXPECT_EQ(index_->read_cache().Rebuild().code(), Code::kUnavailable);
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());  // not retried at every poll
  EXPECT_FALSE(index_->read_cache().GetStatus().table);
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);  // LMDB answers
}

// The rebuild intervals run on the clock the cache is given (issue 41 item 1), so no test waits
// for them: a bulk change is rebuilt once the index has been quiet for quiet_period and the last
// rebuild is min_rebuild_interval old, or once it is max_stale old whatever the writes.
TEST_F(LmdbActivityIndexTest, ReadCacheIntervalsRunOnTheInjectedClock) {
  FakeClock clock;
  ReadCacheOptions timed = kEagerCache;
  timed.min_rebuild_interval = std::chrono::seconds(4);
  timed.quiet_period = std::chrono::seconds(2);
  timed.max_stale = std::chrono::seconds(6);
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(timed, clock).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  ASSERT_TRUE(index_->Record(BulkRows()).ok());  // an import begins
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().bulk_pending);
  clock.Advance(std::chrono::seconds(3));  // quiet for 3 s, but rebuilt 3 s ago
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  clock.Advance(std::chrono::seconds(1));  // 4 s since the rebuild, quiet for 4 s
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().bulk_pending);

  // An import that never pauses: every second a bulk change, so never quiet for 2 s...
  for (int second = 0; second < 5; ++second) {
    ASSERT_TRUE(index_->Record(BulkRows()).ok());
    ASSERT_TRUE(index_->read_cache().Refresh().ok());
    clock.Advance(std::chrono::seconds(1));
    ASSERT_FALSE(index_->read_cache().NeedsRebuild()) << "second " << second;
  }
  // ...is rebuilt once the table has lacked its first bulk change for max_stale.
  ASSERT_TRUE(index_->Record(BulkRows()).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
}

TEST_F(LmdbActivityIndexTest, ReadCacheSeesUndoneBlocks) {
  ASSERT_TRUE(index_->chain_ledger().ResetCheckpoint(1, {.next_block = 10, .recent = {}}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  IndexedBlock block{
      .number = 10, .hash = "0xa", .parent_hash = "", .rows = {Row(Wallet(7), 3, 50)}};
  ASSERT_TRUE(index_->chain_ledger().ApplyBlocks(1, std::span<const IndexedBlock>(&block, 1)).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_EQ(Get(Wallet(7)).size(), 1u);
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());  // the table now has the block's wallet
  EXPECT_EQ(index_->read_cache().GetStatus().recent_wallets, 0u);
  EXPECT_EQ(Get(Wallet(7)).size(), 1u);
  ASSERT_TRUE(index_->chain_ledger().UndoBlocksAfter(1, 9).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(Get(Wallet(7)).empty());
  EXPECT_TRUE(index_->read_cache().GetStatus().table);
}

TEST_F(LmdbActivityIndexTest, ReadCacheServesAnInMemoryCopyAndKeepsCatchingUp) {
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100), Row(Wallet(2), 6, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().LoadIntoMemory().ok());  // no table yet: nothing to do
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().table_in_memory);  // mapped first
  ASSERT_TRUE(index_->Record({Row(Wallet(3), 7, 120)}).ok());  // after the table
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  ASSERT_TRUE(index_->read_cache().LoadIntoMemory().ok());
  ReadCacheStatus status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table);
  EXPECT_TRUE(status.table_in_memory);
  EXPECT_EQ(status.recent_wallets, 1u);  // the refreshed view was taken over
  EXPECT_EQ(Get(Wallet(2)).size(), 1u);
  EXPECT_EQ(Get(Wallet(3)).size(), 1u);
  // Later writes are seen through the copy as through the mapping.
  ASSERT_TRUE(index_->Record({Row(Wallet(2), 6, 130, 4)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().table_in_memory);
  EXPECT_EQ(Get(Wallet(2)),
            (std::vector<Interaction>{
                {.project_id = 6, .chain_id = 1, .last_seen_day = 130, .count = 5}}));
  // A rebuild publishes the new file mapped, then copies it again.
  ASSERT_TRUE(index_->Record({Row(Wallet(4), 8, 130), Row(Wallet(5), 8, 130)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().table_in_memory);
  ASSERT_TRUE(index_->read_cache().LoadIntoMemory().ok());
  status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table_in_memory);
  EXPECT_EQ(status.table_wallets, 5u);
  EXPECT_EQ(Get(Wallet(5)).size(), 1u);
}

TEST_F(LmdbActivityIndexTest, ReadCacheStaysMappedWhenInMemoryIsOff) {
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ReadCacheOptions options = kEagerCache;
  options.in_memory = false;
  ASSERT_TRUE(index_->read_cache().Enable(options).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  ASSERT_TRUE(index_->read_cache().LoadIntoMemory().ok());
  EXPECT_TRUE(index_->read_cache().GetStatus().table);
  EXPECT_FALSE(index_->read_cache().GetStatus().table_in_memory);
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);
}

TEST_F(LmdbActivityIndexTest, ReadCacheReopensTheTableOnDiskAndCatchesUp) {
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  ASSERT_TRUE(index_->Record({Row(Wallet(2), 6, 100)}).ok());  // after the table
  index_.reset();
  auto reopened = LmdbActivityIndex::Open(dir_.string());
  ASSERT_TRUE(reopened.ok());
  index_ = *reopened;
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ReadCacheStatus status = index_->read_cache().GetStatus();
  EXPECT_TRUE(status.table);
  EXPECT_EQ(status.recent_wallets, 1u);
  EXPECT_FALSE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(Wallet(1)).size(), 1u);
  EXPECT_EQ(Get(Wallet(2)).size(), 1u);
}

TEST_F(LmdbActivityIndexTest, ReadCacheRebuildsWhenTheChangeLogWasPrunedPastIt) {
  index_.reset();
  auto fast = LmdbActivityIndex::Open(dir_.string(), {.no_sync = true});
  ASSERT_TRUE(fast.ok());
  index_ = *fast;
  ASSERT_TRUE(index_->Record({Row(Wallet(1), 5, 100)}).ok());
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  // A bulk change (which alone would keep the table, kEagerCache) and then more transactions
  // than the log keeps, with no refresh in between (a stopped server): the table is dropped.
  ASSERT_TRUE(index_->Record(BulkRows()).ok());
  for (int i = 0; i < 4200; ++i) ASSERT_TRUE(index_->Record({Row(Wallet(2), 6, 100 + i)}).ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  EXPECT_FALSE(index_->read_cache().GetStatus().table);
  EXPECT_TRUE(index_->read_cache().NeedsRebuild());
  EXPECT_EQ(Get(Wallet(2))[0].last_seen_day, 4299u);
  EXPECT_EQ(Get(NumberedWallet(4999)).size(), 1u);  // LMDB answers everything meanwhile
}

TEST_F(LmdbActivityIndexTest, ReadCacheAfterAFirstBulkLoadBuildsATable) {
  ASSERT_TRUE(index_->read_cache().Enable(kEagerCache).ok());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());  // of the empty index
  uint32_t n = 0;
  ASSERT_TRUE(index_
                  ->LoadSorted([&](Address& w, std::vector<Interaction>& items) {
                    if (n == 100) return false;
                    w = NumberedWallet(n);
                    w.bytes[1] = static_cast<uint8_t>(n);  // increasing
                    items.push_back(
                        {.project_id = 1, .chain_id = 1, .last_seen_day = 9, .count = 1});
                    ++n;
                    return true;
                  })
                  .ok());
  ASSERT_TRUE(index_->read_cache().Refresh().ok());
  // The empty index's table answers until the rebuild: the load is not served yet.
  EXPECT_TRUE(index_->read_cache().GetStatus().table);
  EXPECT_TRUE(index_->read_cache().GetStatus().bulk_pending);
  EXPECT_TRUE(Get(NumberedWallet(5)).empty());
  ASSERT_TRUE(index_->read_cache().Rebuild().ok());
  EXPECT_EQ(index_->read_cache().GetStatus().table_wallets, 100u);
  EXPECT_FALSE(index_->read_cache().GetStatus().bulk_pending);
}

}  // namespace
}  // namespace adserver::store
