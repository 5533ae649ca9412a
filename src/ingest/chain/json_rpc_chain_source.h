#pragma once

// ChainSource over an EVM node's JSON-RPC (HTTP/1.1, one kept-alive connection).

#include <memory>
#include <string>

#include "ingest/chain/chain_source.h"

namespace adserver::ingest::chain {

// Blocks come from one batched eth_getBlockByNumber(n, true) call per GetBlocks, logs from
// batched eth_getLogs calls filtered to the emitters (1,000 addresses per call), asked for only
// for the blocks received: a log whose block hash is not the received block's means the node
// reorganised in between (Unavailable). Each call times out after 10 s (5 s to connect). Not
// thread-safe.
class JsonRpcChainSource final : public ChainSource {
 public:
  // InvalidArgument unless `url` is http://host[:port][/path]. Does not connect yet.
  static Result<std::unique_ptr<JsonRpcChainSource>> Create(const std::string& url);
  ~JsonRpcChainSource() override;
  JsonRpcChainSource(const JsonRpcChainSource&) = delete;
  JsonRpcChainSource& operator=(const JsonRpcChainSource&) = delete;

  Result<uint64_t> HeadBlockNumber() override;
  Result<std::vector<ChainBlock>> GetBlocks(uint64_t from, uint64_t to,
                                            std::span<const Address> log_emitters) override;
  Result<std::vector<std::optional<Hash32>>> GetBlockHashes(
      std::span<const uint64_t> numbers) override;

 private:
  struct Impl;
  explicit JsonRpcChainSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace adserver::ingest::chain
