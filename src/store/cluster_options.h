#pragma once

#include <chrono>
#include <string>

namespace adserver::store {

// Cluster mode (issue 17, [cluster]): with both URLs set a node keeps its system of record in
// PostgreSQL and shares budgets and caps through Redis; with neither it runs embedded (SQLite +
// LMDB in the data directory); one without the other is a start-up error.
// The counters row of conversions the CLI bills in cluster mode (app/cli_attribution.h): any
// number of CLI processes add to it, so no node may take this id.
inline constexpr const char* kCliNodeId = "(cli)";

struct ClusterOptions {
  // postgresql://user:password@host:port/db (or libpq's key=value form); a secret: never logged
  // (ADSERVER_DATABASE_URL, --database-url).
  std::string database_url;
  // redis://[:password@]host:port[/db] (ADSERVER_REDIS_URL, --redis-url); a secret too.
  std::string redis_url;
  // This node's name in the cluster's per-node rows (its decision counters); stable across
  // restarts of the same node. Empty = the host name and the listen port.
  std::string node_id;
  // Prefix of every Redis key this cluster uses (several clusters may share one Redis).
  std::string redis_key_prefix = "adserver:";
  // Share of a campaign's total budget one lease takes (at least one maximum price).
  double lease_slice_share = 0.005;
  // How often leases are topped up and other nodes' counters are read.
  std::chrono::milliseconds lease_refill_interval{200};
  // How often queued frequency-cap impressions go to Redis and come back cluster-wide.
  std::chrono::milliseconds caps_sync_interval{250};
  // The change-version poll behind LISTEN/NOTIFY (NOTIFY is not replayed after a reconnect).
  std::chrono::milliseconds change_poll_interval{1000};

  // Clicks kept on the node's disk (DATA_DIR/click-outbox.db, ~200 bytes each) while PostgreSQL
  // cannot take them; beyond that a click answers 503 (try again).
  int64_t max_buffered_clicks = 1'000'000;
  // How long PostgreSQL keeps the wallet activity change log the nodes' replicas follow: a node
  // down longer bootstraps its replica again. Pruned hourly by every node (idempotent).
  int64_t activity_log_retention_hours = 168;
  // A node whose counters were last saved this long ago is taken for dead (issue 37 item 3):
  // one live node at a time adds what it billed past its marks to its counters, so a node that
  // never comes back leaves no spend out of the cluster's counters.
  int64_t dead_node_seconds = 30;

  bool enabled() const { return !database_url.empty() && !redis_url.empty(); }
};

}  // namespace adserver::store
