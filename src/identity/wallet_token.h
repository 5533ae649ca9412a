#pragma once

// Stateless identity tokens: the identity cookie of /v1/ads and the localId of /api/ads.
//
// A token carries, sealed under the key ring, everything the server knows about one identity:
// a random identity id (stable across re-seals) and the wallets this browser / SDK presented,
// most recent first, with the time each was last presented. The server stores nothing per
// identity, so no request can grow server state, and a token can only ever name wallets that
// were presented together with it (a wallet address alone unlocks nothing).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/address.h"
#include "identity/key_ring.h"
#include "identity/options.h"

namespace adserver::identity {

// 128 random bits naming one identity; kept when a token is re-sealed.
using IdentityId = std::array<uint8_t, 16>;

// What a token is for. The kind is authenticated, so a cookie never opens as a localId and
// vice versa.
enum class TokenKind : uint8_t { kCookie = 1, kLocalId = 2 };

struct WalletLink {
  Address wallet;
  int64_t last_seen = 0;  // Unix seconds: when the wallet was last presented with the token
};

// At most kMaxWalletsPerIdentity links, most recent first, no wallet twice. Fixed capacity:
// opening a token allocates nothing. Value type, not thread-safe.
class WalletLinks {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const WalletLink& operator[](size_t i) const { return links_[i]; }
  std::span<const WalletLink> view() const { return {links_.data(), size_}; }
  // REQUIRES: size() < kMaxWalletsPerIdentity.
  void push_back(const WalletLink& link);
  bool Contains(const Address& wallet) const;
  // Removes the links `drop` returns true for, keeping the order; returns how many went.
  template <typename Pred>
  size_t RemoveIf(Pred drop) {
    size_t kept = 0;
    for (size_t i = 0; i < size_; ++i) {
      if (!drop(links_[i])) links_[kept++] = links_[i];
    }
    size_t removed = size_ - kept;
    size_ = kept;
    return removed;
  }
  void clear() { size_ = 0; }

 private:
  std::array<WalletLink, kMaxWalletsPerIdentity> links_{};
  size_t size_ = 0;
};

// The merge rule: `seen` (a request's wallets, in request order) become the most recent links
// with last_seen = now; the older links follow in their order; the list is cut to
// `max_wallets` (at most kMaxWalletsPerIdentity). Returns true when the wallets or their order
// changed (only refreshed times = false), i.e. when the token must be re-sealed to say so.
bool MergeWallets(WalletLinks& links, std::span<const Address> seen, int64_t now,
                  size_t max_wallets);

struct IdentityToken {
  IdentityId id{};
  int64_t sealed_at = 0;  // Unix seconds
  uint8_t key_id = 0;     // the key it was sealed under (set by SealToken's caller / UnsealToken)
  WalletLinks wallets;
};

// Seals `token` (at least one wallet) at `token.sealed_at` with the ring's active key:
// XChaCha20-Poly1305 (IETF), random 192-bit nonce, base64url without padding:
//   key id (1) | nonce (24) | ciphertext of plain + tag (16)
//   plain = id (16) | sealed_at (8, big-endian) | n (1) | n x [wallet (20) | age (4)]
// where age = sealed_at - last_seen in seconds (big-endian, saturating). A format label, the
// kind and the key id are authenticated as associated data. At most MaxTokenChars(n) chars.
std::string SealToken(const KeyRing& keys, TokenKind kind, const IdentityToken& token);

// Opens a token value. nullopt when it is not a live token of this kind: bad encoding or
// length, a key id not in the ring (foreign or retired key), failed authentication
// (tampered, or of the other kind), no wallet, or sealed more than `max_age_seconds` ago or
// more than a minute in the future.
std::optional<IdentityToken> UnsealToken(const KeyRing& keys, TokenKind kind,
                                         std::string_view value, int64_t now_seconds,
                                         int64_t max_age_seconds);

}  // namespace adserver::identity
