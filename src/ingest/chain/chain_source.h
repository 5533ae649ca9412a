#pragma once

// What the live indexer reads from a node, as plain values: the head, blocks with their
// transactions and the logs of the contracts it watches, and block hashes for reorg checks.
// JsonRpcChainSource (json_rpc_chain_source.h) reads an EVM node; tests script a fake chain.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "ingest/chain/chain_types.h"

namespace adserver::ingest::chain {

// A log as the indexer needs it: who emitted it and where it sits in its block.
struct ChainLog {
  Address address;         // the emitting contract
  uint64_t log_index = 0;  // position among the block's logs
  bool operator==(const ChainLog&) const = default;
};

struct ChainTransaction {
  Hash32 hash;
  Address from;
  std::optional<Address> to;  // absent for a contract creation
  // The transaction's logs emitted by the addresses asked for (ChainSource::GetBlocks), in
  // log index order.
  std::vector<ChainLog> logs;
  bool operator==(const ChainTransaction&) const = default;
};

struct ChainBlock {
  uint64_t number = 0;
  Hash32 hash;
  Hash32 parent_hash;
  int64_t timestamp = 0;  // Unix seconds
  std::vector<ChainTransaction> transactions;
  bool operator==(const ChainBlock&) const = default;
};

// A node of one chain. Implementations need not be thread-safe: one indexer calls them from one
// thread. Every error is worth retrying: Unavailable if the node cannot be reached, answers
// badly, or changed its chain while answering one call.
class ChainSource {
 public:
  virtual ~ChainSource() = default;

  // The number of the node's newest block.
  virtual Result<uint64_t> HeadBlockNumber() = 0;

  // Blocks `from` to `to` (from <= to) of the node's chain, in order. Stops early, at the first
  // block the node does not have or whose parent hash is not the previous block's hash, so the
  // result may be empty. Each transaction carries only the logs emitted by one of
  // `log_emitters` (none if it is empty).
  virtual Result<std::vector<ChainBlock>> GetBlocks(uint64_t from, uint64_t to,
                                                    std::span<const Address> log_emitters) = 0;

  // The node's hash of each block of `numbers`, in the same order; nullopt for a block the node
  // does not have.
  virtual Result<std::vector<std::optional<Hash32>>> GetBlockHashes(
      std::span<const uint64_t> numbers) = 0;
};

}  // namespace adserver::ingest::chain
