#include "ingest/chain/chain_indexer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "store/lmdb/lmdb_activity_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/fake_chain_source.h"
#include "support/temp_dir.h"

namespace adserver::ingest::chain {
namespace {

using testing::FakeChainSource;

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kChain = 1;
// How long a test waits for the indexer thread to reach a state before failing.
constexpr std::chrono::seconds kDeadline{60};

Address Addr(uint8_t n) {
  Address a;
  a.bytes[0] = n;
  a.bytes[19] = 0xaa;
  return a;
}

Hash32 Tx(uint8_t n) {
  Hash32 h;
  h.bytes[0] = n;
  h.bytes[31] = 0x7e;
  return h;
}

const Address kSwap = Addr(0xc1);   // project "swap"
const Address kNft = Addr(0xc2);    // project "nft"
const Address kOther = Addr(0xc3);  // no project
const Address kAlice = Addr(1);
const Address kBob = Addr(2);
const Address kCarol = Addr(3);

ChainTransaction Call(uint8_t tx, const Address& from, const Address& to,
                      std::vector<ChainLog> logs = {}) {
  return {.hash = Tx(tx), .from = from, .to = to, .logs = std::move(logs)};
}

int64_t DayStart(int64_t t) { return t / 86400 * 86400; }

// Records what the indexer reports; waits for it from another thread.
class RecordingSink final : public BlockSink {
 public:
  Status OnApplied(int64_t chain_id, std::span<const AppliedBlock> blocks) override {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(chain_id, kChain);
    if (fail_) return UnavailableError("events database is locked");
    applied_.insert(applied_.end(), blocks.begin(), blocks.end());
    cv_.notify_all();
    return OkStatus();
  }
  void set_fail(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = fail;
  }
  void OnReverted(int64_t chain_id, std::span<const RevertedBlock> blocks) override {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(chain_id, kChain);
    reverted_.emplace_back(blocks.begin(), blocks.end());
  }
  std::vector<AppliedBlock> applied() {
    std::lock_guard<std::mutex> lock(mu_);
    return applied_;
  }
  std::vector<std::vector<RevertedBlock>> reverted() {
    std::lock_guard<std::mutex> lock(mu_);
    return reverted_;
  }
  // False if block `number` was not applied within a minute.
  bool WaitForBlock(uint64_t number) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60),
                        [&] { return !applied_.empty() && applied_.back().number >= number; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<AppliedBlock> applied_;
  std::vector<std::vector<RevertedBlock>> reverted_;
  bool fail_ = false;
};

class ChainIndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sqlite = store::SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(sqlite.ok());
    auto index = store::LmdbActivityIndex::Open(dir_.File("activity.lmdb"));
    ASSERT_TRUE(index.ok());
    sqlite_ = std::move(sqlite).value();
    store_ = std::make_unique<store::LmdbActivityStore>(sqlite_, *index);
    swap_ = AddProject("swap", kSwap);
    nft_ = AddProject("nft", kNft);
  }

  int64_t AddProject(const std::string& slug, const Address& contract) {
    store::ProjectRecord p;
    p.slug = slug;
    p.name = slug;
    p.contracts = {{.chain_id = kChain, .address = contract}};
    auto created = sqlite_->CreateProject(p, kNow);
    EXPECT_TRUE(created.ok());
    return created->id;
  }

  std::unique_ptr<ChainIndexer> MakeIndexer(IndexerOptions options, BlockSink* sink) {
    auto indexer = std::make_unique<ChainIndexer>(chain_, *sqlite_, store_->activity().chain_ledger(),
                                                  std::move(options), sink);
    EXPECT_TRUE(indexer->LoadRegistry().ok());
    return indexer;
  }

  // Steps until caught up; false on an error.
  static bool CatchUp(ChainIndexer& indexer) {
    for (int i = 0; i < 100; ++i) {
      Result<bool> progressed = indexer.Step();
      if (!progressed.ok()) {
        ADD_FAILURE() << progressed.status().ToString();
        return false;
      }
      if (!*progressed) return true;
    }
    ADD_FAILURE() << "indexer never caught up";
    return false;
  }

