#pragma once

// Opens the CLI's conversion attribution (cluster/cli_attribution.h) over the concrete stores:
// the data directory's events database and exposure index, or the cluster's PostgreSQL and
// Redis.

#include <memory>
#include <string>

#include "cluster/cli_attribution.h"
#include "common/status.h"
#include "store/cluster_options.h"
#include "store/stores.h"

namespace adserver::app {

// Embedded. Reads the inventory and the counters of `stores` (the data directory's).
Result<std::unique_ptr<cluster::CliAttribution>> OpenCliAttribution(const std::string& data_dir,
                                                                    const store::Stores& stores);
// Cluster mode. Reads the inventory of `stores` (the cluster's); bills what it records
// (PostgresEventsStore::BillConversionsTo under store::kCliNodeId) and queues budget takes for
// Redis.
Result<std::unique_ptr<cluster::CliAttribution>> OpenCliAttribution(
    const store::ClusterOptions& cluster, const store::Stores& stores);

}  // namespace adserver::app
