#include "cli/commands.h"

namespace adserver::cli {

namespace {

Command Resource(const char* name, const char* help, const char* path) {
  return {name, help, [path](CLI::App& cmd, Context& ctx) { AddResource(cmd, ctx, path); }};
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"serve", "Run the HTTP server", AddServe},
      {"admin", "Run one admin API call on a data directory", AddAdmin},
      {"publishers", "Manage publishers", AddPublishers},
      {"keys", "Manage publisher API keys", AddKeys},
      // communities, projects, campaigns, ads: the admin API's JSON bodies.
      Resource("communities", "Manage communities", "/admin/v1/communities"),
      {"projects", "Manage projects",
       [](CLI::App& cmd, Context& ctx) {
         AddResource(cmd, ctx, "/admin/v1/projects");
         AddProjectImport(cmd, ctx);
       }},
      Resource("campaigns", "Manage campaigns", "/admin/v1/campaigns"),
      Resource("ads", "Manage ads", "/admin/v1/ads"),
      {"activity", "Wallet activity", AddActivity},
      {"backup", "Copy a data directory while the server runs (consistent)", AddBackup},
      {"restore", "Restore a backup into an empty data directory", AddRestore},
      {"index", "Follow an EVM node over JSON-RPC", AddIndex},
      {"users", "Manage console/API users", AddUsers},
  };
  return kCommands;
}

}  // namespace adserver::cli
