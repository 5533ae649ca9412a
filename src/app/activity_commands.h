#pragma once

// `adserver activity import` (bulk files) run directly on a data directory.

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "ingest/bulk_import.h"
#include "store/cluster_options.h"

namespace adserver::app {

// Imports each file into the data directory's activity index and prints one JSON summary line
// per file to `out`. The ledger defaults to DATA_DIR/imports.ledger; progress (rows/s, ETA)
// goes to stderr when it is a terminal. Stops at the first file that cannot be read.
Status RunActivityImport(const std::string& data_dir, const std::vector<std::string>& files,
                         ingest::BulkImportOptions options, std::ostream& out);
// The same into a cluster's PostgreSQL when `cluster` is enabled (every node's replica follows);
// rows naming a transaction are not attributed as conversions there (exposures are each node's:
// import them through a node's admin API instead).
Status RunActivityImport(const std::string& data_dir, const store::ClusterOptions& cluster,
                         const std::vector<std::string>& files, ingest::BulkImportOptions options,
                         std::ostream& out);

}  // namespace adserver::app
