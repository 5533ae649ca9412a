#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "ingest/transaction_sink.h"
#include "store/activity_store.h"
#include "store/inventory_store.h"
#include "store/records.h"

namespace adserver::ingest {

struct ImportError {
  size_t line = 0;  // 1-based line number in the input
  std::string message;
};

struct ImportSummary {
  size_t imported = 0;  // rows written
  size_t rejected = 0;  // rows skipped because they were malformed or unresolvable
  std::vector<ImportError> errors;  // at most kMaxReportedErrors, first ones
};

inline constexpr size_t kMaxReportedErrors = 100;

// Imports NDJSON activity lines: {"wallet": "0x..", "project": "<slug>" | "contract": "0x..",
// "chainId": N, "timestamp": "RFC 3339"}. Each valid line counts as one interaction; lines are
// aggregated per (wallet, project, chain) and written in one store transaction. Blank lines are
// skipped; malformed lines are reported and skipped, never abort the import. A `contract`
// resolves through the projects' contracts on that chain; unknown slugs/contracts are rejected
// rows. Returns the store's error if the write fails (then nothing was written).
// Timestamps more than kMaxFutureSkewSeconds after `clock`'s now are rejected rows. The
// two-argument form uses the system clock. `imported` counts accepted lines (interactions),
// so imported + rejected is the number of non-blank lines.
//
// Optional per line: "txHash" (0x + 64 hex digits), "logIndex" and "blockNumber" (non-negative
// integers). Lines with a txHash that `transactions` wants are handed to it after the write
// (conversion attribution; at most kMaxImportTransactions).
Result<ImportSummary> ImportActivityNdjson(std::string_view ndjson, store::InventoryStore& store,
                                           store::ActivityStore& activity, const Clock& clock,
                                           TransactionSink* transactions = nullptr);
Result<ImportSummary> ImportActivityNdjson(std::string_view ndjson, store::InventoryStore& store,
                                           store::ActivityStore& activity);

// The same over lines handed out one at a time: `next` sets `line` (without its newline) and
// returns true, false at the end, or an error that ends the import with nothing written. Used
// to import a gzip body while it is inflated (bulk_import.h, ImportActivityNdjsonBuffer).
using LineSource = std::function<Result<bool>(std::string_view& line)>;
Result<ImportSummary> ImportActivityNdjsonLines(const LineSource& next,
                                                store::InventoryStore& store,
                                                store::ActivityStore& activity, const Clock& clock,
                                                TransactionSink* transactions = nullptr);

inline constexpr int64_t kMaxFutureSkewSeconds = 86400;

// RFC 3339 timestamp ("2026-11-01T12:00:00Z", "...+02:00", fractional seconds allowed) to
// Unix seconds.
Result<int64_t> ParseRfc3339(std::string_view text);
// Unix seconds to "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatRfc3339(int64_t unix_seconds);

}  // namespace adserver::ingest
