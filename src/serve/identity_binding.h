#pragma once

// Identity rules of the ad endpoints (spec 2.1, 4.2, 5.5; compatibility.md): the consented
// identity cookie of /v1/ads and the localId of /api/ads. Runs on the event loop: only
// in-memory lookups (identity::IdentityService never blocks on its store here).

#include <cstdint>
#include <string>
#include <vector>

#include "http/message.h"
#include "identity/identity_service.h"
#include "serve/ad_request.h"

namespace adserver::serve {

struct IdentityOutcome {
  // A consented request without wallets whose cookie does not open (or names no live
  // identity): no identity, no error, nothing to serve -> no fill.
  bool no_fill = false;
  // Set-Cookie header values to add to the response (the cookie and its partitioned twin).
  std::vector<std::string> set_cookies;
};

// Applies the identity rules to a parsed request of a live or test key:
// - current, cookieConsent true: reads the cookie (unpartitioned first, then the partitioned
//   twin); with wallets, links them to its identity (a new one when there is none) and sets
//   both cookies; without wallets, fills request.wallets from the identity and refreshes the
//   cookies, or sets `no_fill` when a cookie was sent but is no identity.
// - earlier, `localId` key present: with wallets, binds them to the sent id (a new id when it
//   is null or unknown) and sets request.bound_local_id; with `walletAddresses: []` and a
//   known id, fills request.wallets from it.
// Test keys read but never write: no cookie set, no link made, no new localId.
// `identity` null = identity disabled: nothing happens (every localId is unknown).
// Leaves request.wallets empty when the identity gives nothing; the caller's wallet-presence
// rule then answers 400 (or 404 WALLET_CACHE_VOID).
IdentityOutcome ResolveIdentity(identity::IdentityService* identity,
                                const http::Request& http_request, AdRequest& request,
                                bool test_key, int64_t now_seconds);

// The value of every cookie named `name` in the request's Cookie headers, in order.
std::vector<std::string_view> CookieValues(const http::Request& request, std::string_view name);

}  // namespace adserver::serve
