#include "common/thread_setup.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace adserver {
namespace {

int NiceOfThisThread() { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }

TEST(ThreadSetupTest, ABackgroundThreadRunsAtALowerPriorityAndPassesItOn) {
  int own = 0, inherited = 0;
  bool lowered = false;
  std::thread background([&] {
    lowered = LowerThisThreadPriority(12);
    own = NiceOfThisThread();
    std::thread child([&] { inherited = NiceOfThisThread(); });
    child.join();
    // Never raised again (that would need privileges): a higher value stays.
    EXPECT_TRUE(LowerThisThreadPriority(5));
    EXPECT_EQ(NiceOfThisThread(), 12);
  });
  background.join();
  EXPECT_TRUE(lowered);
  EXPECT_EQ(own, 12);
  EXPECT_EQ(inherited, 12);
  // Only that thread was lowered, not the test's.
  EXPECT_LT(NiceOfThisThread(), 12);
}

TEST(ThreadSetupTest, AnIdleThreadRunsUnderSchedIdleAndPassesItOn) {
  int own = -1, inherited = -1;
  bool idle = false;
  std::thread background([&] {
    idle = MakeThisThreadIdle();
    own = sched_getscheduler(0);
    std::thread child([&] { inherited = sched_getscheduler(0); });
    child.join();
  });
  background.join();
  ASSERT_TRUE(idle);
  EXPECT_EQ(own, SCHED_IDLE);
  EXPECT_EQ(inherited, SCHED_IDLE);
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);  // the test's own thread is untouched
}

TEST(ThreadSetupTest, NamesAreCutTo15Bytes) {
  std::string name;
  std::thread named([&] {
    NameThisThread("a-very-long-thread-name");
    char buffer[32] = {};
    pthread_getname_np(pthread_self(), buffer, sizeof buffer);
    name = buffer;
  });
  named.join();
  EXPECT_EQ(name, "a-very-long-thr");
}

}  // namespace
}  // namespace adserver
