// Change versions and their notifications (issue 17 item 3): a committed bump wakes a follower
// by NOTIFY (long before its poll), a rolled-back one does not, and a bump whose notification
// was lost with the follower's session is still seen at the next poll.

#include "store/postgres/pg_change_feed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/postgres_store.h"
#include "support/postgres/test_database.h"

namespace adserver::store {
namespace {

using namespace std::chrono_literals;
using pg_detail::PgConnection;
using pg_detail::PgTransaction;

class PgChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ADSERVER_REQUIRE_TEST_DATABASE(db_);
    ASSERT_TRUE(PostgresStore::Open(db_.url()).ok());  // the schema
    auto writer = PgConnection::Open(db_.url());
    ASSERT_TRUE(writer.ok());
    writer_ = std::move(*writer);
    auto feed = PgChangeFeed::Open(db_.url(), "inventory");
    ASSERT_TRUE(feed.ok()) << feed.status().message();
    feed_ = std::move(*feed);
  }
  Status Bump(bool commit, std::string_view name = "inventory") {
    ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*writer_));
    ADS_RETURN_IF_ERROR(BumpChangeVersion(*writer_, name));
    return commit ? txn.Commit() : OkStatus();  // else rolled back by txn's destructor
  }

  adserver::testing::TestDatabase db_;
  std::unique_ptr<PgConnection> writer_;
  std::unique_ptr<PgChangeFeed> feed_;
};

TEST_F(PgChangeFeedTest, ACommittedBumpWakesTheFollowerBeforeItsPoll) {
  EXPECT_EQ(*feed_->Version(), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(Bump(true).ok());
  });
  auto start = std::chrono::steady_clock::now();
  Result<int64_t> v = feed_->WaitForChange(0, 60s, /*poll=*/30s);
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, 1);
  EXPECT_LT(waited, 30s) << "woken by the notification, not the poll";
  // Two bumps in one transaction: one version step each, one wake-up.
  {
    auto txn = PgTransaction::Begin(*writer_);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(BumpChangeVersion(*writer_, "inventory").ok());
    ASSERT_TRUE(BumpChangeVersion(*writer_, "inventory").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  EXPECT_EQ(*feed_->WaitForChange(1, 60s, 30s), 3);
}

TEST_F(PgChangeFeedTest, ARolledBackBumpChangesNothing) {
  ASSERT_TRUE(Bump(false).ok());
  EXPECT_EQ(*feed_->WaitForChange(0, 300ms, 100ms), 0);
  ASSERT_TRUE(Bump(true, "other").ok());
  EXPECT_EQ(*feed_->WaitForChange(0, 300ms, 100ms), 0) << "another name's bump";
}

TEST_F(PgChangeFeedTest, ABumpWhoseNotificationWasLostIsSeenAtTheNextPoll) {
  auto admin = PgConnection::Open(db_.url());
  ASSERT_TRUE(admin.ok());
  auto killed = (*admin)->Exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND query LIKE 'LISTEN%'");
  ASSERT_TRUE(killed.ok()) << killed.status().message();
  ASSERT_EQ(*killed->Int(0, 0), 1);
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(Bump(true).ok());  // its NOTIFY reaches no session of the follower
  Result<int64_t> v = feed_->WaitForChange(0, 60s, /*poll=*/200ms);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, 1);
  // And it listens again afterwards.
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(Bump(true).ok());
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(*feed_->WaitForChange(1, 60s, 30s), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  writer.join();
}

TEST_F(PgChangeFeedTest, ABumpNeedsTheWritersTransaction) {
  EXPECT_EQ(BumpChangeVersion(*writer_, "inventory").code(), Code::kInternal);
}

}  // namespace
}  // namespace adserver::store
