// The one binary, `adserver`, and its subcommands. Only main() exits.

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "app/activity_commands.h"
#include "app/backup.h"
#include "app/cli_attribution.h"
#include "app/cluster_indexer.h"
#include "app/demo.h"
#include "app/indexer.h"
#include "app/server.h"
#include "cli/version.h"
#include "common/crypto.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "common/status.h"
#include "common/thread_setup.h"
#include "config/config.h"
#include "store/composed_store.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"

namespace adserver::cli {
namespace {

struct ServeFlags {
  std::string config_file;
  std::string data_dir;
  std::string listen;
  std::string log_level;
  std::string ready_file;
  std::optional<int> io_threads;
  std::string database_url;
  std::string redis_url;
  bool demo = false;
  int demo_wallets = 3000;
};

// "127.0.0.1:8080" -> "http://127.0.0.1:8080"; wildcard hosts become 127.0.0.1.
std::string BaseUrl(const std::string& listen, uint16_t port) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") host = "127.0.0.1";
  return "http://" + host + ":" + std::to_string(port);
}

Status WriteReadyFile(const std::string& path, uint16_t port) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return UnavailableError("cannot write " + tmp);
    out << port << "\n";
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return UnavailableError("cannot rename " + tmp);
  return OkStatus();
}

Result<config::Config> BuildConfig(const ServeFlags& flags) {
  std::optional<std::string> file;
  if (!flags.config_file.empty()) file = flags.config_file;
  ADS_ASSIGN_OR_RETURN(config::Config c, config::LoadConfig(file, config::ProcessEnvironment()));
  if (!flags.data_dir.empty()) c.data_dir = flags.data_dir;
  if (!flags.listen.empty()) c.http.listen = flags.listen;
  if (!flags.log_level.empty()) c.log_level = flags.log_level;
  if (flags.io_threads) c.http.io_threads = *flags.io_threads;
  if (!flags.database_url.empty()) c.cluster.database_url = flags.database_url;
  if (!flags.redis_url.empty()) c.cluster.redis_url = flags.redis_url;
  ADS_RETURN_IF_ERROR(config::Validate(c));
  return c;
}

// Blocks SIGTERM/SIGINT (and SIGHUP, reload) in every thread (threads inherit the mask), so
// that main can wait for them with sigwait and shut down in order.
sigset_t BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

Status RunServe(const ServeFlags& flags) {
  sigset_t signals = BlockShutdownSignals();
  ADS_ASSIGN_OR_RETURN(config::Config config, BuildConfig(flags));
  log::SetFormat(config.log_format);
  log::SetLevel(config.log_level);
  ADS_ASSIGN_OR_RETURN(auto server, app::Server::Create(config));
  if (flags.demo) app::RegisterDemoCreatives(server->router());
  ADS_RETURN_IF_ERROR(server->Start());
  if (flags.demo) {
    std::string base = BaseUrl(config.http.listen, server->port());
    ADS_ASSIGN_OR_RETURN(app::DemoKeys keys,
                         app::SeedDemo(server->store(), server->events(), SystemClock::Get(), base,
                                       flags.demo_wallets));
    ADS_RETURN_IF_ERROR(server->RefreshSnapshots());
    ADS_ASSIGN_OR_RETURN(std::string operator_password,
                         app::SeedDemoOperator(server->accounts(), SystemClock::Get()));
    app::PrintDemoBanner(std::cout, keys, base, operator_password);
    // The registry's 20,000 projects after the banner: the ads above do not need them.
    if (keys.registry_pending) {
      ADS_RETURN_IF_ERROR(app::SeedDemoRegistry(server->store(), SystemClock::Get()));
      ADS_RETURN_IF_ERROR(server->RefreshSnapshots());
    }
  }
  if (!flags.ready_file.empty()) ADS_RETURN_IF_ERROR(WriteReadyFile(flags.ready_file, server->port()));
  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    // The configuration file, its key files and the environment are read again.
    Result<config::Config> reloaded = BuildConfig(flags);
    Status applied = reloaded.ok() ? server->Reload(*reloaded) : reloaded.status();
    if (!applied.ok()) ADS_LOG(error, "reload incomplete", "status", applied);
  }
  ADS_LOG(info, "shutting down", "signal", sig);
  server->Stop();
  return OkStatus();
}

