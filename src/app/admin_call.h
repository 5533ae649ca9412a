#pragma once

// One admin API call run in-process (the CLI's admin commands): the exact routes and code the
// HTTP admin API runs, over the stores of a data directory or of a cluster's PostgreSQL.

#include <string>

#include "common/status.h"
#include "http/message.h"
#include "store/cluster_options.h"

namespace adserver::app {

// The HTTP status and body of the call.
struct AdminCallResult {
  int status = 0;
  std::string body;
};
// Against the data directory `data_dir`.
Result<AdminCallResult> RunAdminCall(const std::string& data_dir, http::Method method,
                                     const std::string& target, const std::string& body,
                                     const std::string& content_type = "application/json");
// The same against a cluster's PostgreSQL when `cluster` is enabled (a write reaches every
// node's snapshot through the change feed); the data directory only keeps the import ledger.
Result<AdminCallResult> RunAdminCall(const std::string& data_dir,
                                     const store::ClusterOptions& cluster, http::Method method,
                                     const std::string& target, const std::string& body,
                                     const std::string& content_type = "application/json");

}  // namespace adserver::app