  std::vector<store::ActivityRecord> Activity(const Address& wallet) {
    return *store_->ActivityForWallet(wallet);
  }

  // Confirmations 0, from block 1, a long poll interval: tests never wait for it.
  static IndexerOptions Options() {
    return {.chain_id = kChain,
            .confirmations = 0,
            .poll_interval = std::chrono::hours(1),
            .from_block = 1};
  }

  testing::TempDir dir_;
  std::shared_ptr<store::SqliteStore> sqlite_;  // the registry
  std::unique_ptr<store::LmdbActivityStore> store_;
  FakeChainSource chain_;
  RecordingSink sink_;
  int64_t swap_ = 0;
  int64_t nft_ = 0;
};

TEST_F(ChainIndexerTest, RecordsInteractionsAndTellsTheSink) {
  ChainBlock b1 = chain_.AppendBlock({
      Call(1, kAlice, kSwap),                                      // a call to a contract
      Call(2, kBob, kOther, {{kNft, 3}, {kOther, 4}, {kNft, 5}}),  // logs: once, the first
      Call(3, kAlice, kSwap, {{kSwap, 6}}),                        // call and log: once
  });
  ChainBlock b2 = chain_.AppendBlock({Call(4, kCarol, kOther)});  // nothing watched
  auto indexer = MakeIndexer(Options(), &sink_);

  ASSERT_TRUE(CatchUp(*indexer));

  int64_t day = DayStart(b1.timestamp);
  EXPECT_EQ(Activity(kAlice),
            (std::vector<store::ActivityRecord>{{kAlice, swap_, kChain, day, 2}}));
  EXPECT_EQ(Activity(kBob), (std::vector<store::ActivityRecord>{{kBob, nft_, kChain, day, 1}}));
  EXPECT_TRUE(Activity(kCarol).empty());
  auto interaction = [&](const Address& wallet, int64_t project, uint8_t tx,
                         std::optional<uint64_t> log_index) {
    return ChainInteraction{.wallet = wallet,
                            .project_id = project,
                            .chain_id = kChain,
                            .tx_hash = Tx(tx),
                            .log_index = log_index,
                            .block_number = 1,
                            .block_time = b1.timestamp};
  };
  std::vector<AppliedBlock> expected = {
      {.number = 1,
       .hash = b1.hash,
       .timestamp = b1.timestamp,
       .confirmed = false,
       .interactions = {interaction(kAlice, swap_, 1, std::nullopt), interaction(kBob, nft_, 2, 3),
                        interaction(kAlice, swap_, 3, std::nullopt)}},
      {.number = 2, .hash = b2.hash, .timestamp = b2.timestamp, .confirmed = false},
  };
  EXPECT_EQ(sink_.applied(), expected);
  EXPECT_TRUE(sink_.reverted().empty());
}

TEST_F(ChainIndexerTest, ASinkErrorCommitsNothingAndTheSameBlocksComeAgain) {
  chain_.AppendBlock({Call(1, kAlice, kSwap)});
  auto indexer = MakeIndexer(Options(), &sink_);
  sink_.set_fail(true);
  EXPECT_FALSE(indexer->Step().ok());
  EXPECT_TRUE(Activity(kAlice).empty());  // not committed: the sink has not seen it
  sink_.set_fail(false);
  ASSERT_TRUE(CatchUp(*indexer));
  ASSERT_EQ(sink_.applied().size(), 1u);
  EXPECT_EQ(sink_.applied()[0].number, 1u);
  EXPECT_EQ(Activity(kAlice).size(), 1u);
}

