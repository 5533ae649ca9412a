#pragma once

// In-memory wallet activity index: wallet -> sorted interactions. Immutable once built;
// thread-safe for readers. (A later issue replaces it with a memory-mapped LMDB index behind
// the same Lookup contract.)

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/address.h"

namespace adserver::decision {

struct Interaction {
  uint32_t project_id = 0;
  uint32_t chain_id = 0;
  uint32_t last_seen_day = 0;  // days since the Unix epoch
  uint32_t count = 0;
  bool operator==(const Interaction&) const = default;
};

class ActivityIndex {
 public:
  // Adds one interaction row. Only before Finalize().
  void Add(const Address& wallet, const Interaction& interaction);
  // Sorts each wallet's interactions by project id and releases spare capacity.
  void Finalize();
  // The wallet's interactions sorted by project id; empty if unknown.
  std::span<const Interaction> Lookup(const Address& wallet) const;
  size_t wallet_count() const { return by_wallet_.size(); }

 private:
  std::unordered_map<Address, std::vector<Interaction>, AddressHash> by_wallet_;
};

}  // namespace adserver::decision
