#pragma once

// Wallet activity index: wallet -> interactions sorted by project id. This class is the read
// interface decision::Decide uses and, by default, an in-memory implementation (Add, Finalize;
// immutable once built; thread-safe for readers) used by tests and small data sets. Serving uses
// store::LmdbActivityIndex (store/lmdb), a memory-mapped index that overrides the lookups.

#include <cstdint>
#include <functional>
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
  using Sink = std::function<void(std::span<const Interaction>)>;
  virtual ~ActivityIndex() = default;

  // Adds one interaction row. Only before Finalize().
  void Add(const Address& wallet, const Interaction& interaction);
  // Sorts each wallet's interactions by project id and releases spare capacity.
  void Finalize();
  // The wallet's interactions sorted by project id; empty if unknown. Implementations that
  // decode (LMDB) keep the span valid until the calling thread's next lookup on this index.
  virtual std::span<const Interaction> Lookup(const Address& wallet) const;
  // Calls `sink` once per wallet, in order, with its interactions. All spans stay valid until
  // the calling thread's next lookup on this index (one consistent snapshot for a request).
  virtual void LookupAll(std::span<const Address> wallets, const Sink& sink) const;
  // A hint that `wallets` are looked up soon: starts loading where the lookup will find them,
  // so that memory latency overlaps the caller's other work. Changes no result; may do nothing
  // (this in-memory index does nothing).
  virtual void Prefetch(std::span<const Address> /*wallets*/) const {}
  virtual size_t wallet_count() const { return by_wallet_.size(); }

 private:
  std::unordered_map<Address, std::vector<Interaction>, AddressHash> by_wallet_;
};

}  // namespace adserver::decision
