#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace adserver::testing {

// Runs the real `adserver serve` binary as a child process on a free port with its own data
// directory, and stops it with SIGTERM. Not thread-safe.
class ServerProcess {
 public:
  struct Options {
    std::vector<std::string> extra_args;
    std::map<std::string, std::string> env;  // added to (or replacing in) the environment
    std::string admin_token = "integration-test-admin-token";
    // Existing data directory to use instead of a fresh temp one.
    std::string data_dir;
    // --log-level of the process.
    std::string log_level = "warn";
    // >= 0: the process may only run on this CPU (its affinity mask, as `taskset -c N` sets).
    int pin_to_cpu = -1;
  };

  explicit ServerProcess(Options options);
  ServerProcess() : ServerProcess(Options{}) {}
  ~ServerProcess();

  // Starts the binary and waits (with a deadline) until it wrote its ready file. Returns
  // false with a message in `error()` if it exits or does not get ready in time.
  bool Start(std::chrono::seconds deadline = std::chrono::seconds(30));
  // Sends SIGTERM and waits for exit; returns the exit status (-1 on timeout/signal).
  int Stop(std::chrono::seconds deadline = std::chrono::seconds(20));
  // Sends a signal without waiting.
  void Signal(int sig);
  // Waits for the process to exit; returns its exit code, or -1 on timeout/killed by signal.
  int Wait(std::chrono::seconds deadline);

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Resident set size of the running process (VmRSS), KiB; -1 when not running.
  int64_t RssKib() const;
  const std::string& data_dir() const { return data_dir_; }
  const std::string& admin_token() const { return options_.admin_token; }
  const std::string& error() const { return error_; }
  // Everything the process printed to stdout/stderr so far.
  std::string Output() const;

 private:
  Options options_;
  TempDir dir_;
  std::string data_dir_;
  std::string ready_file_;
  std::string log_file_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string error_;
};

// Path of the adserver binary under test (set by CMake).
std::string AdserverBinary();

}  // namespace adserver::testing
