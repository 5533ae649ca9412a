#pragma once

// What the subcommands of `adserver` share (issue 41 item 3): the invocation's context, the
// shape of one command of the table (cli/commands.h), and the helpers of the one-shot
// subcommands that run an admin API call in-process.

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "http/message.h"

namespace adserver::cli {

// One invocation: the data directory and cluster of the one-shot subcommands (the
// environment's, config::CommandDefaultsFrom, then their flags), the outcome of the subcommand
// that ran, and the flags each command binds (owned here, alive through the parse and the
// callback that reads them).
class Context {
 public:
  explicit Context(config::CommandDefaults defaults)
      : data_dir(std::move(defaults.data_dir)), cluster(std::move(defaults.cluster)) {}
  std::string data_dir;
  store::ClusterOptions cluster;
  Status status;

  template <typename T>
  T& Own() {
    auto owned = std::make_shared<T>();
    T& out = *owned;
    owned_.push_back(std::move(owned));
    return out;
  }

 private:
  std::vector<std::shared_ptr<void>> owned_;
};

// A command of the table: its name and help, and what adds its flags and subcommands to `cmd`
// with the callbacks that run them (each sets ctx.status).
struct Command {
  const char* name;
  const char* help;
  std::function<void(CLI::App& cmd, Context& ctx)> add;
};

// --data, --database-url, --redis-url and --redis-key-prefix of a one-shot subcommand.
void AddDataOptions(CLI::App& cmd, Context& ctx);

// Cluster mode needs both URLs, as `serve` does; one alone is an error naming the other.
Status CheckCluster(const Context& ctx);

// Runs one admin API call in-process on the context's data directory (or cluster) and prints
// the JSON answer; an answer other than 2xx is an error.
Status Call(const Context& ctx, http::Method method, const std::string& target,
            const std::string& body = "", const std::string& content_type = "application/json");

// A body argument: itself, or the content of @file, or stdin for @-.
Result<std::string> ReadBodyArg(const std::string& arg);

std::string JsonString(const std::string& s);
std::string JsonStringArray(const std::vector<std::string>& items);

}  // namespace adserver::cli
