// The long-running subcommands: `serve` (the HTTP server) and `index` (an EVM node followed into
// the activity index). Both block SIGTERM/SIGINT/SIGHUP and wait for them.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>

#include "app/activity_commands.h"
#include "app/cli_attribution.h"
#include "app/indexer.h"
#include "app/server.h"
#include "cli/commands.h"
#include "common/log.h"
#include "demo/demo.h"
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

// Waits for SIGTERM or SIGINT (SIGHUP: nothing to reload); returns the signal.
int WaitForStop(const sigset_t& signals) {
  int sig = 0;
  do {
    sigwait(&signals, &sig);
  } while (sig == SIGHUP);
  return sig;
}

// The demo's dataset, operator and banner (`serve --demo`).
Status StartDemo(app::Server& server, const config::Config& config, int wallets) {
  std::string base = BaseUrl(config.http.listen, server.port());
  ADS_ASSIGN_OR_RETURN(demo::DemoKeys keys,
                       demo::SeedDemo(server.inventory(), server.activity_store(), server.events(),
                                      SystemClock::Get(), base, wallets));
  ADS_RETURN_IF_ERROR(server.RefreshSnapshots());
  ADS_ASSIGN_OR_RETURN(std::string operator_password,
                       demo::SeedDemoOperator(server.backend().accounts(), SystemClock::Get()));
  demo::PrintDemoBanner(std::cout, keys, base, operator_password);
  // The registry's 20,000 projects after the banner: the ads above do not need them.
  if (keys.registry_pending) {
    ADS_RETURN_IF_ERROR(demo::SeedDemoRegistry(server.inventory(), SystemClock::Get()));
    ADS_RETURN_IF_ERROR(server.RefreshSnapshots());
  }
  return OkStatus();
}

Status RunServe(const ServeFlags& flags) {
  sigset_t signals = BlockShutdownSignals();
  ADS_ASSIGN_OR_RETURN(config::Config config, BuildConfig(flags));
  log::SetFormat(config.log_format);
  log::SetLevel(config.log_level);
  ADS_ASSIGN_OR_RETURN(auto server, app::Server::Create(config));
  if (flags.demo) demo::RegisterDemoCreatives(server->router());
  ADS_RETURN_IF_ERROR(server->Start());
  if (flags.demo) ADS_RETURN_IF_ERROR(StartDemo(*server, config, flags.demo_wallets));
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
  ADS_ASSIGN_OR_RETURN(app::EmbeddedStore store, app::OpenEmbeddedStore(data_dir));
  // Blocks' transactions are attributed as onchain conversions, as `serve`'s indexer does.
  ADS_ASSIGN_OR_RETURN(auto attribution, app::OpenCliAttribution(data_dir, store.stores()));
  ADS_ASSIGN_OR_RETURN(
      auto indexer,
      app::LiveIndexer::Create(*store.sqlite, store.index(), data_dir, options, attribution.get()));
  Status status;
  std::thread worker([&] {
    status = indexer->Run();
    if (!status.ok()) kill(getpid(), SIGTERM);  // wake sigwait
  });
  WaitForStop(signals);
  indexer->Stop();
  worker.join();
  return status;
}

// `adserver index` in cluster mode: one more contender for the chain's leadership, indexing
// into PostgreSQL while it leads (cluster/indexer.h). Blocks' transactions are attributed
// against the cluster's exposures and billed by this process, as a `serve` leader's are
// (cluster/cli_attribution.h).
Status RunClusterIndex(const store::ClusterOptions& cluster, const app::IndexerOptions& options) {
  sigset_t signals = BlockShutdownSignals();
  ADS_ASSIGN_OR_RETURN(app::ClusterStore store, app::OpenClusterStore(cluster.database_url));
  ADS_ASSIGN_OR_RETURN(auto attribution, app::OpenCliAttribution(cluster, store.stores()));
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<cluster::ClusterIndexer> indexer,
                       app::OpenClusterIndexer(*store.postgres, *store.activity,
                                               cluster.database_url, options, attribution.get()));
  indexer->Start();
  WaitForStop(signals);
  indexer->Stop();
  return attribution->Finish();
}

}  // namespace

void AddServe(CLI::App& cmd, Context& ctx) {
  ServeFlags& serve = ctx.Own<ServeFlags>();
  cmd.add_option("--config", serve.config_file, "TOML configuration file");
  cmd.add_option("--data", serve.data_dir, "Data directory (created if missing)");
  cmd.add_option("--listen", serve.listen, "HOST:PORT to listen on (port 0 = any free)");
  cmd.add_option("--log-level", serve.log_level, "debug, info, warn, error, off");
  cmd.add_option("--database-url", serve.database_url,
                 "Cluster mode: PostgreSQL URL (also $ADSERVER_DATABASE_URL, "
                 "cluster.database_url); needs --redis-url");
  cmd.add_option("--redis-url", serve.redis_url,
                 "Cluster mode: Redis URL (also $ADSERVER_REDIS_URL, cluster.redis_url); "
                 "needs --database-url");
  cmd.add_option("--io-threads", serve.io_threads,
                 "Event loops (0 = one per usable CPU: affinity mask and cgroup quota)");
  cmd.add_option("--ready-file", serve.ready_file, "Write the bound port to this file once serving");
  cmd.add_flag("--demo", serve.demo, "Seed a demo dataset and print keys and curl examples");
  cmd.add_option("--demo-wallets", serve.demo_wallets, "Synthetic wallets in the demo");
  cmd.callback([&] { ctx.status = RunServe(serve); });
}

// index --rpc URL --chain-id N: follow an EVM node into the activity index (`serve` runs the
// same indexer itself when its configuration has an [indexer] section).
void AddIndex(CLI::App& cmd, Context& ctx) {
  struct Flags {
    app::IndexerOptions options;
    uint64_t from_block = 0;
  };
  Flags& f = ctx.Own<Flags>();
  AddDataOptions(cmd, ctx);
  cmd.add_option("--rpc", f.options.rpc_url, "http://host:port of the node")->required();
  cmd.add_option("--chain-id", f.options.chain_id)->required();
  cmd.add_option("--confirmations", f.options.confirmations,
                 "Blocks to wait before applying a block (default 2); 0 applies each "
                 "block at once and undoes it on a reorg (up to 64 blocks deep)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  CLI::Option* from_opt =
      cmd.add_option("--from-block", f.from_block, "First block without a checkpoint (default: head)");
  cmd.callback([&, from_opt] {
    if (*from_opt) f.options.from_block = f.from_block;
    ctx.status = ctx.cluster.enabled() ? RunClusterIndex(ctx.cluster, f.options)
                                       : RunIndex(ctx.data_dir, f.options);
  });
}

}  // namespace adserver::cli
