#include "config/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "common/ip_address.h"
#include "events/traffic_limiter.h"
#include "identity/key_ring.h"

extern char** environ;

namespace adserver::config {
namespace {

// The node's value if it is a TOML integer. Not node::value<int64_t>(), which also converts
// floats and casts one beyond int64's range (1.9e29) with undefined behaviour (found by the
// config fuzzer under UBSan).
std::optional<int64_t> IntegerOf(const toml::node& n) {
  if (const toml::value<int64_t>* i = n.as_integer()) return i->get();
  return std::nullopt;
}

// Reads an integer key into `out`; records an error for a wrong type.
template <typename T>
void ReadInt(const toml::table& t, const char* section, const char* key, T& out,
             std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  if (auto v = IntegerOf(*n)) {
    out = static_cast<T>(*v);
  } else {
    errors.push_back({std::string(section) + "." + key, "must be an integer"});
  }
}

void ReadMillis(const toml::table& t, const char* section, const char* key,
                std::chrono::milliseconds& out, std::vector<FieldError>& errors) {
  int64_t ms = out.count();
  ReadInt(t, section, key, ms, errors);
  out = std::chrono::milliseconds(ms);
}

// Reads a number key (integer or float) into `out`; records an error for a wrong type.
void ReadDouble(const toml::table& t, const char* section, const char* key, double& out,
                std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  if (auto v = n->value<double>()) {
    out = *v;
  } else {
    errors.push_back({std::string(section) + "." + key, "must be a number"});
  }
}

void ReadMicros(const toml::table& t, const char* section, const char* key,
                std::chrono::microseconds& out, std::vector<FieldError>& errors) {
  int64_t us = out.count();
  ReadInt(t, section, key, us, errors);
  out = std::chrono::microseconds(us);
}

void ReadString(const toml::table& t, const char* section, const char* key, std::string& out,
                std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  if (auto v = n->value<std::string>()) {
    out = *v;
  } else {
    errors.push_back({std::string(section) + "." + key, "must be a string"});
  }
}

void CheckKnownKeys(const toml::table& t, const std::string& section,
                    std::initializer_list<std::string_view> known, std::vector<FieldError>& errors) {
  for (const auto& [k, v] : t) {
    bool found = false;
    for (std::string_view name : known) found = found || k.str() == name;
    if (!found) {
      errors.push_back({section.empty() ? std::string(k.str()) : section + "." + std::string(k.str()),
                        "unknown configuration key"});
    }
  }
}

const toml::table* Section(const toml::table& root, const char* name,
                           std::vector<FieldError>& errors) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  if (!n->is_table()) {
    errors.push_back({name, "must be a table"});
    return nullptr;
  }
  return n->as_table();
}

// Reads an array of strings.
void ReadStrings(const toml::table& t, const char* section, const char* key,
                 std::vector<std::string>& out, std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  const toml::array* array = n->as_array();
  std::vector<std::string> values;
  for (size_t i = 0; array != nullptr && i < array->size(); ++i) {
    std::optional<std::string> v = array->get(i)->value<std::string>();
    if (!v) break;
    values.push_back(*v);
  }
  if (array == nullptr || values.size() != array->size()) {
    errors.push_back({std::string(section) + "." + key, "must be an array of strings"});
    return;
  }
  out = std::move(values);
}

// Reads rate windows: an array of [seconds, max] pairs.
void ReadWindows(const toml::table& t, const char* section, const char* key,
                 std::vector<events::RateWindow>& out, std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  const toml::array* array = n->as_array();
  std::vector<events::RateWindow> windows;
  for (size_t i = 0; array != nullptr && i < array->size(); ++i) {
    const toml::array* pair = array->get(i)->as_array();
    if (pair == nullptr || pair->size() != 2) break;
    std::optional<int64_t> seconds = IntegerOf(*pair->get(0));
    std::optional<int64_t> max = IntegerOf(*pair->get(1));
    if (!seconds || !max) break;
    windows.push_back({.seconds = *seconds, .max = *max});
  }
  if (array == nullptr || windows.size() != array->size()) {
    errors.push_back({std::string(section) + "." + key,
                      "must be an array of [seconds, max] pairs, e.g. [[60, 1], [3600, 10]]"});
    return;
  }
  out = std::move(windows);
}

void ReadBool(const toml::table& t, const char* section, const char* key, bool& out,
              std::vector<FieldError>& errors) {
  const toml::node* n = t.get(key);
  if (!n) return;
  // as_boolean, not value<bool>: the latter also takes integers.
  if (const toml::value<bool>* v = n->as_boolean()) {
    out = v->get();
  } else {
    errors.push_back({std::string(section) + "." + key, "must be true or false"});
  }
}

// [[network.chains]]: id, name and (optional) explorer of a chain the console names, merged
// by id into the defaults (admin::DefaultChains). An explorer is http(s)://host[/path] without
// a trailing slash, or "" for none.
void ReadChains(const toml::table& network, std::vector<admin::ChainInfo>& out,
                std::vector<FieldError>& errors) {
  const toml::node* n = network.get("chains");
  if (!n) return;
  const toml::array* array = n->as_array();
  if (array == nullptr) {
    errors.push_back({"network.chains", "must be an array of tables ([[network.chains]])"});
    return;
  }
  std::vector<admin::ChainInfo> changes;
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string field = "network.chains[" + std::to_string(i) + "]";
    const toml::table* t = array->get(i)->as_table();
    if (t == nullptr) {
      errors.push_back({field, "must be a table with id, name and explorer"});
      continue;
    }
    CheckKnownKeys(*t, field, {"id", "name", "explorer"}, errors);
    admin::ChainInfo chain;
    const size_t before = errors.size();
    ReadInt(*t, field.c_str(), "id", chain.id, errors);
    ReadString(*t, field.c_str(), "name", chain.name, errors);
    ReadString(*t, field.c_str(), "explorer", chain.explorer, errors);
    if (errors.size() != before) continue;
    if (chain.id < 1 || chain.id > int64_t{UINT32_MAX}) {
      errors.push_back({field + ".id", "must be a chain id from 1 to 4294967295"});
    }
    if (chain.name.empty() || chain.name.size() > 64) {
      errors.push_back({field + ".name", "must be 1 to 64 characters"});
    }
    const std::string& url = chain.explorer;
    const bool scheme = url.starts_with("https://") || url.starts_with("http://");
    const size_t host = url.find("://") + 3;
    if (!url.empty() && (!scheme || url.size() > 200 || url.size() == host || url.ends_with("/") ||
                         url.find_first_of(" \t\"'<>?#") != std::string::npos)) {
      errors.push_back({field + ".explorer",
                        "must be http(s)://host[/path] without a trailing slash, query or fragment "
                        "(at most 200 characters), or \"\" for none"});
    }
    for (const admin::ChainInfo& earlier : changes) {
      if (earlier.id == chain.id) errors.push_back({field + ".id", "names a chain named above"});
    }
    changes.push_back(std::move(chain));
  }
  out = admin::MergeChains(std::move(out), changes);
}

void ApplyTrafficFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  const toml::table* t = Section(root, "traffic", errors);
  if (!t) return;
  CheckKnownKeys(*t, "traffic",
                 {"require_user_agent", "block_crawlers", "ip_blocklists",
                  "blocklist_check_seconds", "min_click_delay_ms", "require_same_user_agent",
                  "check_click_origin", "click_limits", "event_limits", "rate_table_entries",
                  "check_impressions", "wallet_serves_per_minute", "wallet_max_publishers",
                  "wallet_publishers_seconds", "wallet_table_entries"},
                 errors);
  events::TrafficOptions& o = c.traffic;
  ReadBool(*t, "traffic", "require_user_agent", o.require_user_agent, errors);
  ReadBool(*t, "traffic", "block_crawlers", o.block_crawlers, errors);
  ReadStrings(*t, "traffic", "ip_blocklists", o.ip_blocklists, errors);
  ReadInt(*t, "traffic", "blocklist_check_seconds", o.blocklist_check_seconds, errors);
  ReadInt(*t, "traffic", "min_click_delay_ms", o.min_click_delay_ms, errors);
  ReadBool(*t, "traffic", "require_same_user_agent", o.require_same_user_agent, errors);
  ReadBool(*t, "traffic", "check_click_origin", o.check_click_origin, errors);
  ReadWindows(*t, "traffic", "click_limits", o.click_limits, errors);
  ReadWindows(*t, "traffic", "event_limits", o.event_limits, errors);
  ReadInt(*t, "traffic", "rate_table_entries", o.rate_table_entries, errors);
  ReadBool(*t, "traffic", "check_impressions", o.check_impressions, errors);
  ReadInt(*t, "traffic", "wallet_serves_per_minute", o.wallet_serves_per_minute, errors);
  ReadInt(*t, "traffic", "wallet_max_publishers", o.wallet_max_publishers, errors);
  ReadInt(*t, "traffic", "wallet_publishers_seconds", o.wallet_publishers_seconds, errors);
  ReadInt(*t, "traffic", "wallet_table_entries", o.wallet_table_entries, errors);
}

// Reads the whole key ring file (a secret: its content is never put in a message).
Status ReadKeysFile(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return UnavailableError("cannot read identity keys file " + path);
  std::stringstream text;
  text << in.rdbuf();
  out = text.str();
  return OkStatus();
}

void ApplyIdentityFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  const toml::table* t = Section(root, "identity", errors);
  if (!t) return;
  CheckKnownKeys(*t, "identity",
                 {"cookie_name", "cookie_max_age_seconds", "cookie_refresh_seconds",
                  "retention_seconds", "max_wallets", "keys_file", "flush_interval_ms",
                  "sweep_interval_ms"},
                 errors);
  ReadString(*t, "identity", "cookie_name", c.identity.cookie_name, errors);
  ReadInt(*t, "identity", "cookie_max_age_seconds", c.identity.cookie_max_age_seconds, errors);
  ReadInt(*t, "identity", "cookie_refresh_seconds", c.identity.cookie_refresh_seconds, errors);
  ReadInt(*t, "identity", "retention_seconds", c.identity.retention_seconds, errors);
  ReadInt(*t, "identity", "max_wallets", c.identity.max_wallets, errors);
  ReadMillis(*t, "identity", "flush_interval_ms", c.identity.flush_interval, errors);
  ReadMillis(*t, "identity", "sweep_interval_ms", c.identity.sweep_interval, errors);
  std::string keys_file;
  ReadString(*t, "identity", "keys_file", keys_file, errors);
  if (!keys_file.empty()) {
    Status st = ReadKeysFile(keys_file, c.identity.keys);
    if (!st.ok()) errors.push_back({"identity.keys_file", st.message()});
  }
}

Status ApplyIdentityEnvironment(const Environment& env, Config& c) {
  if (auto it = env.find("ADSERVER_IDENTITY_KEYS_FILE"); it != env.end()) {
    ADS_RETURN_IF_ERROR(ReadKeysFile(it->second, c.identity.keys));
  }
  if (auto it = env.find("ADSERVER_IDENTITY_KEYS"); it != env.end()) c.identity.keys = it->second;
  return OkStatus();
}

void ApplyIndexerFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  const toml::table* t = Section(root, "indexer", errors);
  if (!t) return;
  CheckKnownKeys(*t, "indexer",
                 {"rpc", "chain_id", "confirmations", "poll_ms", "batch_blocks", "from_block"},
                 errors);
  ingest::IndexerOptions& o = c.indexer.emplace();
  ReadString(*t, "indexer", "rpc", o.rpc_url, errors);
  ReadInt(*t, "indexer", "chain_id", o.chain_id, errors);
  int64_t confirmations = o.confirmations;
  ReadInt(*t, "indexer", "confirmations", confirmations, errors);
  o.confirmations = static_cast<int>(std::clamp<int64_t>(confirmations, -1, INT32_MAX));
  ReadMillis(*t, "indexer", "poll_ms", o.poll_interval, errors);
  ReadInt(*t, "indexer", "batch_blocks", o.batch_blocks, errors);
  if (const toml::node* n = t->get("from_block")) {
    std::optional<int64_t> from = IntegerOf(*n);
    if (!from || *from < 0) {
      errors.push_back({"indexer.from_block", "must be a block number >= 0"});
    } else {
      o.from_block = static_cast<uint64_t>(*from);
    }
  }
}

// Reads the integer variable `name` into `out` if it is set; InvalidArgument naming it if it is
// not an integer.
Status ReadEnvInt(const Environment& env, const char* name, int64_t& out) {
  auto it = env.find(name);
  if (it == env.end()) return OkStatus();
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError("invalid environment", {{name, "must be an integer"}});
  }
  return OkStatus();
}

// ADSERVER_INDEXER_RPC turns the indexer on; the others refine it.
Status ApplyIndexerEnvironment(const Environment& env, Config& c) {
  if (auto it = env.find("ADSERVER_INDEXER_RPC"); it != env.end()) {
    if (!c.indexer) c.indexer.emplace();
    c.indexer->rpc_url = it->second;
  }
  for (const char* name : {"ADSERVER_INDEXER_CHAIN_ID", "ADSERVER_INDEXER_CONFIRMATIONS"}) {
    if (!c.indexer && env.contains(name)) {
      return InvalidArgumentError("invalid environment",
                                  {{name, "needs ADSERVER_INDEXER_RPC or an [indexer] section"}});
    }
  }
  if (!c.indexer) return OkStatus();
  ADS_RETURN_IF_ERROR(ReadEnvInt(env, "ADSERVER_INDEXER_CHAIN_ID", c.indexer->chain_id));
  int64_t confirmations = c.indexer->confirmations;
  ADS_RETURN_IF_ERROR(ReadEnvInt(env, "ADSERVER_INDEXER_CONFIRMATIONS", confirmations));
  // Out of int range: kept out of Validate's range too.
  c.indexer->confirmations = static_cast<int>(std::clamp<int64_t>(confirmations, -1, INT32_MAX));
  return OkStatus();
}

void ApplyEventsFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  const toml::table* t = Section(root, "events", errors);
  if (t == nullptr) return;
  CheckKnownKeys(*t, "events",
                 {"keys", "keys_file", "click_ttl_seconds", "flush_interval_ms", "max_click_batch",
                  "max_pending_clicks", "max_rollup_keys_per_thread", "raw_retention_days",
                  "minute_rollup_retention_hours", "hour_rollup_retention_days", "synchronous_full",
                  "exposure_map_bytes"},
                 errors);
  events::EventsOptions& e = c.events;
  ReadString(*t, "events", "keys", e.keys, errors);
  ReadInt(*t, "events", "click_ttl_seconds", e.click_ttl_seconds, errors);
  ReadMillis(*t, "events", "flush_interval_ms", e.flush_interval, errors);
  ReadInt(*t, "events", "max_click_batch", e.max_click_batch, errors);
  ReadInt(*t, "events", "max_pending_clicks", e.max_pending_clicks, errors);
  ReadInt(*t, "events", "max_rollup_keys_per_thread", e.max_rollup_keys_per_thread, errors);
  ReadInt(*t, "events", "raw_retention_days", e.raw_retention_days, errors);
  ReadInt(*t, "events", "minute_rollup_retention_hours", e.minute_rollup_retention_hours, errors);
  ReadInt(*t, "events", "hour_rollup_retention_days", e.hour_rollup_retention_days, errors);
  ReadInt(*t, "events", "exposure_map_bytes", e.exposure_map_bytes, errors);
  if (const toml::node* n = t->get("synchronous_full")) {
    if (const toml::value<bool>* v = n->as_boolean()) {
      e.synchronous_full = v->get();
    } else {
      errors.push_back({"events.synchronous_full", "must be true or false"});
    }
  }
  std::string keys_file;
  ReadString(*t, "events", "keys_file", keys_file, errors);
  if (!keys_file.empty()) {
    Status st = ReadKeysFile(keys_file, e.keys);
    if (!st.ok()) errors.push_back({"events.keys_file", st.message()});
  }
}

// [http]
void ApplyHttpFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* h = Section(root, "http", errors)) {
    CheckKnownKeys(
        *h, "http",
        {"listen", "io_threads", "worker_threads", "max_connections", "header_timeout_ms",
         "body_timeout_ms", "idle_timeout_ms", "max_requests_per_connection", "max_header_bytes",
         "drain_timeout_ms", "public_url", "trusted_proxies", "shed_after_us", "max_worker_queue",
         "max_connections_per_ip", "access_log_one_in", "spool_dir"},
        errors);
    ReadStrings(*h, "http", "trusted_proxies", c.traffic.trusted_proxies, errors);
    ReadString(*h, "http", "public_url", c.serve.public_url, errors);
    ReadString(*h, "http", "listen", c.http.listen, errors);
    ReadInt(*h, "http", "io_threads", c.http.io_threads, errors);
    ReadInt(*h, "http", "worker_threads", c.http.worker_threads, errors);
    ReadInt(*h, "http", "max_connections", c.http.max_connections, errors);
    ReadMillis(*h, "http", "header_timeout_ms", c.http.header_timeout, errors);
    ReadMillis(*h, "http", "body_timeout_ms", c.http.body_timeout, errors);
    ReadMillis(*h, "http", "idle_timeout_ms", c.http.idle_timeout, errors);
    ReadInt(*h, "http", "max_requests_per_connection", c.http.max_requests_per_connection, errors);
    ReadInt(*h, "http", "max_header_bytes", c.http.max_header_bytes, errors);
    ReadMillis(*h, "http", "drain_timeout_ms", c.http.drain_timeout, errors);
    ReadMicros(*h, "http", "shed_after_us", c.http.shed_after, errors);
    ReadInt(*h, "http", "max_worker_queue", c.http.max_worker_queue, errors);
    ReadInt(*h, "http", "max_connections_per_ip", c.http.max_connections_per_ip, errors);
    ReadInt(*h, "http", "access_log_one_in", c.http.access_log_one_in, errors);
    ReadString(*h, "http", "spool_dir", c.http.spool_dir, errors);
  }
}