TEST_F(ChainIndexerTest, ReportsTheHeadAndTheNextBlockAsProgress) {
  for (int i = 0; i < 5; ++i) chain_.AppendBlock();
  IndexerOptions options = Options();
  options.confirmations = 2;
  auto indexer = MakeIndexer(options, nullptr);
  EXPECT_EQ(indexer->progress().head, 0u);
  EXPECT_EQ(indexer->progress().next_block, 0u);

  ASSERT_TRUE(CatchUp(*indexer));

  EXPECT_EQ(indexer->progress().head, 5u);
  EXPECT_EQ(indexer->progress().next_block, 4u);  // blocks 1-3 applied, 2 confirmations
  chain_.AppendBlock();
  ASSERT_TRUE(CatchUp(*indexer));
  EXPECT_EQ(indexer->progress().head, 6u);
  EXPECT_EQ(indexer->progress().next_block, 5u);
}

TEST_F(ChainIndexerTest, AppliesConfirmedBlocksBehindTheHead) {
  for (int i = 0; i < 5; ++i) chain_.AppendBlock();
  IndexerOptions options = Options();
  options.confirmations = 2;
  auto indexer = MakeIndexer(options, &sink_);

  ASSERT_TRUE(CatchUp(*indexer));

  std::vector<AppliedBlock> applied = sink_.applied();
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(applied.back().number, 3u);
  for (const AppliedBlock& b : applied) EXPECT_TRUE(b.confirmed);
  EXPECT_EQ(store_->activity().chain_ledger().LoadCheckpoint(kChain)->next_block, 4u);
}

TEST_F(ChainIndexerTest, WorksWithoutASink) {
  chain_.AppendBlock({Call(1, kAlice, kSwap)});
  auto indexer = MakeIndexer(Options(), nullptr);

  ASSERT_TRUE(CatchUp(*indexer));

  EXPECT_EQ(Activity(kAlice).size(), 1u);
}

TEST_F(ChainIndexerTest, ReorgUndoesAbandonedBlocksAndFollowsTheNewBranch) {
  chain_.AppendBlock({Call(1, kAlice, kSwap)});
  ChainBlock old2 = chain_.AppendBlock({Call(2, kBob, kSwap)});
  ChainBlock old3 = chain_.AppendBlock({Call(3, kCarol, kOther, {{kNft, 0}})});
  auto indexer = MakeIndexer(Options(), &sink_);
  ASSERT_TRUE(CatchUp(*indexer));
  ASSERT_EQ(Activity(kBob).size(), 1u);
  ASSERT_EQ(Activity(kCarol).size(), 1u);

  chain_.ForkAt(1);
  ChainBlock new2 = chain_.AppendBlock({Call(4, kCarol, kSwap)});
  chain_.AppendBlock();
  ChainBlock new4 = chain_.AppendBlock();
  ASSERT_TRUE(CatchUp(*indexer));

  EXPECT_EQ(sink_.reverted(),
            (std::vector<std::vector<RevertedBlock>>{
                {{.number = 3, .hash = old3.hash}, {.number = 2, .hash = old2.hash}}}));
  EXPECT_TRUE(Activity(kBob).empty());
  EXPECT_EQ(
      Activity(kCarol),
      (std::vector<store::ActivityRecord>{{kCarol, swap_, kChain, DayStart(new2.timestamp), 1}}));
  EXPECT_EQ(Activity(kAlice).size(), 1u);  // block 1 is on both branches
  std::vector<AppliedBlock> applied = sink_.applied();
  ASSERT_EQ(applied.size(), 6u);  // 1, 2, 3, then 2', 3', 4'
  EXPECT_EQ(applied[3].hash, new2.hash);
  EXPECT_EQ(applied[3].interactions.at(0).tx_hash, Tx(4));
  EXPECT_EQ(applied[5].hash, new4.hash);
  store::ChainCheckpoint cp = *store_->activity().chain_ledger().LoadCheckpoint(kChain);
  EXPECT_EQ(cp.next_block, 5u);
  EXPECT_EQ(cp.recent.back().hash, FormatHash32(new4.hash));
}

