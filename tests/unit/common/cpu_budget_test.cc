#include "common/cpu_budget.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/temp_dir.h"

namespace adserver {
namespace {

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(CpuBudgetTest, QuotaRoundsUpAndMaxMeansNoLimit) {
  EXPECT_EQ(CpusOfQuota("200000", "100000"), 2);
  EXPECT_EQ(CpusOfQuota("150000", "100000"), 2);
  EXPECT_EQ(CpusOfQuota("50000", "100000"), 1);
  EXPECT_EQ(CpusOfQuota("max", "100000"), std::nullopt);
  EXPECT_EQ(CpusOfQuota("-1\n", "100000\n"), std::nullopt);  // cgroup v1: no limit
  EXPECT_EQ(CpusOfQuota("", "100000"), std::nullopt);
  EXPECT_EQ(CpusOfQuota("100000", "0"), std::nullopt);
}

TEST(CpuBudgetTest, CgroupV2QuotaOfTheProcessOrAnAncestorLimitsTheAffinity) {
  testing::TempDir dir;
  const std::string root = dir.path().string();
  WriteFile(dir.path() / "system.slice/cpu.max", "max 100000\n");
  WriteFile(dir.path() / "system.slice/adserver.service/cpu.max", "250000 100000\n");
  EXPECT_EQ(UsableCpus(8, "0::/system.slice/adserver.service\n", root), 3);
  EXPECT_EQ(UsableCpus(2, "0::/system.slice/adserver.service\n", root), 2);  // affinity smaller
  // A parent's quota applies to its children.
  WriteFile(dir.path() / "system.slice/cpu.max", "100000 100000\n");
  EXPECT_EQ(UsableCpus(8, "0::/system.slice/adserver.service\n", root), 1);
  // No quota anywhere: the affinity.
  EXPECT_EQ(UsableCpus(6, "0::/user.slice\n", root), 6);
}

TEST(CpuBudgetTest, CgroupV1CpuControllerQuota) {
  testing::TempDir dir;
  const std::string root = dir.path().string();
  WriteFile(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  WriteFile(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::string cgroup = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  EXPECT_EQ(UsableCpus(16, cgroup, root), 2);
  WriteFile(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(UsableCpus(16, cgroup, root), 16);
  EXPECT_EQ(UsableCpus(16, "garbage\n\n::\n", root), 16);
}

// The real call follows the calling thread's affinity mask (what `taskset -c 0` sets).
TEST(CpuBudgetTest, PinnedToOneCpuMeansOne) {
  int cpus = 0;
  std::thread pinned([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    int first = -1;
    for (int i = 0; i < CPU_SETSIZE && first < 0; ++i) {
      if (CPU_ISSET(i, &set)) first = i;
    }
    ASSERT_GE(first, 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    cpus = UsableCpus();
  });
  pinned.join();
  EXPECT_EQ(cpus, 1);
  EXPECT_GE(UsableCpus(), 1);
}

}  // namespace
}  // namespace adserver