// [cluster]
void ApplyClusterFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* k = Section(root, "cluster", errors)) {
    CheckKnownKeys(*k, "cluster",
                   {"database_url", "redis_url", "node_id", "redis_key_prefix", "lease_slice_share",
                    "lease_refill_ms", "caps_sync_ms", "change_poll_ms", "max_buffered_clicks",
                    "activity_log_retention_hours", "dead_node_seconds"},
                   errors);
    ReadString(*k, "cluster", "database_url", c.cluster.database_url, errors);
    ReadString(*k, "cluster", "redis_url", c.cluster.redis_url, errors);
    ReadString(*k, "cluster", "node_id", c.cluster.node_id, errors);
    ReadString(*k, "cluster", "redis_key_prefix", c.cluster.redis_key_prefix, errors);
    ReadDouble(*k, "cluster", "lease_slice_share", c.cluster.lease_slice_share, errors);
    ReadMillis(*k, "cluster", "lease_refill_ms", c.cluster.lease_refill_interval, errors);
    ReadMillis(*k, "cluster", "caps_sync_ms", c.cluster.caps_sync_interval, errors);
    ReadMillis(*k, "cluster", "change_poll_ms", c.cluster.change_poll_interval, errors);
    ReadInt(*k, "cluster", "max_buffered_clicks", c.cluster.max_buffered_clicks, errors);
    ReadInt(*k, "cluster", "dead_node_seconds", c.cluster.dead_node_seconds, errors);
    ReadInt(*k, "cluster", "activity_log_retention_hours", c.cluster.activity_log_retention_hours,
            errors);
  }
}

// [metrics]
void ApplyMetricsFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* m = Section(root, "metrics", errors)) {
    CheckKnownKeys(*m, "metrics", {"listen", "campaign_spend"}, errors);
    ReadString(*m, "metrics", "listen", c.metrics.listen, errors);
    ReadBool(*m, "metrics", "campaign_spend", c.metrics.campaign_spend, errors);
  }
}

// [serve]
void ApplyServeFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* s = Section(root, "serve", errors)) {
    CheckKnownKeys(*s, "serve",
                   {"max_ad_unit_id_bytes", "max_local_id_bytes", "rng_seed", "cors_max_age_seconds"},
                   errors);
    ReadInt(*s, "serve", "max_ad_unit_id_bytes", c.serve.max_ad_unit_id_bytes, errors);
    ReadInt(*s, "serve", "max_local_id_bytes", c.serve.max_local_id_bytes, errors);
    ReadInt(*s, "serve", "rng_seed", c.serve.rng_seed, errors);
    ReadInt(*s, "serve", "cors_max_age_seconds", c.serve.cors_max_age_seconds, errors);
  }
}

// [snapshots]
void ApplySnapshotsFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* s = Section(root, "snapshots", errors)) {
    CheckKnownKeys(*s, "snapshots",
                   {"poll_interval_ms", "default_ctr", "default_cvr", "wallet_table",
                    "wallet_table_in_memory"},
                   errors);
    ReadMillis(*s, "snapshots", "poll_interval_ms", c.snapshots.poll_interval, errors);
    for (auto [key, out] :
         {std::pair{"wallet_table", &c.snapshots.wallet_table},
          std::pair{"wallet_table_in_memory", &c.snapshots.wallet_table_in_memory}}) {
      if (const toml::node* n = s->get(key)) {
        // as_boolean, not value<bool>: the latter also takes integers.
        if (const toml::value<bool>* v = n->as_boolean()) {
          *out = v->get();
        } else {
          errors.push_back({std::string("snapshots.") + key, "must be true or false"});
        }
      }
    }
    ReadDouble(*s, "snapshots", "default_ctr", c.snapshots.catalog.default_ctr, errors);
    ReadDouble(*s, "snapshots", "default_cvr", c.snapshots.catalog.default_cvr, errors);
  }
}

// [decision]
void ApplyDecisionFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* d = Section(root, "decision", errors)) {
    CheckKnownKeys(*d, "decision",
                   {"explore", "ctr_prior_weight", "cvr_prior_weight", "half_life_impressions",
                    "conversion_delay_days", "peer_priors", "half_life_events", "change_threshold",
                    "placement_prior_events", "placement_pairs", "placement_ad_units"},
                   errors);
    for (auto [key, out] : {std::pair{"explore", &c.decision.explore},
                            std::pair{"peer_priors", &c.decision.peer_priors},
                            std::pair{"placement_ad_units", &c.decision.placement_ad_units}}) {
      const toml::node* n = d->get(key);
      if (n == nullptr) continue;
      if (const toml::value<bool>* v = n->as_boolean()) {
        *out = v->get();
      } else {
        errors.push_back({std::string("decision.") + key, "must be true or false"});
      }
    }
    ReadDouble(*d, "decision", "half_life_impressions", c.decision.half_life_impressions, errors);
    ReadDouble(*d, "decision", "half_life_events", c.decision.half_life_events, errors);
    ReadDouble(*d, "decision", "change_threshold", c.decision.change_threshold, errors);
    ReadDouble(*d, "decision", "placement_prior_events", c.decision.placement_prior_events, errors);
    ReadInt(*d, "decision", "placement_pairs", c.live.placement_pairs, errors);
    ReadDouble(*d, "decision", "conversion_delay_days", c.decision.conversion_delay_days, errors);
    ReadDouble(*d, "decision", "ctr_prior_weight", c.decision.ctr_prior_weight, errors);
    ReadDouble(*d, "decision", "cvr_prior_weight", c.decision.cvr_prior_weight, errors);
  }
}

