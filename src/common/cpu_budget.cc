#include "common/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

namespace adserver {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r'))
    s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::optional<int64_t> ParsePositive(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 4096) text.resize(4096);
  return text;
}

// "/a/b/c" -> {"/a/b/c", "/a/b", "/a", ""} (the last is the root).
std::vector<std::string> SelfAndAncestors(std::string_view path) {
  std::vector<std::string> out;
  std::string p(Trim(path));
  while (!p.empty() && p.back() == '/') p.pop_back();
  for (;;) {
    out.push_back(p);
    if (p.empty()) break;
    size_t slash = p.rfind('/');
    p = slash == std::string::npos ? "" : p.substr(0, slash);
  }
  return out;
}

void Limit(std::optional<int>& smallest, std::optional<int> cpus) {
  if (cpus && (!smallest || *cpus < *smallest)) smallest = cpus;
}

}  // namespace

std::optional<int> CpusOfQuota(std::string_view quota, std::string_view period) {
  std::optional<int64_t> q = ParsePositive(quota);
  std::optional<int64_t> p = ParsePositive(period);
  if (!q || !p) return std::nullopt;  // "max", -1 (v1's "no limit") or not a number
  int64_t cpus = (*q + *p - 1) / *p;
  return static_cast<int>(std::clamp<int64_t>(cpus, 1, 1 << 16));
}

int UsableCpus(int affinity_cpus, std::string_view proc_self_cgroup,
               const std::string& cgroup_root) {
  std::optional<int> quota_cpus;
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    // hierarchy-id:controllers:path
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    std::string_view path = std::string_view(line).substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {  // v2 unified
      for (const std::string& dir : SelfAndAncestors(path)) {
        std::optional<std::string> max = ReadSmallFile(cgroup_root + dir + "/cpu.max");
        if (!max) continue;
        std::string_view text = Trim(*max);
        size_t space = text.find(' ');
        if (space == std::string_view::npos) continue;
        Limit(quota_cpus, CpusOfQuota(text.substr(0, space), text.substr(space + 1)));
      }
      continue;
    }
    // v1: the line whose controllers include "cpu".
    bool has_cpu = false;
    for (size_t at = 0; at <= controllers.size();) {
      size_t comma = controllers.find(',', at);
      if (comma == std::string_view::npos) comma = controllers.size();
      if (controllers.substr(at, comma - at) == "cpu") has_cpu = true;
      at = comma + 1;
    }
    if (!has_cpu) continue;
    for (const char* mount : {"/cpu,cpuacct", "/cpu", "/cpuacct,cpu"}) {
      for (const std::string& dir : SelfAndAncestors(path)) {
        std::string base = cgroup_root + mount + dir;
        std::optional<std::string> quota = ReadSmallFile(base + "/cpu.cfs_quota_us");
        std::optional<std::string> period = ReadSmallFile(base + "/cpu.cfs_period_us");
        if (quota && period) Limit(quota_cpus, CpusOfQuota(*quota, *period));
      }
    }
  }
  int cpus = affinity_cpus > 0 ? affinity_cpus : (quota_cpus ? *quota_cpus : 1);
  if (quota_cpus) cpus = std::min(cpus, *quota_cpus);
  return std::max(cpus, 1);
}

int UsableCpus() {
  int affinity = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) affinity = CPU_COUNT(&set);
  if (affinity <= 0) affinity = static_cast<int>(std::thread::hardware_concurrency());
  std::string cgroup = ReadSmallFile("/proc/self/cgroup").value_or("");
  return UsableCpus(affinity, cgroup, "/sys/fs/cgroup");
}

}  // namespace adserver
