#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/address.h"
#include "common/status.h"

namespace adserver::store {

// 128 random bits naming one identity (a browser's cookie identity or an SDK's localId).
using IdentityKey = std::array<uint8_t, 16>;

// What created the identity: the consented cookie of /v1/ads or a localId of /api/ads. The two
// never mix: a localId is never looked up as a cookie identity and vice versa.
enum class IdentityKind : uint8_t { kCookie = 1, kLocal = 2 };

struct IdentityWalletRecord {
  Address wallet;
  int64_t last_seen = 0;  // Unix seconds
};

// One identity: at most 50 wallets (the most recently seen), most recent first.
struct IdentityRecord {
  IdentityKey key{};
  IdentityKind kind = IdentityKind::kCookie;
  int64_t last_seen = 0;  // Unix seconds; retention counts from here
  std::vector<IdentityWalletRecord> wallets;
};

// Persistence of the identity graph. Implementations are thread-safe; every call may block on
// I/O, so callers run them on background or admin worker threads, never on an event loop.
// Errors: Unavailable when the backend cannot be reached or is busy; Internal otherwise.
class IdentityStore {
 public:
  virtual ~IdentityStore() = default;

  // Upserts every identity in one transaction; each record replaces the stored wallet list of
  // its identity as a whole.
  virtual Status PutIdentities(const std::vector<IdentityRecord>& identities) = 0;
  // Streams every identity last seen at or after `min_last_seen` to `fn` (wallets most
  // recent first, links older than `min_last_seen` left out).
  virtual Status ScanIdentities(int64_t min_last_seen,
                                const std::function<void(IdentityRecord&&)>& fn) = 0;
  // Every identity (of either kind) that links `wallet`.
  virtual Result<std::vector<IdentityRecord>> IdentitiesForWallet(const Address& wallet) = 0;
  // Removes every link of `wallet`; identities left without wallets are deleted. Returns the
  // number of links removed.
  virtual Result<int64_t> EraseWallet(const Address& wallet) = 0;
  // Retention: deletes identities last seen before `cutoff` and wallet links last seen before
  // it (identities left without wallets go too). Returns the number of identities deleted.
  virtual Result<int64_t> DeleteIdentitiesBefore(int64_t cutoff) = 0;
};

}  // namespace adserver::store