// [network]
void ApplyNetworkFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* n = Section(root, "network", errors)) {
    CheckKnownKeys(*n, "network", {"currency", "chains"}, errors);
    ReadString(*n, "network", "currency", c.admin.currency, errors);
    ReadChains(*n, c.admin.chains, errors);
  }
}

// [admin]
void ApplyAdminFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  if (const toml::table* a = Section(root, "admin", errors)) {
    CheckKnownKeys(*a, "admin",
                   {"token", "max_body_bytes", "max_import_body_bytes", "rate_limit_per_second",
                    "rate_limit_burst"},
                   errors);
    ReadString(*a, "admin", "token", c.admin.token, errors);
    ReadInt(*a, "admin", "max_body_bytes", c.admin.max_body_bytes, errors);
    ReadInt(*a, "admin", "max_import_body_bytes", c.admin.max_import_body_bytes, errors);
    ReadInt(*a, "admin", "rate_limit_burst", c.admin.rate_limit_burst, errors);
    ReadDouble(*a, "admin", "rate_limit_per_second", c.admin.rate_limit_per_second, errors);
  }
}

void ApplyFile(const toml::table& root, Config& c, std::vector<FieldError>& errors) {
  CheckKnownKeys(
      root, "",
      {"data_dir", "log_level", "log_format", "http", "serve", "snapshots", "decision", "admin",
       "identity", "indexer", "events", "traffic", "metrics", "cluster", "network"},
      errors);
  ReadString(root, "", "data_dir", c.data_dir, errors);
  ReadString(root, "", "log_level", c.log_level, errors);
  ReadString(root, "", "log_format", c.log_format, errors);
  ApplyHttpFile(root, c, errors);
  ApplyClusterFile(root, c, errors);
  ApplyMetricsFile(root, c, errors);
  ApplyServeFile(root, c, errors);
  ApplySnapshotsFile(root, c, errors);
  ApplyDecisionFile(root, c, errors);
  ApplyNetworkFile(root, c, errors);
  ApplyAdminFile(root, c, errors);
  ApplyIdentityFile(root, c, errors);
  ApplyIndexerFile(root, c, errors);
  ApplyEventsFile(root, c, errors);
  ApplyTrafficFile(root, c, errors);
}

Status ApplyEnvironment(const Environment& env, Config& c) {
  ADS_RETURN_IF_ERROR(ApplyIdentityEnvironment(env, c));
  ADS_RETURN_IF_ERROR(ApplyIndexerEnvironment(env, c));
  auto get = [&](const char* name) -> const std::string* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  };
  if (auto* v = get("ADSERVER_DATA")) c.data_dir = *v;
  if (auto* v = get("ADSERVER_PUBLIC_URL")) c.serve.public_url = *v;
  if (auto* v = get("ADSERVER_EVENTS_KEYS_FILE"))
    ADS_RETURN_IF_ERROR(ReadKeysFile(*v, c.events.keys));
  if (auto* v = get("ADSERVER_EVENTS_KEYS")) c.events.keys = *v;
  if (auto* v = get("ADSERVER_LISTEN")) c.http.listen = *v;
  if (auto* v = get("ADSERVER_LOG_LEVEL")) c.log_level = *v;
  if (auto* v = get("ADSERVER_LOG_FORMAT")) c.log_format = *v;
  if (auto* v = get("ADSERVER_METRICS_LISTEN")) c.metrics.listen = *v;
  if (auto* v = get("ADSERVER_DATABASE_URL")) c.cluster.database_url = *v;
  if (auto* v = get("ADSERVER_REDIS_URL")) c.cluster.redis_url = *v;
  if (auto* v = get("ADSERVER_NODE_ID")) c.cluster.node_id = *v;
  if (auto* v = get("ADSERVER_REDIS_KEY_PREFIX")) c.cluster.redis_key_prefix = *v;
  if (auto* v = get("ADSERVER_ADMIN_TOKEN_FILE")) {
    std::ifstream in(*v);
    if (!in) return UnavailableError("cannot read ADSERVER_ADMIN_TOKEN_FILE");
    std::string token;
    std::getline(in, token);
    c.admin.token = token;
  }
  if (auto* v = get("ADSERVER_ADMIN_TOKEN")) c.admin.token = *v;
  return OkStatus();
}

}  // namespace

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (!kv.starts_with("ADSERVER_")) continue;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

CommandDefaults CommandDefaultsFrom(const Environment& env) {
  CommandDefaults d;
  auto set = [&](const char* name, std::string& out) {
    auto it = env.find(name);
    if (it != env.end() && !it->second.empty()) out = it->second;
  };
  set("ADSERVER_DATA", d.data_dir);
  set("ADSERVER_DATABASE_URL", d.cluster.database_url);
  set("ADSERVER_REDIS_URL", d.cluster.redis_url);
  set("ADSERVER_REDIS_KEY_PREFIX", d.cluster.redis_key_prefix);
  return d;
}

