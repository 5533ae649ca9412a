#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "admin/admin_api.h"
#include "admin/csrf.h"
#include "admin/scope.h"
#include "admin/sign_in_limiter.h"
#include "common/clock.h"
#include "common/crypto.h"
#include "common/rate_limiter.h"
#include "http/message.h"
#include "store/account_store.h"

namespace adserver::admin {

// Finds who calls the admin API (issue 16): the configured operator token, a user's bearer
// token ("sut_..."), or a console session cookie (then writes must pass the CSRF check).
// Shared by every admin route through detail::Guarded. Thread-safe.
class Authenticator {
 public:
  // `accounts` may be null (only the operator token is accepted); accounts and clock must
  // outlive this object.
  Authenticator(AdminOptions options, store::AccountStore* accounts, const Clock& clock);

  // The caller, or the response to send instead: 404 while the admin API is disabled (no
  // operator token and no user), 401 with `WWW-Authenticate: Bearer` without valid
  // credentials, 403 for a cookie-authenticated write failing the CSRF check, 429 with
  // Retry-After when the client address has failed bearer tokens too often (the sign-in
  // back-off) or the caller exceeds options().rate_limit_per_second.
  std::variant<Principal, http::Response> Authenticate(const http::Request& request) const;

  // The answer for a request that no body can authenticate, decided from its header alone and
  // without I/O (issue 39; the server asks before reading the body, RouteOptions::admit): 401
  // without credentials (no bearer token, no session cookie) or with a bearer token that is
  // neither the operator token nor shaped as a user token (counted as a failed token, as
  // Authenticate counts it), 429 while the address backs off. nullopt: read the body, then
  // Authenticate. While the admin API may still be disabled (no operator token, no user seen
  // yet) it refuses nothing, as the answer would then be Authenticate's 404.
  std::optional<http::Response> Admit(const http::Request& request) const;

  // A new bearer token for `user` (the secret, shown once, and its stored record). Conflict when
  // the user already holds options().max_tokens_per_user unrevoked tokens.
  struct IssuedToken {
    std::string secret;
    store::UserTokenRecord record;
  };
  // It expires after `lifetime_seconds` (options().token_lifetime_seconds when not given).
  Result<IssuedToken> IssueToken(store::Id user,
                                 std::optional<int64_t> lifetime_seconds = std::nullopt) const;

  // A new console session for `user`: the cookie's secret and the CSRF token bound to it.
  struct IssuedSession {
    std::string cookie_secret;
    store::SessionRecord record;
  };
  Result<IssuedSession> StartSession(store::Id user) const;
  // The session of the request's cookie, unexpired (it is deleted once expired); NotFound
  // without one.
  Result<store::SessionRecord> CurrentSession(const http::Request& request) const;
  // Set-Cookie value carrying `secret` (empty secret: a cookie that clears it).
  std::string SessionCookie(std::string_view secret) const;

  const AdminOptions& options() const { return options_; }
  store::AccountStore* accounts() const { return accounts_; }
  const Clock& clock() const { return clock_; }
  SignInLimiter& limiter() const { return limiter_; }
  // Failed sign-ins per account from any address (AdminOptions::sign_in_per_account).
  SignInLimiter& account_limiter() const { return account_limiter_; }

 private:
  std::optional<Principal> FromBearer(std::string_view token) const;
  std::variant<Principal, http::Response> FromSession(const http::Request& request) const;
  std::variant<Principal, http::Response> Identify(const http::Request& request) const;
  bool Disabled() const;

  const AdminOptions options_;
  store::AccountStore* const accounts_;
  const Clock& clock_;
  Sha256Digest token_hash_{};
  // Set once Disabled() has seen a user: Admit then knows the API is enabled without I/O.
  mutable std::atomic<bool> seen_users_{false};
  mutable SignInLimiter limiter_;
  mutable SignInLimiter account_limiter_;
  // Per caller: users by id, the operator token as kOperatorTokenKey.
  mutable RateLimiter caller_rates_;
};

// The value of cookie `name` in the request's Cookie header(s), or empty.
std::string_view CookieValue(const http::Request& request, std::string_view name);

}  // namespace adserver::admin
