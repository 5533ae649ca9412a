#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "identity/key_ring.h"
#include "store/identity_store.h"

namespace adserver::identity {

// An identity id sealed for a cookie value: XChaCha20-Poly1305 (IETF) under the ring's active
// key, with a random 192-bit nonce. Layout before base64url (no padding, 87 characters):
//   key id (1) | nonce (24) | ciphertext of [identity id (16) | sealed-at seconds (8)] + tag (16)
// The key id and a format label are authenticated as associated data.
std::string SealIdentity(const KeyRing& keys, const store::IdentityKey& id, int64_t now_seconds);

struct Unsealed {
  store::IdentityKey id{};
  int64_t sealed_at = 0;
  uint8_t key_id = 0;
};

// Opens a cookie value. nullopt when it is not ours: bad encoding or length, a key id not in
// the ring (foreign or retired key), a failed authentication (tampered), or sealed more than
// `max_age_seconds` ago or in the future beyond a minute of clock skew.
std::optional<Unsealed> UnsealIdentity(const KeyRing& keys, std::string_view value,
                                       int64_t now_seconds, int64_t max_age_seconds);

}  // namespace adserver::identity
