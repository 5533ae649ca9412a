// Event loops follow the CPUs the process may use (issue 18, item 5): `io_threads = 0` starts
// one loop per CPU of the affinity mask, not one per host core. The real binary, pinned to one
// CPU like `taskset -c 0` or a container's cpuset, against the same binary unpinned.

#include <gtest/gtest.h>
#include <sys/types.h>

#include <fstream>
#include <string>

#include "common/cpu_budget.h"
#include "integration/server_process.h"

namespace adserver::testing {
namespace {

int Threads(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST(EventLoopsTest, APinnedProcessStartsOneLoopPerAllowedCpu) {
  const int cpus = UsableCpus();
  if (cpus < 2) GTEST_SKIP() << "needs 2 usable CPUs to tell a pinned process apart";
  ServerProcess pinned(ServerProcess::Options{.pin_to_cpu = 0});
  ASSERT_TRUE(pinned.Start()) << pinned.error();
  ServerProcess free_to_run;
  ASSERT_TRUE(free_to_run.Start()) << free_to_run.error();
  // Everything else (workers, flushers, indexer) is the same in both: the difference is the
  // event loops beyond the first.
  EXPECT_EQ(Threads(free_to_run.pid()) - Threads(pinned.pid()), cpus - 1);
  EXPECT_EQ(pinned.Stop(), 0);
  EXPECT_EQ(free_to_run.Stop(), 0);
}

}  // namespace
}  // namespace adserver::testing
