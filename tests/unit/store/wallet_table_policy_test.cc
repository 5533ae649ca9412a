// When the serving wallet table is rebuilt (store/lmdb/wallet_table_policy.h): the rules of
// ReadCacheOptions on a fake clock, without LMDB or a table file. The index's use of it is
// tested in lmdb_activity_index_test.cc.

#include "store/lmdb/wallet_table_policy.h"

#include <gtest/gtest.h>

namespace adserver::store {
namespace {

using std::chrono::seconds;

class WalletTablePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    policy_.Configure({.max_recent_wallets = 3,
                       .min_rebuild_interval = seconds(10),
                       .quiet_period = seconds(2),
                       .max_stale = seconds(60)},
                      clock_);
  }
  // A table that lacks nothing, built and published now.
  void Rebuild() {
    policy_.OnRebuildAttempt();
    policy_.OnRebuilt(/*current=*/true, /*recent=*/0);
    policy_.OnPublished();
  }

  FakeClock clock_;
  WalletTablePolicy policy_;
};

TEST_F(WalletTablePolicyTest, AFirstTableIsBuiltAtOnceAndADroppedOneOnceTheIndexIsQuiet) {
  policy_.OnChangeWithoutTable(5);
  EXPECT_TRUE(policy_.NeedsRebuild()) << "never built: at once, whatever the writes";
  Rebuild();
  clock_.Advance(seconds(10));
  policy_.OnDropped(6);  // behind the change log: LMDB answers from now
  clock_.Advance(seconds(1));
  policy_.OnChangeWithoutTable(6);  // the same counter: no change, the quiet period runs on
  clock_.Advance(seconds(1));
  EXPECT_TRUE(policy_.NeedsRebuild());
  policy_.OnChangeWithoutTable(7);  // a write: quiet from now
  EXPECT_FALSE(policy_.NeedsRebuild());
  clock_.Advance(seconds(2));
  EXPECT_TRUE(policy_.NeedsRebuild());
}

TEST_F(WalletTablePolicyTest, TooManyRecentWalletsReplaceTheTableOnceTheIntervalPassed) {
  Rebuild();
  policy_.OnRecent(3);
  EXPECT_FALSE(policy_.NeedsRebuild()) << "three changed wallets are read from LMDB";
  policy_.OnRecent(4);
  EXPECT_FALSE(policy_.NeedsRebuild()) << "rebuilt less than min_rebuild_interval ago";
  clock_.Advance(seconds(10));
  EXPECT_TRUE(policy_.NeedsRebuild()) << "no need to wait for quiet: no bulk change pending";
}

TEST_F(WalletTablePolicyTest, ABulkChangeWaitsForTheWritesToPauseOrForMaxStale) {
  Rebuild();
  clock_.Advance(seconds(10));
  policy_.OnBulkChange(7);
  EXPECT_TRUE(policy_.bulk_pending());
  EXPECT_FALSE(policy_.NeedsRebuild());
  for (int second = 0; second < 59; ++second) {  // an import writing every second
    clock_.Advance(seconds(1));
    policy_.OnChangeWithTable(8 + second);
    policy_.OnRecent(100);  // even many recent wallets do not hurry it
    ASSERT_FALSE(policy_.NeedsRebuild()) << second;
  }
  clock_.Advance(seconds(1));  // 60 s since the table first lacked a change
  EXPECT_TRUE(policy_.NeedsRebuild());

  Rebuild();
  EXPECT_FALSE(policy_.bulk_pending());
  clock_.Advance(seconds(10));
  policy_.OnBulkChange(100);
  clock_.Advance(seconds(2));  // the writes paused
  EXPECT_TRUE(policy_.NeedsRebuild());
}

TEST_F(WalletTablePolicyTest, ATableBuiltDuringABulkChangeStaysStale) {
  policy_.OnRebuildAttempt();
  policy_.OnRebuilt(/*current=*/false, /*recent=*/0);
  policy_.OnBulkChange(9);  // what landed while building
  policy_.OnPublished();
  clock_.Advance(seconds(10));
  EXPECT_TRUE(policy_.bulk_pending());
  EXPECT_TRUE(policy_.NeedsRebuild()) << "quiet for 10 s, interval passed";
}

TEST_F(WalletTablePolicyTest, ADroppedTableIsRebuiltWhenQuietAndAFailedBuildWaitsTheInterval) {
  Rebuild();
  clock_.Advance(seconds(30));
  policy_.OnDropped(12);  // behind the change log: LMDB answers
  EXPECT_FALSE(policy_.NeedsRebuild()) << "just dropped: the index is writing";
  clock_.Advance(seconds(2));
  EXPECT_TRUE(policy_.NeedsRebuild());
  policy_.OnRebuildAttempt();  // and it fails: nothing published
  EXPECT_FALSE(policy_.NeedsRebuild()) << "retried after min_rebuild_interval, not every poll";
  clock_.Advance(seconds(10));
  EXPECT_TRUE(policy_.NeedsRebuild());
}

TEST_F(WalletTablePolicyTest, AnOpenedTableIsKeptUnlessItHasTooManyRecentWallets) {
  policy_.OnOpened(2);
  EXPECT_FALSE(policy_.NeedsRebuild());
  WalletTablePolicy other;
  other.Configure({.max_recent_wallets = 3, .min_rebuild_interval = seconds(0)}, clock_);
  other.OnOpened(4);
  EXPECT_TRUE(other.NeedsRebuild());
}

}  // namespace
}  // namespace adserver::store
