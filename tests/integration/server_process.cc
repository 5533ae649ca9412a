#include "integration/server_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace adserver::testing {

std::string AdserverBinary() { return ADSERVER_BINARY_PATH; }

ServerProcess::ServerProcess(Options options) : options_(std::move(options)) {
  data_dir_ = options_.data_dir.empty() ? dir_.File("data") : options_.data_dir;
  ready_file_ = dir_.File("ready");
  log_file_ = dir_.File("server.log");
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool ServerProcess::Start(std::chrono::seconds deadline) {
  std::vector<std::string> args = {AdserverBinary(), "serve",       "--data",       data_dir_,
                                   "--listen",       "127.0.0.1:0", "--ready-file", ready_file_,
                                   "--log-level",    options_.log_level};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("ADSERVER_")) continue;  // hermetic
    std::string name(entry.substr(0, entry.find('=')));
    if (options_.env.contains(name)) continue;  // replaced below
    env.emplace_back(*e);
  }
  if (!options_.admin_token.empty()) env.push_back("ADSERVER_ADMIN_TOKEN=" + options_.admin_token);
  for (const auto& [k, v] : options_.env) env.push_back(k + "=" + v);

  pid_ = fork();
  if (pid_ == 0) {
    if (options_.pin_to_cpu >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(options_.pin_to_cpu, &one);
      if (sched_setaffinity(0, sizeof(one), &one) != 0) _exit(126);
    }
    int fd = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(ready_file_);
    int port = 0;
    if (in >> port && port > 0) {
      port_ = static_cast<uint16_t>(port);
      return true;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "server exited during start-up: " + Output();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition
  }
  error_ = "server not ready within deadline: " + Output();
  return false;
}

void ServerProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int ServerProcess::Wait(std::chrono::seconds deadline) {
  if (pid_ <= 0) return -1;
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition
  }
  return -1;
}

int ServerProcess::Stop(std::chrono::seconds deadline) {
  Signal(SIGTERM);
  return Wait(deadline);
}

std::string ServerProcess::Output() const {
  std::ifstream in(log_file_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace adserver::testing

namespace adserver::testing {

int64_t ServerProcess::RssKib() const {
  if (pid_ <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6));
  }
  return -1;
}

}  // namespace adserver::testing
