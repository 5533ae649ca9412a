#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "common/address.h"
#include "identity/wallet_token.h"
#include "store/identity_store.h"

namespace adserver::identity {

// The wallets an operator erased, as keyed 64-bit digests (SipHash-2-4 under the
// installation's digest key) with the time of erasure. Opening a token drops every link to an
// erased wallet that was made at or before its erasure, so an erasure reaches every cookie and
// localId already issued without the server knowing them. A wallet presented again after its
// erasure links again (a new, consented presentation). Immutable; thread-safe.
class ErasureList {
 public:
  ErasureList(const store::ErasureDigestKey& key, std::unordered_map<uint64_t, int64_t> entries,
              int64_t last_seq)
      : key_(key), entries_(std::move(entries)), last_seq_(last_seq) {}

  static uint64_t Digest(const store::ErasureDigestKey& key, const Address& wallet);
  uint64_t Digest(const Address& wallet) const { return Digest(key_, wallet); }

  // When `wallet` was erased, or nullopt.
  std::optional<int64_t> ErasedAt(const Address& wallet) const;
  // Removes from `links` every link last seen at or before its wallet's erasure. Returns how
  // many went.
  size_t Apply(WalletLinks& links) const;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const store::ErasureDigestKey& key() const { return key_; }
  const std::unordered_map<uint64_t, int64_t>& entries() const { return entries_; }
  // Sequence number of the newest stored erasure this list includes (0: none).
  int64_t last_seq() const { return last_seq_; }

 private:
  store::ErasureDigestKey key_;
  std::unordered_map<uint64_t, int64_t> entries_;  // digest -> erased_at
  int64_t last_seq_ = 0;
};

}  // namespace adserver::identity
