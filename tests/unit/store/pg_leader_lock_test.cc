// Leadership by a PostgreSQL advisory lock (issue 17 item 4): one leader at a time, a graceful
// hand-over, a leader whose session the server ends, and a leader process killed with SIGKILL
// whose job another node takes over well within 10 s.

#include "store/postgres/pg_leader_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "store/postgres/detail/pg_connection.h"
#include "support/postgres/test_database.h"
#include "support/wait.h"

namespace adserver::store {
namespace {

constexpr int64_t kChainJob = 0x696e6465780000 + 31337;  // "index" + a chain id

class PgLeaderLockTest : public ::testing::Test {
 protected:
  void SetUp() override { ADSERVER_REQUIRE_TEST_DATABASE(db_); }
  std::unique_ptr<PgLeaderLock> Node() {
    auto lock = PgLeaderLock::Open(db_.url(), kChainJob);
    EXPECT_TRUE(lock.ok()) << lock.status().message();
    return lock.ok() ? std::move(*lock) : nullptr;
  }
  adserver::testing::TestDatabase db_;
};

TEST_F(PgLeaderLockTest, OneNodeLeadsUntilItReleases) {
  auto a = Node(), b = Node();
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(*a->TryLead());
  EXPECT_FALSE(*b->TryLead());
  EXPECT_TRUE(*a->TryLead()) << "the leader confirms";
  EXPECT_FALSE(*b->TryLead());
  a->Release();
  EXPECT_FALSE(a->leading());
  EXPECT_TRUE(*b->TryLead()) << "taken over at the next try";
  EXPECT_FALSE(*a->TryLead());
  // Another job (another chain) has a leader of its own.
  auto other = PgLeaderLock::Open(db_.url(), kChainJob + 1);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(*(*other)->TryLead());
}

TEST_F(PgLeaderLockTest, ALeaderWhoseSessionEndsLearnsItNoLongerLeads) {
  auto a = Node(), b = Node();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(*a->TryLead());
  auto admin = pg_detail::PgConnection::Open(db_.url());
  ASSERT_TRUE(admin.ok());
  // What a failover or an operator's pg_terminate_backend does to the leader's session. Only
  // this test's database: tests running at the same time share the server, and their advisory
  // locks (and sessions) are none of this test's business.
  auto killed = (*admin)->Exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_locks "
      "WHERE locktype = 'advisory' AND granted AND "
      "database = (SELECT oid FROM pg_database WHERE datname = current_database())");
  ASSERT_TRUE(killed.ok()) << killed.status().message();
  ASSERT_EQ(*killed->Int(0, 0), 1);
  // pg_terminate_backend signals the session; it ends (and drops the lock) a moment later.
  EXPECT_TRUE(adserver::testing::WaitUntil([&] { return *b->TryLead(); }, std::chrono::seconds(2),
                                           std::chrono::milliseconds(20)))
      << "the lock went with the session";
  EXPECT_FALSE(*a->TryLead()) << "the old leader notices at its next check";
  EXPECT_FALSE(a->leading());
  EXPECT_FALSE(*a->TryLead()) << "and does not take it back while b leads";
}

TEST_F(PgLeaderLockTest, ANodeTakesOverWithinTenSecondsOfTheLeadersSigkill) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t leader = fork();
  ASSERT_GE(leader, 0);
  if (leader == 0) {
    // The leader node: its own connection, leads, then works until killed.
    close(ready[0]);
    auto lock = PgLeaderLock::Open(db_.url(), kChainJob);
    char ok = lock.ok() && *(*lock)->TryLead() ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 'y');
  auto b = Node();
  ASSERT_TRUE(b);
  EXPECT_FALSE(*b->TryLead());
  kill(leader, SIGKILL);
  waitpid(leader, nullptr, 0);
  const bool led = adserver::testing::WaitUntil(
      [&] {
        Result<bool> r = b->TryLead();
        return r.ok() && *r;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(100));  // the nodes' retry interval
  EXPECT_TRUE(led) << "no takeover within 10 s";
}

}  // namespace
}  // namespace adserver::store
