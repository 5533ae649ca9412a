#pragma once

// Identity rules of the ad endpoints (spec 2.1, 4.2, 5.5; compatibility.md): the consented
// identity cookie of /v1/ads and the localId of /api/ads. Runs on the event loop: no lock,
// no I/O (identity::IdentityService::Open/Seal).

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

// Applies the identity rules to a parsed request of a live or test key. Identities are
// stateless tokens (identity/wallet_token.h): nothing here is stored, so a request whose
// cookie or localId never comes back leaves nothing behind.
// - current, cookieConsent true: opens the cookie (unpartitioned first, then the partitioned
//   twin); with wallets, merges them into its identity (a new one when none opens); without
//   wallets, fills request.wallets from the identity, or sets `no_fill` when a cookie was sent
//   but is no identity. Both cookies are (re-)set when the wallets changed, links were dropped
//   (erased, expired) or the value is older than identity.cookie_refresh_seconds.
// - earlier, `localId` key present: with wallets, merges them into the sent id's identity (a
//   new one when it is null or unknown) and sets request.bound_local_id: the sent id itself
//   when its wallets did not change, else a new id; with `walletAddresses: []` and a known
//   id, fills request.wallets from it.
// Test keys read but never write: no cookie set, no new localId.
// `identity` null = identity disabled: nothing happens (every localId is unknown).
// Leaves request.wallets empty when the identity gives nothing; the caller's wallet-presence
// rule then answers 400 (or 404 WALLET_CACHE_VOID).
IdentityOutcome ResolveIdentity(const identity::IdentityService* identity,
                                const http::Request& http_request, AdRequest& request,
                                bool test_key, int64_t now_seconds);

// The value of every cookie named `name` in the request's Cookie headers, in order.
std::vector<std::string_view> CookieValues(const http::Request& request, std::string_view name);

}  // namespace adserver::serve
