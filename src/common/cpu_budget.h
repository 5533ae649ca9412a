#pragma once

// How many CPUs this process may actually use: the CPUs of its affinity mask (taskset, a
// container's cpuset), further limited by a CFS bandwidth quota of its cgroup (docker --cpus,
// systemd CPUQuota=), rounded up. std::thread::hardware_concurrency() counts the host's cores
// instead, which oversubscribes a process pinned to fewer: one event loop per host core on one
// allowed CPU multiplies tail latency (issue 18).

#include <optional>
#include <string>
#include <string_view>

namespace adserver {

// CPUs the calling thread may run on and its cgroup's quota allows; at least 1.
int UsableCpus();

// The same from explicit sources (tests): `affinity_cpus` (0: unknown, use the quota alone),
// `proc_self_cgroup` (the text of /proc/self/cgroup) and the cgroup file system mounted at
// `cgroup_root` (v2 unified: <root>/<path>/cpu.max; v1: <root>/cpu,cpuacct/<path>/cpu.cfs_quota_us
// and cpu.cfs_period_us, or <root>/cpu/...). Every ancestor's limit applies; the smallest wins.
int UsableCpus(int affinity_cpus, std::string_view proc_self_cgroup,
               const std::string& cgroup_root);

// CPUs a quota allows, rounded up: "200000 100000" -> 2, "150000 100000" -> 2, "max 100000" ->
// nullopt (no limit); nullopt for text that is not a quota.
std::optional<int> CpusOfQuota(std::string_view quota, std::string_view period);

}  // namespace adserver
