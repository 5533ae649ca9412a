#pragma once

// Operator blocklists of client addresses (issue 18): files of addresses or CIDR networks (one
// a line, `#` starts a comment), e.g. Tor exit lists or datacenter ranges. Reloaded without a
// restart when a file's modification time or size changes: a background thread looks every
// few seconds and publishes a new set; readers take the current set without a lock.
// Thread-safe.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/ip_address.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/status.h"

namespace adserver::events {

// Parses one blocklist file's text; InvalidArgument naming `name`:line for a line that is not
// an address or network.
Result<std::vector<IpNetwork>> ParseBlocklist(std::string_view text, std::string_view name);

class IpBlocklist {
 public:
  // Reads every file once; a missing or malformed file is an error (start-up fails).
  static Result<std::unique_ptr<IpBlocklist>> Load(std::vector<std::string> paths);
  ~IpBlocklist();
  IpBlocklist(const IpBlocklist&) = delete;
  IpBlocklist& operator=(const IpBlocklist&) = delete;

  bool Contains(const IpAddress& ip) const;
  // Re-reads the files when any changed (modification time or size) since the last read.
  // A file that cannot be read or parsed keeps the previous set (logged); returns true when a
  // new set was published.
  bool ReloadIfChanged();
  // Re-reads the files now, changed or not (SIGHUP). A file that cannot be read or parsed keeps
  // the previous set and is the error returned.
  Status ReloadNow();
  // Calls ReloadIfChanged every `every` on a background thread until Stop (or destruction).
  void Start(std::chrono::milliseconds every);
  void Stop();

 private:
  struct FileStamp {
    int64_t mtime_ns = -1;
    off_t size = -1;
    bool operator==(const FileStamp&) const = default;
  };
  explicit IpBlocklist(std::vector<std::string> paths);
  // Reads every file and publishes the set; stamps_ updated on success.
  Status Read() ADS_REQUIRES(reload_mu_);
  std::vector<FileStamp> Stamps() const;

  const std::vector<std::string> paths_;
  Published<IpSet> set_;
  Mutex reload_mu_;  // serialises Read
  std::vector<FileStamp> stamps_ ADS_GUARDED_BY(reload_mu_);
  Mutex mu_;
  CondVar cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace adserver::events
