#pragma once

#include <map>
#include <optional>
#include <string>

#include "admin/admin_api.h"
#include "common/status.h"
#include "decision/options.h"
#include "events/options.h"
#include "events/traffic_options.h"
#include "http/options.h"
#include "identity/options.h"
#include "ingest/indexer_options.h"
#include "ingest/snapshot_publisher.h"
#include "serve/options.h"
#include "store/cluster_options.h"

namespace adserver::config {

// Everything `adserver serve` can be configured with. Each module's options struct keeps its
// own defaults; this only assembles them.
// GET /metrics ([metrics]): on the main port for the operator (admin token), and without
// authentication on `listen` when set (a private network's scraper).
struct MetricsConfig {
  std::string listen;           // "HOST:PORT"; empty = no separate listener (ADSERVER_METRICS_LISTEN)
  bool campaign_spend = false;  // one spend series per campaign (cardinality: opt in)
};

struct Config {
  // Directory holding the embedded store (adserver.db); created if missing.
  std::string data_dir = "./data";
  // spdlog level: debug, info, warn, error, off.
  std::string log_level = "info";
  // "json" (one object per line) or "text"; ADSERVER_LOG_FORMAT.
  std::string log_format = "json";
  http::ServerOptions http;
  serve::ServeOptions serve;
  ingest::SnapshotOptions snapshots;
  admin::AdminOptions admin;
  identity::IdentityOptions identity;
  // Clicks, serving counters and their retention ([events]); http.public_url is in `serve`.
  events::EventsOptions events;
  // Invalid-traffic checks of clicks and advertiser events ([traffic]; the trusted proxies are
  // http.trusted_proxies).
  events::TrafficOptions traffic;
  // The live EVM indexer run inside `serve` (on its own thread); unset = not run. Set by an
  // [indexer] section or ADSERVER_INDEXER_RPC.
  std::optional<ingest::IndexerOptions> indexer;
  MetricsConfig metrics;
  // The value model of the auction ([decision]; issue 36: exploration and the rate priors).
  decision::DecisionOptions decision;
  // Sizes of the decision engine's in-memory state; only placement_pairs is configurable
  // ([decision] placement_pairs).
  decision::LiveStateOptions live;
  // Cluster mode ([cluster]; docs/deploy.md): PostgreSQL and Redis URLs, both or neither.
  store::ClusterOptions cluster;
};

// Environment variables the loader reads (a map so tests can pass their own).
using Environment = std::map<std::string, std::string>;
// The process environment, restricted to ADSERVER_* variables.
Environment ProcessEnvironment();

// Loads defaults, then the TOML file at `path` (if given), then the environment:
//   ADSERVER_ADMIN_TOKEN, ADSERVER_ADMIN_TOKEN_FILE (token read from that file),
//   ADSERVER_DATA, ADSERVER_LISTEN, ADSERVER_LOG_LEVEL, ADSERVER_PUBLIC_URL (http.public_url),
//   ADSERVER_EVENTS_KEYS, ADSERVER_EVENTS_KEYS_FILE (events.keys),
//   ADSERVER_IDENTITY_KEYS, ADSERVER_IDENTITY_KEYS_FILE (key ring read from that file; the
//   file key `identity.keys_file` does the same),
//   ADSERVER_DATABASE_URL, ADSERVER_REDIS_URL, ADSERVER_NODE_ID, ADSERVER_REDIS_KEY_PREFIX
//   (cluster.*),
//   ADSERVER_INDEXER_RPC, ADSERVER_INDEXER_CHAIN_ID, ADSERVER_INDEXER_CONFIRMATIONS (the first
//   turns the indexer on, like an [indexer] section).
// Command-line flags are applied by the caller afterwards. Returns InvalidArgument naming the
// bad key for unknown keys or wrong types in the file, Unavailable if the file can't be read.
Result<Config> LoadConfig(const std::optional<std::string>& path, const Environment& env);

// What the one-shot subcommands (`adserver publishers list`, `activity import`, ...) work on
// before their flags: the data directory ($ADSERVER_DATA, else ./data) and the cluster
// ($ADSERVER_DATABASE_URL, $ADSERVER_REDIS_URL, $ADSERVER_REDIS_KEY_PREFIX). An empty variable
// counts as unset; nothing else of the environment is read (the subcommands have no other use
// for it, and a missing key file named there must not stop a `users list`).
struct CommandDefaults {
  std::string data_dir = "./data";
  store::ClusterOptions cluster;
};
CommandDefaults CommandDefaultsFrom(const Environment& env);

// Checks ranges and relations; InvalidArgument names the bad field ("http.io_threads").
Status Validate(const Config& config);

}  // namespace adserver::config
