// The subcommands that move data: `activity import` (wallet activity files), `backup` and
// `restore` (a data directory, issue 19).

#include <charconv>
#include <iostream>
#include <string>
#include <vector>

#include "app/activity_commands.h"
#include "app/backup.h"
#include "cli/commands.h"
#include "common/thread_setup.h"

namespace adserver::cli {
namespace {

// --nice: idle, or a nice value 0-19.
std::string CheckPriority(const std::string& value) {
  if (value == "idle") return "";
  int nice = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), nice);
  if (ec != std::errc() || end != value.data() + value.size() || nice < 0 || nice > 19) {
    return "--nice: must be idle or an integer 0-19, got '" + value + "'";
  }
  return "";
}

// A data directory's backup and restore have no cluster form: PostgreSQL has its own tools.
Status NotForCluster(const Context& ctx, const char* what) {
  if (!ctx.cluster.enabled() && ctx.cluster.database_url.empty()) return OkStatus();
  return InvalidArgumentError(what);
}

}  // namespace

// activity import FILE... (CSV / JSON lines, plain or gzip: BigQuery, Dune, cryo, NDJSON)
void AddActivity(CLI::App& cmd, Context& ctx) {
  struct Flags {
    std::vector<std::string> files;
    std::vector<std::string> mappings;
    ingest::BulkImportOptions options;
    // A bulk import next to a live server must not take the CPU from its event loops: by
    // default it runs under SCHED_IDLE (only on CPU time nothing else wants; a waking event
    // loop takes the core at once), or at a nice value 0-19. On an idle machine either costs
    // nothing.
    std::string priority = "idle";
  };
  Flags& f = ctx.Own<Flags>();
  cmd.require_subcommand(1);
  CLI::App* import = cmd.add_subcommand(
      "import", "Import activity files: CSV or JSON lines, plain or gzip (- = stdin)");
  AddDataOptions(*import, ctx);
  import->add_option("files", f.files)->required();
  import->add_option("--map", f.mappings,
                     "Column role, repeatable: wallet=from,to contract=COL project=COL "
                     "chain=COL time=COL status=COL");
  import->add_option("--chain-id", f.options.chain_id, "Chain of rows without a chain column");
  import->add_flag("--force", f.options.force, "Import even if the file was imported before");
  import
      ->add_option("--nice", f.priority,
                   "Scheduling priority of the import: idle (default: only CPU time nothing "
                   "else wants) or a nice value, 0 = normal to 19 = lowest")
      ->check(CheckPriority);
  import->callback([&] {
    // Threads started from here inherit the priority.
    if (f.priority == "idle") {
      if (!MakeThisThreadIdle()) LowerThisThreadPriority(19);
    } else {
      LowerThisThreadPriority(std::stoi(f.priority));
    }
    for (const std::string& m : f.mappings) {
      ctx.status = ingest::AddMapping(m, f.options.mapping);
      if (!ctx.status.ok()) return;
    }
    ctx.status = CheckCluster(ctx);
    if (ctx.status.ok()) {
      ctx.status = app::RunActivityImport(ctx.data_dir, ctx.cluster, f.files, f.options, std::cout);
    }
  });
}

// backup --data DIR --to DEST: an online copy while `serve` runs.
void AddBackup(CLI::App& cmd, Context& ctx) {
  std::string& to = ctx.Own<std::string>();
  AddDataOptions(cmd, ctx);
  cmd.add_option("--to", to, "New directory for the backup")->required();
  cmd.callback([&] {
    LowerThisThreadPriority(kBackgroundNice);  // next to a live server
    ctx.status = NotForCluster(ctx,
                               "backup copies a data directory; a cluster's system of record is "
                               "PostgreSQL: back it up with pg_dump or its replica (docs/deploy.md)");
    if (!ctx.status.ok()) return;
    Result<app::BackupReport> report = app::BackupDataDir(ctx.data_dir, to);
    ctx.status = report.status();
    if (report.ok()) app::PrintBackupReport(*report, to, std::cout);
  });
}

// restore --from BACKUP --data DIR: into an empty directory.
void AddRestore(CLI::App& cmd, Context& ctx) {
  std::string& from = ctx.Own<std::string>();
  AddDataOptions(cmd, ctx);
  cmd.add_option("--from", from, "Directory written by `adserver backup`")->required();
  cmd.callback([&] {
    ctx.status = NotForCluster(ctx,
                               "restore writes a data directory; restore a cluster's PostgreSQL "
                               "with pg_restore (docs/deploy.md)");
    if (!ctx.status.ok()) return;
    ctx.status = app::RestoreDataDir(from, ctx.data_dir);
    if (ctx.status.ok()) std::cout << "restored " << from << " into " << ctx.data_dir << "\n";
  });
}

}  // namespace adserver::cli
