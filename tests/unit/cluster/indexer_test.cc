// The cluster's indexer leadership without PostgreSQL or a chain (issue 41 item 2):
// ClusterIndexer over a fake lock and fake term indexers. PostgreSQL's lock is tested in
// tests/unit/store/pg_leader_lock_test.cc, leadership across processes with anvil in
// tests/integration/cluster_indexer_test.cc.

#include "cluster/indexer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "support/wait.h"

namespace adserver::cluster {
namespace {

using std::chrono::milliseconds;
using testing::WaitUntil;

constexpr int64_t kChain = 8453;

// Leadership as the test grants it; what happened, in order.
struct World {
  Mutex mu;
  std::vector<std::string> log ADS_GUARDED_BY(mu);
  std::atomic<bool> grant{false};     // TryLead's answer
  std::atomic<bool> reachable{true};  // false: the lock cannot be opened
  std::atomic<int> opened{0};
  std::atomic<int> made{0};     // term indexers made
  std::atomic<int> running{0};  // term indexers inside Run
  // What the next term's Run returns when it ends on its own (OK: runs until stopped).
  std::atomic<int> end_with{0};        // 0 run until stopped, 1 Unavailable, 2 Conflict
  std::atomic<int> write_refusals{0};  // ledger writes refused after a term was stopped
  void Log(std::string what) {
    MutexLock lock(mu);
    log.push_back(std::move(what));
  }
  std::vector<std::string> Logged() {
    MutexLock lock(mu);
    return log;
  }
};

class FakeLock final : public store::LeaderLock {
 public:
  explicit FakeLock(World& w) : w_(w) {}
  Result<bool> TryLead() override { return w_.grant.load(); }
  void Release() override { w_.Log("release"); }

 private:
  World& w_;
};

// A ledger that accepts everything.
class NullLedger final : public store::ChainLedger {
 public:
  Result<store::ChainCheckpoint> LoadCheckpoint(int64_t) override {
    return store::ChainCheckpoint{};
  }
  Status ResetCheckpoint(int64_t, const store::ChainCheckpoint&) override { return OkStatus(); }
  Status ApplyBlocks(int64_t, std::span<const store::IndexedBlock>) override { return OkStatus(); }
  Status UndoBlocksAfter(int64_t, uint64_t) override { return OkStatus(); }
};

// Runs until stopped (or ends as World::end_with says); on Stop, tries one more write through
// the fenced ledger it was given, as an indexer inside a step would.
class FakeTerm final : public TermIndexer {
 public:
  FakeTerm(World& w, store::ChainLedger& ledger) : w_(w), ledger_(ledger) {}
  Status Run() override {
    w_.Log("run");
    EXPECT_TRUE(ledger_.ApplyBlocks(kChain, {}).ok()) << "a leading term writes";
    // Counted after the first write: a test that waits for a running term and then stops the
    // indexer must not stop it before that write (the ledger would refuse it, rightly).
    w_.running.fetch_add(1);
    const int end = w_.end_with.exchange(0);
    if (end == 0) WaitUntil([&] { return stopped_.load(); }, std::chrono::seconds(30));
    w_.running.fetch_sub(1);
    if (end == 1) return UnavailableError("the node went away");
    if (end == 2) return ConflictError("a reorg deeper than the journal");
    return OkStatus();
  }
  void Stop() override {
    w_.Log("stop");
    // The ledger refuses writes from the moment leadership ends.
    if (!ledger_.ApplyBlocks(kChain, {}).ok()) w_.write_refusals.fetch_add(1);
    stopped_ = true;
  }
  ingest::chain::ChainIndexer::Progress progress() const override { return {.head = 7}; }

