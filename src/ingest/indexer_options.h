#pragma once

// Options of the live EVM indexer (app/indexer.h), run by `adserver index` or, with an
// [indexer] configuration section, inside `adserver serve`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace adserver::ingest {

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
};

}  // namespace adserver::ingest
