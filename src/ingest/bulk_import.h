#pragma once

// Bulk wallet-activity import from the files users export: BigQuery crypto_ethereum
// (transactions, token_transfers, flattened logs), Dune results, cryo CSV/JSON and adserver's
// own NDJSON; CSV or JSON lines, plain or gzip.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ingest/activity_import.h"
#include "ingest/transaction_sink.h"
#include "store/activity_store.h"
#include "store/inventory_store.h"

namespace adserver::ingest {

// A column role and the columns that fill it (CSV header names or JSON keys).
//   wallet    one or more columns holding wallet addresses (each is an interaction)
//   contract  the contract interacted with (resolved through the registry)
//   project   a project slug (instead of contract)
//   chain     the chain id (else BulkImportOptions::chain_id)
//   time      the timestamp (RFC 3339, "YYYY-MM-DD HH:MM:SS[.fff] UTC" or Unix seconds);
//             absent: the import day
//   status    a success flag (receipt_status, success): rows with 0/false are skipped
//   tx        the transaction hash (0x + 64 hex digits): with a `time`, the row can be an onchain
//             conversion (BulkImportOptions::transactions)
//   log_index the log's index in its transaction (token transfers, logs)
//   block     the block number
struct ColumnMapping {
  std::map<std::string, std::vector<std::string>> roles;  // role -> columns
};

// Parses "wallet=from,to" (repeatable) into `mapping`. InvalidArgument on an unknown role.
Status AddMapping(std::string_view spec, ColumnMapping& mapping);

struct BulkImportOptions {
  // Chain of rows without a chain column.
  int64_t chain_id = 1;
  // Explicit column roles; roles not given are detected from the header (known export shapes).
  ColumnMapping mapping;
  // Where imported files are remembered (BLAKE2b of the decompressed content); empty = no
  // ledger. A file already in the ledger is skipped unless `force`.
  std::string ledger_path;
  bool force = false;
  // Called about twice a second with (rows so far, input bytes read, input bytes total).
  std::function<void(uint64_t, uint64_t, uint64_t)> progress;
  // Rows per store write (bounds memory: ~56 bytes a row next to the aggregated entries). Large
  // enough that a first import into an empty index is usually one packed append (LoadSorted)
  // rather than an append and then per-wallet merges (5 M-row CSV: 1.10 -> 1.17 M rows/s).
  size_t rows_per_batch = 8'000'000;
  // Largest decompressed input in bytes; InvalidArgument (field "body") beyond it. 0 = no
  // limit. Bounds the work a small gzip request body can cause.
  uint64_t max_input_bytes = 0;
  // Rows with a tx hash and a time that the sink wants are handed to it after the activity is
  // written (conversion attribution). Null = none collected.
  TransactionSink* transactions = nullptr;
};

struct BulkImportSummary {
  std::string shape;                // detected shape, e.g. "bigquery.token_transfers"
  uint64_t rows = 0;                // data rows read
  uint64_t interactions = 0;        // (wallet, contract) interactions recorded
  uint64_t unknown_contract = 0;    // rows whose contract is not in the registry (not errors)
  uint64_t skipped_failed = 0;      // rows of failed transactions
  uint64_t rejected = 0;            // malformed rows
  bool already_imported = false;    // the ledger had this file: nothing was written
  uint64_t transactions = 0;          // interactions handed to BulkImportOptions::transactions
  uint64_t transactions_dropped = 0;  // wanted past kMaxImportTransactions
  // Rows the sink wanted whose transaction hash is not 0x + 64 hex digits: their activity is
  // recorded, but they cannot be attributed.
  uint64_t invalid_tx_hashes = 0;
  std::vector<ImportError> errors;  // first kMaxReportedErrors malformed rows (line numbers)
  double seconds = 0;
};

// Imports one file ("-" = stdin; gzip detected by content). Malformed rows are reported and
// skipped; unknown contracts are counted. Per (wallet, project, chain) the store keeps the
// latest day and adds the counts, so a file must be imported once: the ledger makes a repeated
// import of the same content a no-op. Returns Unavailable if the file cannot be read, or the
// store's error.
Result<BulkImportSummary> BulkImportFile(const std::string& path, store::InventoryStore& store,
                                         store::ActivityStore& activity,
                                         const BulkImportOptions& options, const Clock& clock);

// The same for in-memory content (an HTTP request body), plain or gzip (by the gzip magic).
// `name` goes into the ledger. Corrupt gzip data is InvalidArgument. `content` is read on the
// calling thread (no read-ahead thread).
Result<BulkImportSummary> BulkImportBuffer(std::string_view content, std::string_view name,
                                           store::InventoryStore& store,
                                           store::ActivityStore& activity,
                                           const BulkImportOptions& options, const Clock& clock);

// The import ledger, shared by `adserver activity import` and POST /admin/v1/activity: one line
// "DIGEST ROWS NAME" per imported content. Runs `write` (which returns the rows to record)
// unless `digest` is already in the ledger at `ledger_path` and not `force`, then records it.
// Holds an exclusive flock on the ledger meanwhile, so concurrent imports of the same content
// (threads or processes) write once. Returns whether `write` ran; an empty `ledger_path` always
// runs it. Unavailable if the ledger cannot be opened or written, else `write`'s error.
Result<bool> WriteOnce(const std::string& ledger_path, const std::string& digest,
                       std::string_view name, bool force,
                       const std::function<Result<uint64_t>()>& write);
// Runs `copy` while holding the ledger's lock (creating the ledger if missing), so that no
// import runs meanwhile: a backup copies the activity index and the ledger as one consistent
// pair (an import writes both under the lock).
Status WithLedgerLocked(const std::string& ledger_path, const std::function<Status()>& copy);
// Hex BLAKE2b-256 of `content`: how the ledger identifies a (decompressed) file.
std::string ContentDigestHex(std::string_view content);

// Request bodies: gzip is recognised by its magic bytes (1f 8b).
bool IsGzipContent(std::string_view content);
// The first (up to) `size` decompressed bytes of `content` (gzip or plain). InvalidArgument
// on corrupt gzip data.
Result<std::string> DecompressedPrefix(std::string_view content, size_t size);
// All of `content` decompressed; InvalidArgument (field "body") past `max_bytes` (0 = no limit)
// or on corrupt gzip data.
Result<std::string> Decompress(std::string_view content, uint64_t max_bytes);

// ContentDigestHex of `content` decompressed (gzip or plain), inflated in chunks rather than
// held whole. InvalidArgument (field "body") past `max_bytes` (0 = no limit) or on corrupt gzip.
Result<std::string> DecompressedDigestHex(std::string_view content, uint64_t max_bytes);
// ImportActivityNdjsonLines over `content` (gzip or plain), inflated while it is read: a gzip
// body of adserver's NDJSON never exists inflated in memory. The errors of Decompress.
Result<ImportSummary> ImportActivityNdjsonBuffer(std::string_view content, uint64_t max_bytes,
                                                 store::InventoryStore& store,
                                                 store::ActivityStore& activity, const Clock& clock,
                                                 TransactionSink* transactions);

// Parses a timestamp in any of the export formats to days since the epoch.
std::optional<uint32_t> ParseDay(std::string_view text);
// "0x..." (any case), "\x..." (Dune) or a 32-byte topic word whose first 12 bytes are zero.
std::optional<Address> ParseAnyAddress(std::string_view text);
// A timestamp as ParseDay reads it, to Unix seconds: Unix seconds (or milliseconds), RFC 3339,
// or "YYYY-MM-DD HH:MM:SS[.fff][ UTC]" (UTC). Nullopt when it does not parse.
std::optional<int64_t> ParseSeconds(std::string_view text);
// A transaction hash: 0x (or \x) and 64 hex digits, optionally quoted.
std::optional<chain::Hash32> ParseTxHash(std::string_view text);

}  // namespace adserver::ingest
