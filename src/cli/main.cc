// The one binary, `adserver`, and its subcommands (the table in cli/commands.h). Only main()
// exits.

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/version.h"
#include "common/crypto.h"
#include "common/log.h"

namespace adserver::cli {
namespace {

// One-shot subcommands print their result on stdout and only warnings and errors on stderr
// (issue 19); `serve` and `index` run on and log at their configured level. Their log lines are
// text for a person at a terminal; the daemons' are JSON lines (log_format, ADSERVER_LOG_FORMAT
// sets both).
void SetLogDefaults(int argc, char** argv) {
  const bool daemon =
      argc > 1 && (std::string_view(argv[1]) == "serve" || std::string_view(argv[1]) == "index");
  const char* format = std::getenv("ADSERVER_LOG_FORMAT");
  if (format == nullptr || !log::SetFormat(format)) {
    log::SetFormat(daemon ? log::LineFormat::kJson : log::LineFormat::kText);
  }
  if (!daemon && std::getenv("ADSERVER_LOG_LEVEL") == nullptr) log::SetLevel("warn");
}

}  // namespace

int Main(int argc, char** argv) {
  if (!InitCrypto()) {
    std::cerr << "libsodium failed to initialise\n";
    return 1;
  }
  CLI::App app{"adserver: a self-hosted ad server for web3 publishers"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("adserver ") + kVersion + " (commit " + kGitCommit + ")",
                       "Print the version and the git commit it was built from");
  // Defaults from the environment, then the flags: a flag given on the command line wins. (Not
  // CLI11's envname: these variables are bound to the options of every subcommand, and the
  // environment of the subcommands not given overwrote a flag of the one given.)
  Context ctx(config::CommandDefaultsFrom(config::ProcessEnvironment()));
  for (const Command& command : Commands()) {
    command.add(*app.add_subcommand(command.name, command.help), ctx);
  }
  SetLogDefaults(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!ctx.status.ok()) {
    ADS_LOG(error, "adserver failed", "status", ctx.status);
    return 1;
  }
  return 0;
}

}  // namespace adserver::cli

int main(int argc, char** argv) { return adserver::cli::Main(argc, argv); }