// `adserver index`: the indexer loop on a thread; SIGTERM/SIGINT stop it after its batch.
Status RunIndex(const std::string& data_dir, const app::IndexerOptions& options) {
  sigset_t signals = BlockShutdownSignals();
  ADS_ASSIGN_OR_RETURN(auto store, app::OpenActivityStore(data_dir));
  // Blocks' transactions are attributed as onchain conversions, as `serve`'s indexer does.
  ADS_ASSIGN_OR_RETURN(auto attribution, app::CliAttribution::Open(data_dir, *store));
  ADS_ASSIGN_OR_RETURN(auto indexer,
                       app::LiveIndexer::Create(*store, data_dir, options, attribution.get()));
  Status status;
  std::thread worker([&] {
    status = indexer->Run();
    if (!status.ok()) kill(getpid(), SIGTERM);  // wake sigwait
  });
  int sig = 0;
  do {
    sigwait(&signals, &sig);  // SIGHUP: nothing to reload here
  } while (sig == SIGHUP);
  indexer->Stop();
  worker.join();
  return status;
}

// `adserver index` in cluster mode: one more contender for the chain's leadership, indexing
// into PostgreSQL while it leads (app/cluster_indexer.h). Blocks' transactions are attributed
// against the cluster's exposures and billed by this process, as a `serve` leader's are
// (app/cli_attribution.h).
Status RunClusterIndex(const store::ClusterOptions& cluster, const app::IndexerOptions& options) {
  sigset_t signals = BlockShutdownSignals();
  ADS_ASSIGN_OR_RETURN(auto inventory, store::PostgresStore::Open(cluster.database_url));
  ADS_ASSIGN_OR_RETURN(auto activity, store::PostgresActivityStore::Open(cluster.database_url));
  store::ComposedStore store(*inventory, *activity, *inventory);
  ADS_ASSIGN_OR_RETURN(auto attribution, app::CliAttribution::OpenCluster(cluster, store));
  app::ClusterIndexer indexer(*inventory, *activity, cluster.database_url, options,
                              attribution.get());
  ADS_RETURN_IF_ERROR(indexer.Start());
  int sig = 0;
  do {
    sigwait(&signals, &sig);  // SIGHUP: nothing to reload here
  } while (sig == SIGHUP);
  indexer.Stop();
  return attribution->Finish();
}

Result<std::string> ReadBodyArg(const std::string& arg) {
  if (arg.empty() || arg[0] != '@') return arg;
  std::string path = arg.substr(1);
  std::istream* in = &std::cin;
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return UnavailableError("cannot read " + path);
    in = &file;
  }
  return std::string(std::istreambuf_iterator<char>(*in), {});
}

// The cluster the CLI's subcommands work on (--database-url, --redis-url and their environment
// variables); not enabled = the data directory.
store::ClusterOptions& CliCluster() {
  static store::ClusterOptions cluster;
  return cluster;
}

// Cluster mode needs both URLs, as `serve` does; one alone is an error naming the other.
Status CheckCliCluster() {
  config::Config c;
  c.cluster = CliCluster();
  return config::Validate(c);
}

// Runs one admin call in-process and prints the JSON answer. Non-2xx → error.
Status Call(const std::string& data_dir, http::Method method, const std::string& target,
            const std::string& body = "", const std::string& content_type = "application/json") {
  ADS_RETURN_IF_ERROR(CheckCliCluster());
  ADS_ASSIGN_OR_RETURN(app::AdminCallResult r, app::RunAdminCall(data_dir, CliCluster(), method,
                                                                 target, body, content_type));
  std::cout << r.body << std::endl;
  if (r.status < 200 || r.status >= 300) {
    return Status(Code::kInvalidArgument, "admin call answered HTTP " + std::to_string(r.status));
  }
  return OkStatus();
}

std::string JsonString(const std::string& s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

std::string JsonStringArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, items[i]);
  }
  return out + "]";
}

// A new user's password: the file's content, else $ADSERVER_USER_PASSWORD, else the first
// line of stdin; a trailing newline is dropped.
Result<std::string> ReadPassword(const std::string& file) {
  std::string password;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return UnavailableError("cannot read " + file);
    password.assign(std::istreambuf_iterator<char>(in), {});
  } else if (const char* env = std::getenv("ADSERVER_USER_PASSWORD"); env != nullptr) {
    password = env;
  } else {
    std::getline(std::cin, password);
  }
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) return InvalidArgumentError("no password given");
  return password;
}

