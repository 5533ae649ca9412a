#include "app/activity_commands.h"

#include <unistd.h>

#include <cstdio>

#include "app/cli_attribution.h"
#include "app/data_dir.h"
#include "common/clock.h"
#include "common/json_writer.h"

namespace adserver::app {
namespace {

void PrintProgress(uint64_t rows, uint64_t read, uint64_t total, double seconds) {
  double rate = seconds > 0 ? double(rows) / seconds : 0;
  std::fprintf(stderr, "\r%llu rows, %.0f rows/s", static_cast<unsigned long long>(rows), rate);
  if (total > 0 && read > 0 && read <= total) {
    double eta = seconds * (double(total) / double(read) - 1);
    std::fprintf(stderr, ", %.0f%%, ETA %.0f s", 100.0 * double(read) / double(total), eta);
  }
  std::fprintf(stderr, "   ");
  std::fflush(stderr);
}

std::string SummaryJson(const std::string& file, const ingest::BulkImportSummary& s,
                        uint64_t conversions) {
  std::string out = "{\"file\":";
  AppendJsonString(out, file);
  out += ",\"shape\":";
  AppendJsonString(out, s.shape);
  out += ",\"rows\":" + std::to_string(s.rows) +
         ",\"interactions\":" + std::to_string(s.interactions) +
         ",\"unknownContract\":" + std::to_string(s.unknown_contract) +
         ",\"failedTransactions\":" + std::to_string(s.skipped_failed) +
         ",\"rejected\":" + std::to_string(s.rejected) +
         ",\"transactions\":" + std::to_string(s.transactions) +
         ",\"conversions\":" + std::to_string(conversions) +
         ",\"alreadyImported\":" + (s.already_imported ? "true" : "false") +
         ",\"seconds\":" + std::to_string(s.seconds) + ",\"rowsPerSecond\":" +
         std::to_string(s.seconds > 0 ? static_cast<uint64_t>(double(s.rows) / s.seconds) : 0) +
         ",\"errors\":[";
  for (size_t i = 0; i < s.errors.size(); ++i) {
    if (i) out += ',';
    out += "{\"line\":" + std::to_string(s.errors[i].line) + ",\"message\":";
    AppendJsonString(out, s.errors[i].message);
    out += '}';
  }
  return out + "]}";
}

}  // namespace

Status RunActivityImport(const std::string& data_dir, const std::vector<std::string>& files,
                         ingest::BulkImportOptions options, std::ostream& out) {
  return RunActivityImport(data_dir, store::ClusterOptions{}, files, std::move(options), out);
}

Status RunActivityImport(const std::string& data_dir, const store::ClusterOptions& cluster,
                         const std::vector<std::string>& files, ingest::BulkImportOptions options,
                         std::ostream& out) {
  store::Stores stores;
  std::unique_ptr<cluster::CliAttribution> attribution;
  if (cluster.enabled()) {
    ADS_RETURN_IF_ERROR(CreateDataDirectory(data_dir));  // the import ledger's directory
    ADS_ASSIGN_OR_RETURN(ClusterStore opened, OpenClusterStore(cluster.database_url));
    stores = opened.stores();
    // Attributed against the cluster's exposures and billed by this process (cli_attribution.h).
    ADS_ASSIGN_OR_RETURN(attribution, OpenCliAttribution(cluster, stores));
    options.transactions = attribution.get();
  } else {
    ADS_ASSIGN_OR_RETURN(stores, OpenStore(data_dir));
    // Rows naming a transaction are attributed as onchain conversions, as the admin API's
    // imports are (issue 15).
    ADS_ASSIGN_OR_RETURN(attribution, OpenCliAttribution(data_dir, stores));
    options.transactions = attribution.get();
  }
  if (options.ledger_path.empty()) {
    options.ledger_path = ImportLedgerPath(data_dir);
  }
  for (const std::string& file : files) {
    auto start = std::chrono::steady_clock::now();
    if (isatty(STDERR_FILENO)) {
      options.progress = [start](uint64_t rows, uint64_t read, uint64_t total) {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        PrintProgress(rows, read, total, s);
      };
    }
    uint64_t conversions_before = attribution ? attribution->recorded() : 0;
    Result<ingest::BulkImportSummary> summary = ingest::BulkImportFile(
        file, *stores.inventory, *stores.activity, options, SystemClock::Get());
    if (options.progress) std::fprintf(stderr, "\n");
    if (!summary.ok())
      return Status(summary.status().code(), file + ": " + summary.status().message());
    // Billing written before the summary line reports the file's conversions.
    if (attribution) ADS_RETURN_IF_ERROR(attribution->Finish());
    out << SummaryJson(file, *summary,
                       attribution ? attribution->recorded() - conversions_before : 0)
        << std::endl;
  }
  return OkStatus();
}

}  // namespace adserver::app