Result<Config> LoadConfig(const std::optional<std::string>& path, const Environment& env) {
  Config c;
  if (path) {
    std::ifstream in(*path);
    if (!in) return UnavailableError("cannot read config file " + *path);
    std::stringstream text;
    text << in.rdbuf();
    toml::table parsed;
    try {
      parsed = toml::parse(text.str(), *path);
    } catch (const toml::parse_error& e) {
      std::ostringstream msg;
      msg << e.description() << " at line " << e.source().begin.line;
      return InvalidArgumentError("config file " + *path + ": " + msg.str());
    }
    std::vector<FieldError> errors;
    ApplyFile(parsed, c, errors);
    if (!errors.empty()) return InvalidArgumentError("invalid config file " + *path, errors);
  }
  ADS_RETURN_IF_ERROR(ApplyEnvironment(env, c));
  return c;
}

namespace {
void ValidateEvents(const Config& c, std::vector<FieldError>& errors) {
  const std::string& url = c.serve.public_url;
  if (!url.empty()) {
    bool http = url.starts_with("http://") || url.starts_with("https://");
    size_t host = url.find("://") + 3;
    bool clean = url.find_first_of(" \t\r\n\"\\?#") == std::string::npos;
    if (!http || host >= url.size() || url[host] == '/' || !clean) {
      errors.push_back({"http.public_url",
                        "must be an absolute http(s) URL without query or fragment, e.g. "
                        "https://ads.example.com"});
    }
  }
  const events::EventsOptions& e = c.events;
  if (e.click_ttl_seconds < 1) errors.push_back({"events.click_ttl_seconds", "must be >= 1"});
  if (e.flush_interval.count() < 10 || e.flush_interval.count() > 60000) {
    errors.push_back({"events.flush_interval_ms", "must be 10 to 60000"});
  }
  if (e.max_click_batch < 1) errors.push_back({"events.max_click_batch", "must be >= 1"});
  if (e.max_pending_clicks < 1) errors.push_back({"events.max_pending_clicks", "must be >= 1"});
  if (e.max_rollup_keys_per_thread < 1) {
    errors.push_back({"events.max_rollup_keys_per_thread", "must be >= 1"});
  }
  if (e.exposure_map_bytes < (size_t{1} << 20)) {
    errors.push_back({"events.exposure_map_bytes", "must be at least 1048576 (1 MiB)"});
  }
  if (e.raw_retention_days < 1) errors.push_back({"events.raw_retention_days", "must be >= 1"});
  if (e.minute_rollup_retention_hours < 1) {
    errors.push_back({"events.minute_rollup_retention_hours", "must be >= 1"});
  }
  if (e.hour_rollup_retention_days < 1) {
    errors.push_back({"events.hour_rollup_retention_days", "must be >= 1"});
  }
  if (!e.keys.empty()) {
    Result<identity::KeyRing> ring = identity::KeyRing::Parse(e.keys, "events.keys");
    if (!ring.ok())
      errors.insert(errors.end(), ring.status().details().begin(), ring.status().details().end());
  }
}

void ValidateTraffic(const events::TrafficOptions& o, std::vector<FieldError>& errors) {
  for (const std::string& proxy : o.trusted_proxies) {
    if (!ParseNetwork(proxy)) {
      errors.push_back({"http.trusted_proxies",
                        "\"" + proxy + "\" is not an IP address or CIDR network"});
    }
  }
  if (o.blocklist_check_seconds < 1 || o.blocklist_check_seconds > 3600) {
    errors.push_back({"traffic.blocklist_check_seconds", "must be 1 to 3600"});
  }
  if (o.min_click_delay_ms < 0) errors.push_back({"traffic.min_click_delay_ms", "must be >= 0"});
  for (auto [name, windows] : {std::pair{"traffic.click_limits", &o.click_limits},
                               std::pair{"traffic.event_limits", &o.event_limits}}) {
    if (windows->size() > events::TrafficLimiter::kMaxWindows) {
      errors.push_back({name, "at most 4 windows"});
    }
    for (const events::RateWindow& w : *windows) {
      if (w.seconds < 1 || w.max < 0) {
        errors.push_back({name, "each window needs seconds >= 1 and max >= 0 (0 = off)"});
        break;
      }
    }
  }
  if (o.rate_table_entries < 2 || o.rate_table_entries > (size_t{1} << 26)) {
    errors.push_back({"traffic.rate_table_entries", "must be 2 to 67108864"});
  }
  if (o.wallet_serves_per_minute < 0) {
    errors.push_back({"traffic.wallet_serves_per_minute", "must be >= 0 (0 = off)"});
  }
  if (o.wallet_max_publishers < 0 || o.wallet_max_publishers > 63) {
    errors.push_back({"traffic.wallet_max_publishers", "must be 0 to 63 (0 = off)"});
  }
  if (o.wallet_publishers_seconds < 60 || o.wallet_publishers_seconds > 86400 * 7) {
    errors.push_back({"traffic.wallet_publishers_seconds", "must be 60 to 604800"});
  }
  if (o.wallet_table_entries < 2 || o.wallet_table_entries > (size_t{1} << 26)) {
    errors.push_back({"traffic.wallet_table_entries", "must be 2 to 67108864"});
  }
}

void ValidateIdentity(const identity::IdentityOptions& o, std::vector<FieldError>& errors) {
  bool name_ok = !o.cookie_name.empty() && o.cookie_name.size() <= 64;
  for (char ch : o.cookie_name) {
    name_ok = name_ok && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                          (ch >= '0' && ch <= '9') || ch == '_' || ch == '-');
  }
  if (!name_ok) {
    errors.push_back({"identity.cookie_name", "must be 1 to 64 of [A-Za-z0-9_-]"});
  }
  if (o.cookie_max_age_seconds < 1 || o.cookie_max_age_seconds > identity::kThirteenMonthsSeconds) {
    errors.push_back({"identity.cookie_max_age_seconds", "must be 1 to 34128000 (13 months)"});
  }
  if (o.retention_seconds < 1) errors.push_back({"identity.retention_seconds", "must be >= 1"});
  if (o.cookie_refresh_seconds < 0 || o.cookie_refresh_seconds > o.cookie_max_age_seconds) {
    errors.push_back(
        {"identity.cookie_refresh_seconds", "must be 0 to identity.cookie_max_age_seconds"});
  }
  if (o.max_wallets < 1 || o.max_wallets > identity::kMaxWalletsPerIdentity) {
    errors.push_back({"identity.max_wallets", "must be 1 to 50"});
  }
  if (o.flush_interval.count() < 10 || o.flush_interval.count() > 60000) {
    errors.push_back({"identity.flush_interval_ms", "must be 10 to 60000"});
  }
  if (o.sweep_interval.count() < 100) {
    errors.push_back({"identity.sweep_interval_ms", "must be >= 100"});
  }
}