 private:
  World& w_;
  store::ChainLedger& ledger_;
  std::atomic<bool> stopped_{false};
};

class ClusterIndexerTest : public ::testing::Test {
 protected:
  std::unique_ptr<ClusterIndexer> NewIndexer() {
    IndexerPorts ports{
        .open_lock = [this](int64_t key) -> Result<std::unique_ptr<store::LeaderLock>> {
          EXPECT_EQ(key, ClusterIndexer::LeaderKey(kChain));
          if (!world_.reachable) return UnavailableError("postgresql is away");
          world_.opened.fetch_add(1);
          return std::unique_ptr<store::LeaderLock>(std::make_unique<FakeLock>(world_));
        },
        .make_indexer = [this](store::ChainLedger& fenced) -> Result<std::unique_ptr<TermIndexer>> {
          world_.made.fetch_add(1);
          return std::unique_ptr<TermIndexer>(std::make_unique<FakeTerm>(world_, fenced));
        }};
    return std::make_unique<ClusterIndexer>(ledger_, kChain, std::move(ports),
                                            ClusterIndexerOptions{.lead_check = milliseconds(5)});
  }

  World world_;
  NullLedger ledger_;
};

TEST_F(ClusterIndexerTest, IndexesOnlyWhileLeadingAndStopsBeforeLettingGo) {
  std::unique_ptr<ClusterIndexer> indexer = NewIndexer();
  indexer->Start();
  ASSERT_TRUE(WaitUntil([&] { return world_.opened.load() == 1; }));
  EXPECT_FALSE(indexer->leading());
  EXPECT_EQ(indexer->progress(), std::nullopt);
  EXPECT_EQ(world_.made.load(), 0) << "another node leads: nothing runs here";

  world_.grant = true;  // the leader died
  ASSERT_TRUE(WaitUntil([&] { return world_.running.load() == 1; }));
  EXPECT_TRUE(indexer->leading());
  EXPECT_EQ(indexer->terms(), 1u);
  EXPECT_EQ(indexer->progress()->head, 7u);

  world_.grant = false;  // lost (a partition): the term stops and its writes are refused
  ASSERT_TRUE(WaitUntil([&] { return world_.running.load() == 0 && !indexer->leading(); }));
  EXPECT_EQ(world_.write_refusals.load(), 1);
  EXPECT_EQ(indexer->progress(), std::nullopt);

  world_.grant = true;  // taken back: a second term
  ASSERT_TRUE(WaitUntil([&] { return world_.running.load() == 1; }));
  EXPECT_EQ(indexer->terms(), 2u);
  indexer->Stop();
  // The term stops before the lock is given up: no other node leads while this one writes.
  const std::vector<std::string> log = world_.Logged();
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[log.size() - 2], "stop");
  EXPECT_EQ(log.back(), "release");
  EXPECT_EQ(world_.running.load(), 0);
}

TEST_F(ClusterIndexerTest, AnEndedTermRestartsAtTheNextCheckAFatalOneDoesNot) {
  world_.grant = true;
  world_.end_with = 1;  // the first term ends with an error of its node
  std::unique_ptr<ClusterIndexer> indexer = NewIndexer();
  indexer->Start();
  ASSERT_TRUE(WaitUntil([&] { return world_.made.load() == 2 && world_.running.load() == 1; }));
  EXPECT_EQ(indexer->terms(), 1u) << "a restart within one term of leadership";
  indexer->Stop();

  World& w = world_;
  w.made = 0;
  w.end_with = 2;  // a reorg deeper than the journal: a human must act
  std::unique_ptr<ClusterIndexer> fatal = NewIndexer();
  fatal->Start();
  ASSERT_TRUE(WaitUntil([&] { return w.made.load() == 1 && w.running.load() == 0; }));
  // Checks go on (leadership is still held), but no term is made again.
  std::this_thread::sleep_for(milliseconds(50));  // ten lead checks: the subject of the test
  EXPECT_EQ(w.made.load(), 1);
  fatal->Stop();
}

TEST_F(ClusterIndexerTest, AnUnreachableLockLeadsNowhereAndIsOpenedAgain) {
  world_.reachable = false;
  world_.grant = true;
  std::unique_ptr<ClusterIndexer> indexer = NewIndexer();
  indexer->Start();
  std::this_thread::sleep_for(milliseconds(50));  // ten lead checks without PostgreSQL
  EXPECT_FALSE(indexer->leading());
  EXPECT_EQ(world_.made.load(), 0);
  world_.reachable = true;
  ASSERT_TRUE(WaitUntil([&] { return world_.running.load() == 1; }));
  EXPECT_EQ(world_.opened.load(), 1);
  indexer->Stop();
}

}  // namespace
}  // namespace adserver::cluster
