#pragma once

// A scripted in-memory chain for indexer tests: append blocks, fork at a height, fail calls.
// Header-only so only tests that link adserver::chain pull it in.

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "ingest/chain/chain_source.h"

namespace adserver::testing {

// Thread-safe: a test thread scripts and waits while an indexer thread reads.
class FakeChainSource final : public ingest::chain::ChainSource {
 public:
  using ChainBlock = ingest::chain::ChainBlock;
  using ChainTransaction = ingest::chain::ChainTransaction;
  using Hash32 = ingest::chain::Hash32;

  static constexpr int64_t kGenesisTime = 1'767'225'600;  // 2026-01-01
  static constexpr int64_t kBlockSeconds = 12;

  // The chain starts with block 0 (no transactions).
  FakeChainSource() { blocks_.push_back(MakeBlock(0, Hash32{}, {})); }

  // Appends a block with `transactions` on top of the head and returns a copy of it. Its hash
  // is unique to its height and branch; its timestamp is kGenesisTime + kBlockSeconds * number.
  ChainBlock AppendBlock(std::vector<ChainTransaction> transactions = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    const ChainBlock& parent = blocks_.back();
    blocks_.push_back(MakeBlock(parent.number + 1, parent.hash, std::move(transactions)));
    return blocks_.back();
  }
  // Abandons the blocks above `height`: blocks appended next form a new branch from it.
  void ForkAt(uint64_t height) {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_.resize(height + 1);
    ++branch_;
  }
  // The next `n` calls fail with Unavailable.
  void FailNextCalls(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = n;
  }
  int failures() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_;
  }
  // Calls of HeadBlockNumber, failed ones included.
  int head_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return head_calls_;
  }

  Result<uint64_t> HeadBlockNumber() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++head_calls_;
    if (Status st = MaybeFail(); !st.ok()) return st;
    return blocks_.back().number;
  }

  Result<std::vector<ChainBlock>> GetBlocks(uint64_t from, uint64_t to,
                                            std::span<const Address> log_emitters) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status st = MaybeFail(); !st.ok()) return st;
    std::unordered_set<Address, AddressHash> emitters(log_emitters.begin(), log_emitters.end());
    std::vector<ChainBlock> out;
    for (uint64_t n = from; n <= to && n < blocks_.size(); ++n) {
      ChainBlock block = blocks_[n];
      for (ChainTransaction& tx : block.transactions) {
        std::erase_if(tx.logs, [&](const ingest::chain::ChainLog& log) {
          return !emitters.contains(log.address);
        });
      }
      out.push_back(std::move(block));
    }
    return out;
  }

  Result<std::vector<std::optional<Hash32>>> GetBlockHashes(
      std::span<const uint64_t> numbers) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status st = MaybeFail(); !st.ok()) return st;
    std::vector<std::optional<Hash32>> out;
    for (uint64_t n : numbers) {
      out.push_back(n < blocks_.size() ? std::optional<Hash32>(blocks_[n].hash) : std::nullopt);
    }
    return out;
  }

 private:
  // REQUIRES: mu_ held.
  Status MaybeFail() {
    if (fail_next_ <= 0) return OkStatus();
    --fail_next_;
    ++failures_;
    return UnavailableError("fake chain: scripted failure");
  }
  // REQUIRES: mu_ held.
  ChainBlock MakeBlock(uint64_t number, const Hash32& parent,
                       std::vector<ChainTransaction> transactions) const {
    ChainBlock block{.number = number,
                     .hash = {},
                     .parent_hash = parent,
                     .timestamp = kGenesisTime + kBlockSeconds * static_cast<int64_t>(number),
                     .transactions = std::move(transactions)};
    for (int i = 0; i < 8; ++i) {
      block.hash.bytes[i] = static_cast<uint8_t>(number >> (8 * i));
      block.hash.bytes[8 + i] = static_cast<uint8_t>(branch_ >> (8 * i));
    }
    block.hash.bytes[31] = 0xb1;
    return block;
  }

  mutable std::mutex mu_;
  std::vector<ChainBlock> blocks_;  // guarded by mu_; blocks_[n] is block n
  uint64_t branch_ = 0;             // guarded by mu_
  int fail_next_ = 0;               // guarded by mu_
  int failures_ = 0;                // guarded by mu_
  int head_calls_ = 0;              // guarded by mu_
};

}  // namespace adserver::testing