void ValidateIndexer(const std::optional<ingest::IndexerOptions>& indexer,
                     std::vector<FieldError>& errors) {
  if (!indexer) return;
  const ingest::IndexerOptions& o = *indexer;
  if (o.rpc_url.empty()) {
    errors.push_back({"indexer.rpc", "required to run the indexer (or set ADSERVER_INDEXER_RPC)"});
  } else if (!o.rpc_url.starts_with("http://") || o.rpc_url.size() == 7) {
    errors.push_back({"indexer.rpc", "must be http://host:port[/path]"});
  }
  if (o.chain_id < 1 || o.chain_id > int64_t{UINT32_MAX}) {
    errors.push_back({"indexer.chain_id", "must be 1 to 4294967295"});
  }
  if (o.confirmations < 0) {
    errors.push_back({"indexer.confirmations", "must be >= 0 (0 = apply at once, undo on reorg)"});
  }
  if (o.poll_interval.count() < 10 || o.poll_interval.count() > 60000) {
    errors.push_back({"indexer.poll_ms", "must be 10 to 60000"});
  }
  if (o.batch_blocks < 1 || o.batch_blocks > 1000) {
    errors.push_back({"indexer.batch_blocks", "must be 1 to 1000"});
  }
}

// [cluster]: both engines or neither, and the sync intervals.
void ValidateCluster(const Config& c, std::vector<FieldError>& errors) {
  // Cluster mode needs both engines; one alone is a mistake worth refusing to start on.
  if (!c.cluster.database_url.empty() && c.cluster.redis_url.empty()) {
    errors.push_back({"cluster.redis_url",
                      "required with cluster.database_url (set ADSERVER_REDIS_URL or "
                      "--redis-url, or neither for the embedded store)"});
  }
  if (c.cluster.database_url.empty() && !c.cluster.redis_url.empty()) {
    errors.push_back({"cluster.database_url",
                      "required with cluster.redis_url (set ADSERVER_DATABASE_URL or "
                      "--database-url, or neither for the embedded store)"});
  }
  if (!c.cluster.database_url.empty() && !c.cluster.database_url.starts_with("postgresql://") &&
      !c.cluster.database_url.starts_with("postgres://") &&
      c.cluster.database_url.find('=') == std::string::npos) {
    errors.push_back({"cluster.database_url",
                      "must be a postgresql:// URL or a libpq key=value string"});
  }
  if (c.cluster.node_id == store::kCliNodeId) {
    errors.push_back({"cluster.node_id", std::string("\"") + store::kCliNodeId +
                                             "\" is the CLI's counters row; name the node "
                                             "otherwise"});
  }
  if (!c.cluster.redis_url.empty() && !c.cluster.redis_url.starts_with("redis://")) {
    errors.push_back({"cluster.redis_url", "must be a redis:// URL"});
  }
  if (!(c.cluster.lease_slice_share > 0 && c.cluster.lease_slice_share <= 1)) {
    errors.push_back({"cluster.lease_slice_share", "must be in (0, 1]"});
  }
  for (auto [field, value] :
       {std::pair{"cluster.lease_refill_ms", c.cluster.lease_refill_interval},
        std::pair{"cluster.caps_sync_ms", c.cluster.caps_sync_interval},
        std::pair{"cluster.change_poll_ms", c.cluster.change_poll_interval}}) {
    if (value.count() < 10 || value.count() > 60000) {
      errors.push_back({field, "must be between 10 and 60000"});
    }
  }
  if (c.cluster.dead_node_seconds < 2 || c.cluster.dead_node_seconds > 86400) {
    errors.push_back({"cluster.dead_node_seconds", "must be 2 to 86400"});
  }
  if (c.cluster.activity_log_retention_hours < 1) {
    errors.push_back({"cluster.activity_log_retention_hours", "must be at least 1"});
  }
  if (c.cluster.max_buffered_clicks < 0) {
    errors.push_back({"cluster.max_buffered_clicks", "must be 0 (no buffering) or more"});
  }
}

// [http].
void ValidateHttp(const Config& c, std::vector<FieldError>& errors) {
  if (c.http.access_log_one_in < 0) {
    errors.push_back({"http.access_log_one_in", "must be 0 (off) or more (1 = every request)"});
  }
  if (c.http.listen.find(':') == std::string::npos) {
    errors.push_back({"http.listen", "must be HOST:PORT"});
  }
  if (c.http.io_threads < 0 || c.http.io_threads > 256) {
    errors.push_back({"http.io_threads", "must be 0 (one per usable CPU) to 256"});
  }
  if (c.http.worker_threads < 1 || c.http.worker_threads > 256) {
    errors.push_back({"http.worker_threads", "must be 1 to 256"});
  }
  if (c.http.max_connections < 1) errors.push_back({"http.max_connections", "must be >= 1"});
  if (c.http.shed_after.count() < 0 || c.http.shed_after > std::chrono::seconds(10)) {
    errors.push_back({"http.shed_after_us", "must be 0 (no load shedding) to 10000000"});
  }
  if (c.http.max_worker_queue < 1) errors.push_back({"http.max_worker_queue", "must be >= 1"});
  if (c.http.max_connections_per_ip < 0) {
    errors.push_back({"http.max_connections_per_ip", "must be 0 (no limit) or more"});
  }
  if (c.http.header_timeout.count() <= 0) errors.push_back({"http.header_timeout_ms", "must be > 0"});
  if (c.http.body_timeout.count() <= 0) errors.push_back({"http.body_timeout_ms", "must be > 0"});
  if (c.http.idle_timeout.count() <= 0) errors.push_back({"http.idle_timeout_ms", "must be > 0"});
  if (c.http.max_header_bytes < 1024) errors.push_back({"http.max_header_bytes", "must be >= 1024"});
}

