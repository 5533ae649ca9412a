#pragma once

// The subcommands of `adserver`, as a table (issue 41 item 3): cli/main.cc adds each to the
// command line in this order (the order of `adserver --help`). One file per group:
// daemon_commands.cc (serve, index), inventory_commands.cc (admin, publishers, keys,
// communities, projects, campaigns, ads), data_commands.cc (activity, backup, restore),
// user_commands.cc (users).

#include <vector>

#include "cli/context.h"

namespace adserver::cli {

const std::vector<Command>& Commands();

// The groups' commands (each adds its flags, subcommands and callbacks to `cmd`).
void AddServe(CLI::App& cmd, Context& ctx);
void AddIndex(CLI::App& cmd, Context& ctx);
void AddAdmin(CLI::App& cmd, Context& ctx);
void AddPublishers(CLI::App& cmd, Context& ctx);
void AddKeys(CLI::App& cmd, Context& ctx);
// create, list, get, update, delete of the admin API's collection at `path`.
void AddResource(CLI::App& cmd, Context& ctx, const char* path);
// projects import FILE...
void AddProjectImport(CLI::App& cmd, Context& ctx);
void AddActivity(CLI::App& cmd, Context& ctx);
void AddBackup(CLI::App& cmd, Context& ctx);
void AddRestore(CLI::App& cmd, Context& ctx);
void AddUsers(CLI::App& cmd, Context& ctx);

}  // namespace adserver::cli