// The new branch is shorter than the abandoned one: the indexer finds out by checking its tip.
TEST_F(ChainIndexerTest, ReorgToAShorterBranchIsFoundAtTheTip) {
  chain_.AppendBlock();
  ChainBlock old2 = chain_.AppendBlock({Call(1, kBob, kSwap)});
  ChainBlock old3 = chain_.AppendBlock();
  auto indexer = MakeIndexer(Options(), &sink_);
  ASSERT_TRUE(CatchUp(*indexer));

  chain_.ForkAt(1);
  ChainBlock new2 = chain_.AppendBlock();
  ASSERT_TRUE(CatchUp(*indexer));

  EXPECT_EQ(sink_.reverted(),
            (std::vector<std::vector<RevertedBlock>>{
                {{.number = 3, .hash = old3.hash}, {.number = 2, .hash = old2.hash}}}));
  EXPECT_TRUE(Activity(kBob).empty());
  EXPECT_EQ(sink_.applied().back().hash, new2.hash);
}

TEST_F(ChainIndexerTest, StepErrorsAreNotFatal) {
  chain_.AppendBlock({Call(1, kAlice, kSwap)});
  auto indexer = MakeIndexer(Options(), &sink_);
  chain_.FailNextCalls(1);

  EXPECT_EQ(indexer->Step().status().code(), Code::kUnavailable);
  EXPECT_TRUE(indexer->fatal().ok());
  ASSERT_TRUE(CatchUp(*indexer));
  EXPECT_EQ(Activity(kAlice).size(), 1u);
}

TEST_F(ChainIndexerTest, RunRetriesNodeErrors) {
  chain_.AppendBlock({Call(1, kAlice, kSwap)});
  chain_.AppendBlock();
  IndexerOptions options = Options();
  options.min_backoff = std::chrono::milliseconds(1);
  options.max_backoff = std::chrono::milliseconds(2);
  ChainIndexer indexer(chain_, *sqlite_, store_->activity().chain_ledger(), options, &sink_);
  chain_.FailNextCalls(3);

  Status status = InternalError("not run");
  std::thread runner([&] { status = indexer.Run(); });
  bool applied = sink_.WaitForBlock(2);
  indexer.Stop();
  runner.join();

  EXPECT_TRUE(applied);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(chain_.failures(), 3);
  EXPECT_EQ(Activity(kAlice).size(), 1u);
}

// The poll interval is an hour: Run returns only because Stop wakes it.
TEST_F(ChainIndexerTest, StopWakesThePollWait) {
  chain_.AppendBlock();
  ChainIndexer indexer(chain_, *sqlite_, store_->activity().chain_ledger(), Options(), &sink_);

  Status status = InternalError("not run");
  std::thread runner([&] { status = indexer.Run(); });
  bool waiting = sink_.WaitForBlock(1) && indexer.WaitUntilWaitingForTest(kDeadline);
  indexer.Stop();
  runner.join();

  EXPECT_TRUE(waiting);
  EXPECT_EQ(chain_.head_calls(), 2);  // the applying step, then the caught-up one
  EXPECT_TRUE(status.ok()) << status.ToString();
}

// The first backoff is an hour: Run returns only because Stop wakes it.
TEST_F(ChainIndexerTest, StopWakesTheBackoffWait) {
  IndexerOptions options = Options();
  options.min_backoff = std::chrono::hours(1);
  options.max_backoff = std::chrono::hours(1);
  ChainIndexer indexer(chain_, *sqlite_, store_->activity().chain_ledger(), options, &sink_);
  chain_.FailNextCalls(std::numeric_limits<int>::max());

  Status status = InternalError("not run");
  std::thread runner([&] { status = indexer.Run(); });
  bool waiting = indexer.WaitUntilWaitingForTest(kDeadline);
  indexer.Stop();
  runner.join();

  EXPECT_TRUE(waiting);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(chain_.failures(), 1);
}

TEST_F(ChainIndexerTest, RunReturnsAtOnceWhenStoppedFirst) {
  ChainIndexer indexer(chain_, *sqlite_, store_->activity().chain_ledger(), Options(), &sink_);
  indexer.Stop();

  EXPECT_TRUE(indexer.Run().ok());
  EXPECT_TRUE(sink_.applied().empty());
}

}  // namespace
}  // namespace adserver::ingest::chain
