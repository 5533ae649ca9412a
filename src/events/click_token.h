#pragma once

// The token in a click URL ({public_url}/v1/click/{token}). It carries what a click needs
// without a store read, sealed (AES-256-GCM) under the events key ring so that it can be
// neither read nor forged, and keys can rotate without breaking tokens in flight (the key id
// travels in the clear; every key of the ring opens).
//
// Layout (then base64url without padding): key id (1) | decision id (16) | nonce (12, random) |
// sealed claims | tag (16); the key id and the decision id are authenticated with the claims.
// The cipher's key is derived from the ring key (BLAKE2b over a label). About 120 characters
// plus the adUnitId and arm.
//
// Tokens of the first format (before 2026-11-27: XChaCha20-Poly1305 with the decision id as
// nonce, no nonce field) still open, so that clicks in flight across an upgrade count.
//
// The claims' sixth integer was reserved (always 0) until the invalid-traffic checks (issue
// 18); it now carries the serve context: bit 0 set when present, bits 1-10 the milliseconds of
// served_at's second, bits 11-42 UserAgentHash of the serve's User-Agent, bits 43-47 the
// served impression's invalid-traffic reason (0 = valid). Tokens sealed before have 0 there and
// open with `serve_context` false (their clicks skip the two checks that need it: too_fast on
// milliseconds and user_agent_mismatch). A token of an invalid impression does not open in a
// release before that field (its bits 43-47 were required to be 0).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/types.h"
#include "events/decision_id.h"
#include "identity/key_ring.h"

namespace adserver::events {

// Longest adUnitId and arm a token carries (longer ones are cut; the ad request limits
// adUnitId to serve.max_ad_unit_id_bytes, 256 by default).
inline constexpr size_t kMaxTokenAdUnitBytes = 1024;
inline constexpr size_t kMaxTokenArmBytes = 64;

struct ClickClaims {
  DecisionId decision;
  int64_t publisher_id = 0;
  int64_t campaign_id = 0;
  int64_t ad_id = 0;
  int64_t served_at = 0;  // Unix seconds
  Micros price = 0;       // what the first valid click bills (the CPC bid at serve time; 0 else)
  // Keyed digest of the person served (their wallet set), never a wallet.
  uint64_t person = 0;
  bool earlier_variant = false;
  std::string arm;         // experiment arm ("" = none)
  std::string ad_unit_id;  // "" = none sent
  // Serve context (see above); false for tokens sealed before it existed.
  bool serve_context = false;
  int32_t served_at_millis = 0;  // 0-999: milliseconds within served_at's second
  uint32_t user_agent_hash = 0;  // UserAgentHash of the serve's User-Agent
  // The served impression's InvalidReason (events/traffic_checks.h; 0 = valid, at most 31);
  // only with serve_context.
  uint8_t serve_invalid = 0;
  bool operator==(const ClickClaims&) const = default;
};

// 32-bit FNV-1a of a User-Agent header value ("" when absent): a short, unkeyed hash kept
// inside the sealed token, so that a click's user agent can be compared with its serve's.
uint32_t UserAgentHash(std::string_view user_agent);

// Seals `claims` under the ring's active key. Appends the token to `out`.
void SealClick(const identity::KeyRing& keys, const ClickClaims& claims, std::string& out);
std::string SealClick(const identity::KeyRing& keys, const ClickClaims& claims);

// Opens a token sealed by SealClick under any key of the ring; nullopt for anything forged,
// truncated, tampered with, sealed under an unknown key or not a token at all. Expiry is the
// caller's (an expired click still redirects).
std::optional<ClickClaims> OpenClick(const identity::KeyRing& keys, std::string_view token);

}  // namespace adserver::events