// [snapshots] and [decision]: the polling interval and what the engine learns with.
void ValidateLearning(const Config& c, std::vector<FieldError>& errors) {
  if (c.snapshots.poll_interval.count() <= 0 || c.snapshots.poll_interval.count() > 1000) {
    errors.push_back({"snapshots.poll_interval_ms", "must be 1 to 1000 (changes must show within 1 s)"});
  }
  for (auto [name, rate] : {std::pair{"snapshots.default_ctr", c.snapshots.catalog.default_ctr},
                            std::pair{"snapshots.default_cvr", c.snapshots.catalog.default_cvr}}) {
    if (!(rate > 0 && rate <= 1)) errors.push_back({name, "must be in (0, 1]"});
  }
  if (!(c.decision.half_life_impressions == 0 ||
        (c.decision.half_life_impressions >= 10 && c.decision.half_life_impressions <= 1e9))) {
    errors.push_back(
        {"decision.half_life_impressions", "must be 0 (never forget) or 10 to 1000000000"});
  }
  if (!(c.decision.half_life_events >= 0 && c.decision.half_life_events <= 1e9)) {
    errors.push_back({"decision.half_life_events", "must be 0 (impressions only) to 1000000000"});
  }
  if (!(c.decision.change_threshold == 0 ||
        (c.decision.change_threshold >= 3 && c.decision.change_threshold <= 1e6))) {
    errors.push_back({"decision.change_threshold", "must be 0 (off) or 3 to 1000000"});
  }
  if (!(c.decision.placement_prior_events == 0 ||
        (c.decision.placement_prior_events >= 0.5 && c.decision.placement_prior_events <= 1e6))) {
    errors.push_back({"decision.placement_prior_events", "must be 0 (off) or 0.5 to 1000000"});
  }
  if (!(c.live.placement_pairs >= 16 && c.live.placement_pairs <= (size_t{1} << 24))) {
    errors.push_back({"decision.placement_pairs", "must be 16 to 16777216"});
  }
  if (!(c.decision.conversion_delay_days >= 0 && c.decision.conversion_delay_days <= 365)) {
    errors.push_back({"decision.conversion_delay_days", "must be 0 (fitted) to 365"});
  }
  for (auto [name, weight] :
       {std::pair{"decision.ctr_prior_weight", c.decision.ctr_prior_weight},
        std::pair{"decision.cvr_prior_weight", c.decision.cvr_prior_weight}}) {
    if (!(weight == 0 || (weight >= 1 && weight <= 1e9))) {
      errors.push_back({name, "must be 0 (the rule's default) or 1 to 1000000000"});
    }
  }
}

// [admin] and [network]'s currency.
void ValidateAdmin(const Config& c, std::vector<FieldError>& errors) {
  if (c.admin.currency.size() != 3 ||
      !std::all_of(c.admin.currency.begin(), c.admin.currency.end(),
                   [](char ch) { return ch >= 'A' && ch <= 'Z'; })) {
    errors.push_back(
        {"network.currency", "must be an ISO 4217 code: three capital letters, e.g. USD"});
  }
  if (!c.admin.token.empty() && c.admin.token.size() < 16) {
    errors.push_back({"admin.token", "must be at least 16 characters"});
  }
  if (!(c.admin.rate_limit_per_second >= 0 && c.admin.rate_limit_per_second <= 1e6)) {
    errors.push_back({"admin.rate_limit_per_second", "must be 0 (unlimited) to 1000000"});
  }
  if (c.admin.rate_limit_burst < 1 || c.admin.rate_limit_burst > 1'000'000) {
    errors.push_back({"admin.rate_limit_burst", "must be 1 to 1000000"});
  }
}

}  // namespace

Status Validate(const Config& c) {
  std::vector<FieldError> errors;
  if (c.data_dir.empty()) errors.push_back({"data_dir", "must not be empty"});
  static constexpr std::string_view kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  bool level_ok = false;
  for (auto l : kLevels) level_ok = level_ok || c.log_level == l;
  if (!level_ok)
    errors.push_back({"log_level", "must be one of trace, debug, info, warn, error, off"});
  if (c.log_format != "json" && c.log_format != "text") {
    errors.push_back({"log_format", "must be json or text"});
  }
  if (!c.metrics.listen.empty() && c.metrics.listen.find(':') == std::string::npos) {
    errors.push_back({"metrics.listen", "must be HOST:PORT"});
  }
  ValidateCluster(c, errors);
  ValidateHttp(c, errors);
  ValidateLearning(c, errors);
  ValidateAdmin(c, errors);
  ValidateIdentity(c.identity, errors);
  // Every localId the server issues must be accepted back.
  if (c.serve.max_local_id_bytes < identity::MaxTokenChars(c.identity.max_wallets)) {
    errors.push_back({"serve.max_local_id_bytes",
                      "must be at least " +
                          std::to_string(identity::MaxTokenChars(c.identity.max_wallets)) +
                          " (the longest localId issued for identity.max_wallets wallets)"});
  }
  ValidateIndexer(c.indexer, errors);
  ValidateEvents(c, errors);
  ValidateTraffic(c.traffic, errors);
  if (!errors.empty()) return InvalidArgumentError("invalid configuration", errors);
  return OkStatus();
}

}  // namespace adserver::config