std::optional<http::Method> ParseMethod(const std::string& name) {
  static const std::pair<const char*, http::Method> kMethods[] = {
      {"GET", http::Method::kGet},     {"POST", http::Method::kPost},
      {"PATCH", http::Method::kPatch}, {"DELETE", http::Method::kDelete},
      {"PUT", http::Method::kPut}};
  for (auto [n, m] : kMethods) {
    if (name == n) return m;
  }
  return std::nullopt;
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
  auto env_or = [](const char* name, std::string fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : fallback;
  };
  std::string data_dir = env_or("ADSERVER_DATA", "./data");
  CliCluster().database_url = env_or("ADSERVER_DATABASE_URL", "");
  CliCluster().redis_url = env_or("ADSERVER_REDIS_URL", "");
  CliCluster().redis_key_prefix = env_or("ADSERVER_REDIS_KEY_PREFIX", "adserver:");
  auto add_data = [&](CLI::App* cmd) {
    cmd->add_option("--data", data_dir, "Data directory (default ./data, or $ADSERVER_DATA)");
    cmd->add_option("--database-url", CliCluster().database_url,
                    "Cluster mode: PostgreSQL URL (or $ADSERVER_DATABASE_URL); needs --redis-url");
    cmd->add_option("--redis-url", CliCluster().redis_url,
                    "Cluster mode: Redis URL (or $ADSERVER_REDIS_URL); needs --database-url");
    cmd->add_option("--redis-key-prefix", CliCluster().redis_key_prefix,
                    "Cluster mode: prefix of the cluster's Redis keys (default adserver:, or "
                    "$ADSERVER_REDIS_KEY_PREFIX)");
  };
  Status status;

  ServeFlags serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the HTTP server");
  serve_cmd->add_option("--config", serve.config_file, "TOML configuration file");
  serve_cmd->add_option("--data", serve.data_dir, "Data directory (created if missing)");
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT to listen on (port 0 = any free)");
  serve_cmd->add_option("--log-level", serve.log_level, "debug, info, warn, error, off");
  serve_cmd->add_option("--database-url", serve.database_url,
                        "Cluster mode: PostgreSQL URL (also $ADSERVER_DATABASE_URL, "
                        "cluster.database_url); needs --redis-url");
  serve_cmd->add_option("--redis-url", serve.redis_url,
                        "Cluster mode: Redis URL (also $ADSERVER_REDIS_URL, cluster.redis_url); "
                        "needs --database-url");
  serve_cmd->add_option("--io-threads", serve.io_threads,
                        "Event loops (0 = one per usable CPU: affinity mask and cgroup quota)");
  serve_cmd->add_option("--ready-file", serve.ready_file,
                        "Write the bound port to this file once serving");
  serve_cmd->add_flag("--demo", serve.demo, "Seed a demo dataset and print keys and curl examples");
  serve_cmd->add_option("--demo-wallets", serve.demo_wallets, "Synthetic wallets in the demo");
  serve_cmd->callback([&] { status = RunServe(serve); });

  // Generic admin call: adserver admin GET /admin/v1/campaigns
  std::string method_name, target, body, content_type = "application/json";
  CLI::App* admin_cmd = app.add_subcommand("admin", "Run one admin API call on a data directory");
  add_data(admin_cmd);
  admin_cmd->add_option("method", method_name, "GET, POST, PATCH, DELETE")->required();
  admin_cmd->add_option("path", target, "/admin/v1/...")->required();
  admin_cmd->add_option("body", body, "JSON body, or @file, or @- for stdin");
  admin_cmd->add_option("--content-type", content_type, "Body content type");
  admin_cmd->callback([&] {
    auto method = ParseMethod(method_name);
    if (!method) {
      status = InvalidArgumentError("unknown method " + method_name);
      return;
    }
    Result<std::string> b = ReadBodyArg(body);
    status = b.ok() ? Call(data_dir, *method, target, *b, content_type) : b.status();
  });

  // publishers
  CLI::App* pubs = app.add_subcommand("publishers", "Manage publishers");
  pubs->require_subcommand(1);
  std::string name;
  std::vector<std::string> origins;
  CLI::App* pub_create = pubs->add_subcommand("create", "Create a publisher");
  add_data(pub_create);
  pub_create->add_option("--name", name)->required();
  pub_create->add_option("--allowed-origin", origins, "Allowed browser origin (repeatable)");
  pub_create->callback([&] {
    std::string json = "{\"name\":" + JsonString(name);
    if (!origins.empty()) json += ",\"allowedOrigins\":" + JsonStringArray(origins);
    status = Call(data_dir, http::Method::kPost, "/admin/v1/publishers", json + "}");
  });
  CLI::App* pub_list = pubs->add_subcommand("list", "List publishers");
  add_data(pub_list);
  pub_list->callback([&] { status = Call(data_dir, http::Method::kGet, "/admin/v1/publishers"); });

  // keys
  CLI::App* keys = app.add_subcommand("keys", "Manage publisher API keys");
  keys->require_subcommand(1);
  int64_t publisher_id = 0, key_id = 0;
  bool test_key = false;
  CLI::App* key_create = keys->add_subcommand("create", "Create a key (printed once)");
  add_data(key_create);
  key_create->add_option("--publisher", publisher_id)->required();
  key_create->add_flag("--test", test_key, "Test key: sample ads, no events, no budget");
  key_create->callback([&] {
    status = Call(data_dir, http::Method::kPost,
                  "/admin/v1/publishers/" + std::to_string(publisher_id) + "/keys",
                  test_key ? R"({"test":true})" : R"({"test":false})");
  });
  CLI::App* key_list = keys->add_subcommand("list", "List a publisher's keys");
  add_data(key_list);
  key_list->add_option("--publisher", publisher_id)->required();
  key_list->callback([&] {
    status = Call(data_dir, http::Method::kGet,
                  "/admin/v1/publishers/" + std::to_string(publisher_id) + "/keys");
  });
  CLI::App* key_revoke = keys->add_subcommand("revoke", "Revoke a key at once");
  add_data(key_revoke);
  key_revoke->add_option("--publisher", publisher_id)->required();
  key_revoke->add_option("--key", key_id)->required();
  key_revoke->callback([&] {
    status = Call(data_dir, http::Method::kDelete,
                  "/admin/v1/publishers/" + std::to_string(publisher_id) + "/keys/" +
                      std::to_string(key_id));
  });

  // communities, projects, campaigns, ads: create from JSON (the admin API body), list.
  struct Resource {
    const char* name;
    const char* path;
  };
  static const Resource kResources[] = {{"communities", "/admin/v1/communities"},
                                        {"projects", "/admin/v1/projects"},
                                        {"campaigns", "/admin/v1/campaigns"},
                                        {"ads", "/admin/v1/ads"}};
  std::string json_body;
  std::string resource_id;
  for (const Resource& r : kResources) {
    CLI::App* cmd = app.add_subcommand(r.name, std::string("Manage ") + r.name);
    cmd->require_subcommand(1);
    CLI::App* create = cmd->add_subcommand("create", "Create from a JSON body (admin API shape)");
    add_data(create);
    create->add_option("json", json_body, "JSON body, @file or @-")->required();
    create->callback([&, r] {
      Result<std::string> b = ReadBodyArg(json_body);
      status = b.ok() ? Call(data_dir, http::Method::kPost, r.path, *b) : b.status();
    });
    CLI::App* list = cmd->add_subcommand("list", "List");
    add_data(list);
    list->callback([&, r] { status = Call(data_dir, http::Method::kGet, r.path); });
    CLI::App* get = cmd->add_subcommand("get", "Show one");
    add_data(get);
    get->add_option("id", resource_id)->required();
    get->callback([&, r] {
      status = Call(data_dir, http::Method::kGet, std::string(r.path) + "/" + resource_id);
    });
    CLI::App* update = cmd->add_subcommand("update", "Change fields (PATCH with a JSON body)");
    add_data(update);
    update->add_option("id", resource_id)->required();
    update->add_option("json", json_body, "JSON body, @file or @-")->required();
    update->callback([&, r] {
      Result<std::string> b = ReadBodyArg(json_body);
      status = b.ok() ? Call(data_dir, http::Method::kPatch, std::string(r.path) + "/" + resource_id, *b)
                      : b.status();
    });
    CLI::App* del = cmd->add_subcommand("delete", "Delete one");
    add_data(del);
    del->add_option("id", resource_id)->required();
    del->callback([&, r] {
      status = Call(data_dir, http::Method::kDelete, std::string(r.path) + "/" + resource_id);
    });
  }

  // projects import FILE... (token lists, MetaMask contract map, address books)
  std::vector<std::string> list_files;
  CLI::App* project_import = app.get_subcommand("projects")->add_subcommand(
      "import", "Merge project lists into the registry (tools/registry/out/*.json)");
  add_data(project_import);
  project_import->add_option("files", list_files)->required();
  project_import->callback([&] {
    // Named entries of every list first, then the entries without a name, which join only
    // contracts some list names (issue 40): the registry does not depend on the files' order
    // past the first pass, and importing the same files again changes nothing.
    for (const char* pass : {"named", "unnamed"}) {
      for (const std::string& f : list_files) {
        Result<std::string> b = ReadBodyArg("@" + f);
        status = b.ok() ? Call(data_dir, http::Method::kPost,
                               std::string("/admin/v1/projects/import?entries=") + pass, *b)
                        : b.status();
        if (!status.ok()) return;
      }
    }
  });

  // activity import FILE... (CSV / JSON lines, plain or gzip: BigQuery, Dune, cryo, NDJSON)
  CLI::App* activity = app.add_subcommand("activity", "Wallet activity");
  activity->require_subcommand(1);
  std::vector<std::string> files;
  std::vector<std::string> mappings;
  ingest::BulkImportOptions import_options;
  CLI::App* import = activity->add_subcommand(
      "import", "Import activity files: CSV or JSON lines, plain or gzip (- = stdin)");
  add_data(import);
  import->add_option("files", files)->required();
  import->add_option("--map", mappings,
                     "Column role, repeatable: wallet=from,to contract=COL project=COL "
                     "chain=COL time=COL status=COL");
  import->add_option("--chain-id", import_options.chain_id, "Chain of rows without a chain column");
  import->add_flag("--force", import_options.force, "Import even if the file was imported before");
  // A bulk import next to a live server must not take the CPU from its event loops: by default
  // it runs under SCHED_IDLE (only on CPU time nothing else wants; a waking event loop takes
  // the core at once), or at a nice value 0-19. On an idle machine either costs nothing.
  std::string import_priority = "idle";
  import
      ->add_option("--nice", import_priority,
                   "Scheduling priority of the import: idle (default: only CPU time nothing "
                   "else wants) or a nice value, 0 = normal to 19 = lowest")
      ->check([](const std::string& value) -> std::string {
        if (value == "idle") return "";
        int nice = -1;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), nice);
        if (ec != std::errc() || end != value.data() + value.size() || nice < 0 || nice > 19) {
          return "--nice: must be idle or an integer 0-19, got '" + value + "'";
        }
        return "";
      });
  import->callback([&] {
    // Threads started from here inherit the priority.
    if (import_priority == "idle") {
      if (!MakeThisThreadIdle()) LowerThisThreadPriority(19);
    } else {
      LowerThisThreadPriority(std::stoi(import_priority));
    }
    for (const std::string& m : mappings) {
      status = ingest::AddMapping(m, import_options.mapping);
      if (!status.ok()) return;
    }
    status = CheckCliCluster();
    if (status.ok()) {
      status = app::RunActivityImport(data_dir, CliCluster(), files, import_options, std::cout);
    }
  });

  // backup --data DIR --to DEST / restore --from BACKUP --data DIR (issue 19): an online copy
  // while `serve` runs, and its restore into an empty directory.
  std::string backup_to;
  CLI::App* backup_cmd =
      app.add_subcommand("backup", "Copy a data directory while the server runs (consistent)");
  add_data(backup_cmd);
  backup_cmd->add_option("--to", backup_to, "New directory for the backup")->required();
  backup_cmd->callback([&] {
    LowerThisThreadPriority(kBackgroundNice);  // next to a live server
    if (CliCluster().enabled() || !CliCluster().database_url.empty()) {
      status = InvalidArgumentError(
          "backup copies a data directory; a cluster's system of record is PostgreSQL: back it "
          "up with pg_dump or its replica (docs/deploy.md)");
      return;
    }
    Result<app::BackupReport> report = app::BackupDataDir(data_dir, backup_to);
    status = report.status();
    if (report.ok()) app::PrintBackupReport(*report, backup_to, std::cout);
  });
  std::string restore_from;
  CLI::App* restore_cmd =
      app.add_subcommand("restore", "Restore a backup into an empty data directory");
  add_data(restore_cmd);
  restore_cmd->add_option("--from", restore_from, "Directory written by `adserver backup`")
      ->required();
  restore_cmd->callback([&] {
    if (CliCluster().enabled() || !CliCluster().database_url.empty()) {
      status = InvalidArgumentError(
          "restore writes a data directory; restore a cluster's PostgreSQL with pg_restore "
          "(docs/deploy.md)");
      return;
    }
    status = app::RestoreDataDir(restore_from, data_dir);
    if (status.ok()) std::cout << "restored " << restore_from << " into " << data_dir << "\n";
  });

  // index --rpc URL --chain-id N: follow an EVM node into the activity index (`serve` runs the
  // same indexer itself when its configuration has an [indexer] section).
  app::IndexerOptions index_options;
  uint64_t from_block = 0;
  CLI::App* index_cmd = app.add_subcommand("index", "Follow an EVM node over JSON-RPC");
  add_data(index_cmd);
  index_cmd->add_option("--rpc", index_options.rpc_url, "http://host:port of the node")->required();
  index_cmd->add_option("--chain-id", index_options.chain_id)->required();
  index_cmd
      ->add_option("--confirmations", index_options.confirmations,
                   "Blocks to wait before applying a block (default 2); 0 applies each "
                   "block at once and undoes it on a reorg (up to 64 blocks deep)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  CLI::Option* from_opt = index_cmd->add_option("--from-block", from_block,
                                                "First block without a checkpoint (default: head)");
  index_cmd->callback([&] {
    if (*from_opt) index_options.from_block = from_block;
    status = CliCluster().enabled() ? RunClusterIndex(CliCluster(), index_options)
                                    : RunIndex(data_dir, index_options);
  });

  // users create --email E --role R [--publisher N | --community N] [--password-file F]
  // (issue 16): the first operator of the console; the password comes from the file, else
  // $ADSERVER_USER_PASSWORD, else the first line of stdin, never from the command line.
  CLI::App* users = app.add_subcommand("users", "Manage console/API users");
  users->require_subcommand(1);
  std::string user_email, user_role, password_file;
  int64_t user_publisher = 0, user_community = 0;
  CLI::App* user_create = users->add_subcommand("create", "Create a user");
  add_data(user_create);
  user_create->add_option("--email", user_email)->required();
  user_create->add_option("--role", user_role, "operator, publisher or advertiser")->required();
  user_create->add_option("--publisher", user_publisher, "The publisher of a publisher user");
  user_create->add_option("--community", user_community, "The community of an advertiser user");
  user_create->add_option("--password-file", password_file, "File holding the password");
  user_create->callback([&] {
    Result<std::string> password = ReadPassword(password_file);
    if (!password.ok()) {
      status = password.status();
      return;
    }
    std::string json = "{\"email\":" + JsonString(user_email) +
                       ",\"role\":" + JsonString(user_role) +
                       ",\"password\":" + JsonString(*password);
    if (user_publisher > 0) json += ",\"publisherId\":" + std::to_string(user_publisher);
    if (user_community > 0) json += ",\"communityId\":" + std::to_string(user_community);
    status = Call(data_dir, http::Method::kPost, "/admin/v1/users", json + "}");
  });
  CLI::App* user_list = users->add_subcommand("list", "List users");
  add_data(user_list);
  user_list->callback([&] { status = Call(data_dir, http::Method::kGet, "/admin/v1/users"); });

  // One-shot subcommands print their result on stdout and only warnings and errors on stderr
  // (issue 19); `serve` and `index` run on and log at their configured level.
  // Their log lines are text for a person at a terminal; the daemons' are JSON lines
  // (log_format, ADSERVER_LOG_FORMAT sets both).
  const bool daemon = argc > 1 && (std::string_view(argv[1]) == "serve" ||
                                   std::string_view(argv[1]) == "index");
  const char* format = std::getenv("ADSERVER_LOG_FORMAT");
  if (format == nullptr || !log::SetFormat(format)) {
    log::SetFormat(daemon ? log::LineFormat::kJson : log::LineFormat::kText);
  }
  if (!daemon && std::getenv("ADSERVER_LOG_LEVEL") == nullptr) log::SetLevel("warn");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!status.ok()) {
    ADS_LOG(error, "adserver failed", "status", status);
    return 1;
  }
  return 0;
}

}  // namespace adserver::cli

int main(int argc, char** argv) { return adserver::cli::Main(argc, argv); }
