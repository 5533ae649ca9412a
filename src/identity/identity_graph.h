#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/address.h"
#include "store/identity_store.h"

namespace adserver::identity {

// At most this many wallets per identity: the most recently seen are kept.
inline constexpr size_t kMaxWalletsPerIdentity = 50;

// The merge rule: `seen` (a request's wallets, in request order) become the most recent links
// with last_seen = now, in that order; the older links follow, most recent first; the list is
// cut to `max_wallets`. A wallet never appears twice.
void MergeWallets(std::vector<store::IdentityWalletRecord>& wallets, std::span<const Address> seen,
                  int64_t now, size_t max_wallets);

// The whole identity graph in memory: identity -> up to 50 wallets with last-seen times.
// Thread-safe. The serving path calls Wallets/Link/Touch; each takes one short lock on one of
// 64 shards (no I/O, no allocation beyond the identity's own vector), so event loops never
// wait on the store. Changes are collected as "dirty" and written behind by IdentityService.
//
// Identities are never merged with each other: a wallet address is public, so sending one
// must not attach the sender to someone else's identity. The same wallet may therefore be
// linked from several identities (one per browser / per localId).
class IdentityGraph {
 public:
  // Links and identities not seen for `retention_seconds` count as absent.
  explicit IdentityGraph(int64_t retention_seconds, size_t max_wallets = kMaxWalletsPerIdentity);
  IdentityGraph(const IdentityGraph&) = delete;
  IdentityGraph& operator=(const IdentityGraph&) = delete;

  // The live wallets of the identity, most recent first; nullopt when it is unknown, of the
  // other kind, expired, or has no live wallet.
  std::optional<std::vector<Address>> Wallets(store::IdentityKind kind,
                                              const store::IdentityKey& key, int64_t now) const;
  // Links `wallets` to the identity (MergeWallets), creating it if absent (an expired or
  // other-kind identity under that key restarts empty). Marks it dirty.
  void Link(store::IdentityKind kind, const store::IdentityKey& key,
            std::span<const Address> wallets, int64_t now);
  // Sets the identity's last_seen (it was served from its wallets); false if not live.
  bool Touch(store::IdentityKind kind, const store::IdentityKey& key, int64_t now);

  // Adds a stored identity at start-up (not dirty).
  void Load(store::IdentityRecord&& record);
  // Copies of every identity changed since the last call, and clears the marks.
  std::vector<store::IdentityRecord> TakeDirty();

  // Admin: copies of the identities linking `wallet`.
  std::vector<store::IdentityRecord> ForWallet(const Address& wallet) const;
  // Admin: removes every link of `wallet`; identities left empty are removed. Returns the
  // number of links removed.
  size_t EraseWallet(const Address& wallet);
  // Retention: removes expired links and identities. Returns identities removed.
  size_t Sweep(int64_t now);
  size_t size() const;

 private:
  struct KeyHash {
    size_t operator()(const store::IdentityKey& k) const noexcept {
      size_t h;
      std::memcpy(&h, k.data() + 8, sizeof h);
      return h;
    }
  };
  struct Entry {
    store::IdentityRecord record;
    bool dirty = false;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<store::IdentityKey, Entry, KeyHash> map;  // guarded by mu
    std::vector<store::IdentityKey> dirty;                       // guarded by mu
  };
  static constexpr size_t kShards = 64;

  Shard& ShardOf(const store::IdentityKey& key) { return shards_[key[0] % kShards]; }
  const Shard& ShardOf(const store::IdentityKey& key) const { return shards_[key[0] % kShards]; }
  static void MarkDirty(Shard& shard, Entry& entry);

  const int64_t retention_seconds_;
  const size_t max_wallets_;
  std::array<Shard, kShards> shards_;
};

}  // namespace adserver::identity
