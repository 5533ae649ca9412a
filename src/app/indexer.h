#pragma once

// `adserver index`: follows an EVM node over JSON-RPC and records wallet interactions with
// registry contracts into the data directory's activity index.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace adserver::app {

struct IndexerOptions {
  // http://host:port[/path] of the node.
  std::string rpc_url;
  int64_t chain_id = 1;
  // Blocks to wait before applying a block (reorgs shallower than this leave no trace).
  int confirmations = 2;
  // Blocks fetched per JSON-RPC batch.
  int batch_blocks = 50;
  // Head polling interval once caught up.
  std::chrono::milliseconds poll_interval{200};
  // First block when there is no checkpoint (default: the current head).
  std::optional<uint64_t> from_block;
};

// Runs until `stop` is set. Interactions: a transaction to a registry contract (wallet = from)
// and a log emitted by one (wallet = the transaction's from), counted once per transaction and
// project. Checkpoint: DATA_DIR/indexer-<chainId>.json (next block and the last 64 block hashes);
// a parent-hash mismatch rewinds to the fork point (activity of an abandoned branch deeper than
// `confirmations` is not undone; see docs/architecture.md). Node errors are retried with
// exponential backoff (100 ms to 5 s). Returns a Status only for unrecoverable local errors.
Status RunIndexer(const std::string& data_dir, const IndexerOptions& options,
                  const std::atomic<bool>& stop);

}  // namespace adserver::app
