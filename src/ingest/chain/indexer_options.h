#pragma once

// Options of the live EVM indexer (ingest/chain/chain_indexer.h), run by `adserver index` or,
// with an [indexer] configuration section, inside `adserver serve`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace adserver::ingest::chain {

struct IndexerOptions {
  // http://host:port[/path] of the node's JSON-RPC endpoint.
  std::string rpc_url;
  // The chain the node serves: selects the registry contracts watched and tags the activity.
  int64_t chain_id = 1;
  // Blocks to wait before applying a block. 0 applies each block at once; either way a block a
  // reorg abandons is undone from the undo journal (up to 64 blocks deep).
  int confirmations = 2;
  // Blocks fetched per JSON-RPC batch (and applied per LMDB write transaction).
  int batch_blocks = 50;
  // Head polling interval once caught up.
  std::chrono::milliseconds poll_interval{200};
  // First block when the chain has no checkpoint yet (default: the current head).
  std::optional<uint64_t> from_block;
  // First wait after a node error; doubled after each further error, up to max_backoff.
  std::chrono::milliseconds min_backoff{100};
  // Longest wait between retries while the node keeps failing.
  std::chrono::milliseconds max_backoff{5000};
};

}  // namespace adserver::ingest::chain
