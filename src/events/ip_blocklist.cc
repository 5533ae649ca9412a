#include "events/ip_blocklist.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::events {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UnavailableError("cannot read IP blocklist " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return UnavailableError("cannot read IP blocklist " + path);
  return text.str();
}

}  // namespace

Result<std::vector<IpNetwork>> ParseBlocklist(std::string_view text, std::string_view name) {
  std::vector<IpNetwork> networks;
  int line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::optional<IpNetwork> network = ParseNetwork(line);
    if (!network) {
      std::string field(name);
      field += ':';
      field += std::to_string(line_number);
      std::string message = "\"";
      message += line;
      message += "\" is not an IP address or CIDR network";
      return InvalidArgumentError("invalid IP blocklist", {{field, message}});
    }
    networks.push_back(*network);
  }
  return networks;
}

IpBlocklist::IpBlocklist(std::vector<std::string> paths) : paths_(std::move(paths)) {}

IpBlocklist::~IpBlocklist() { Stop(); }

Result<std::unique_ptr<IpBlocklist>> IpBlocklist::Load(std::vector<std::string> paths) {
  std::unique_ptr<IpBlocklist> list(new IpBlocklist(std::move(paths)));
  MutexLock lock(list->reload_mu_);
  ADS_RETURN_IF_ERROR(list->Read());
  return list;
}

std::vector<IpBlocklist::FileStamp> IpBlocklist::Stamps() const {
  std::vector<FileStamp> stamps;
  for (const std::string& path : paths_) {
    struct stat st {};
    FileStamp stamp;
    if (stat(path.c_str(), &st) == 0) {
      stamp.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
      stamp.size = st.st_size;
    }
    stamps.push_back(stamp);
  }
  return stamps;
}

Status IpBlocklist::Read() {
  // Stamps before reading: a write racing the read is seen again by the next look.
  std::vector<FileStamp> stamps = Stamps();
  std::vector<IpNetwork> networks;
  for (const std::string& path : paths_) {
    ADS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    ADS_ASSIGN_OR_RETURN(std::vector<IpNetwork> parsed, ParseBlocklist(text, path));
    networks.insert(networks.end(), parsed.begin(), parsed.end());
  }
  set_.Publish(std::make_shared<const IpSet>(networks));
  stamps_ = std::move(stamps);
  return OkStatus();
}

bool IpBlocklist::Contains(const IpAddress& ip) const {
  std::shared_ptr<const IpSet> set = set_.Current();
  return set != nullptr && set->Contains(ip);
}

bool IpBlocklist::ReloadIfChanged() {
  MutexLock lock(reload_mu_);
  if (Stamps() == stamps_) return false;
  Status read = Read();
  if (!read.ok()) {
    ADS_LOG(warn, "IP blocklist not reloaded; keeping the previous one", "status", read);
    // Not retried until the files change again.
    stamps_ = Stamps();
    return false;
  }
  ADS_LOG(info, "IP blocklists reloaded", "files", paths_.size());
  return true;
}

Status IpBlocklist::ReloadNow() {
  MutexLock lock(reload_mu_);
  stamps_ = Stamps();  // a failed read is not retried until the files change again
  return Read();
}

void IpBlocklist::Start(std::chrono::milliseconds every) {
  if (paths_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this, every] {
    NameThisThread("blocklists");
    LowerThisThreadPriority();
    MutexLock lock(mu_);
    while (!cv_.WaitFor(mu_, every, [&]() ADS_REQUIRES(mu_) { return stop_; })) {
      lock.Unlock();
      ReloadIfChanged();
      lock.Lock();
    }
  });
}

void IpBlocklist::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

}  // namespace adserver::events
