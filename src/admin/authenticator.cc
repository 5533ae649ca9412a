#include "admin/authenticator.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/check.h"
#include "common/log.h"

namespace adserver::admin {
namespace {

constexpr std::string_view kDisabledMessage = "admin API is disabled (set ADSERVER_ADMIN_TOKEN)";
constexpr std::string_view kTokenPrefix = "sut_";
constexpr size_t kTokenSecretChars = 40;
constexpr size_t kTokenLookupChars = 12;  // "sut_" + 8: indexed, not secret enough to matter
// A session's last-seen time is written at most this often (not on every admin call).
constexpr int64_t kTouchEverySeconds = 60;

// The token of `Authorization: Bearer <token>`, or nullopt.
std::optional<std::string_view> BearerToken(const http::Request& request) {
  std::string_view value = request.Header("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = value[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return std::nullopt;
  }
  std::string_view token = value.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

// "sut_" and kTokenSecretChars letters or digits: what IssueToken hands out.
bool IsUserTokenShaped(std::string_view token) {
  if (!token.starts_with(kTokenPrefix) || token.size() != kTokenPrefix.size() + kTokenSecretChars) {
    return false;
  }
  return std::all_of(token.begin() + kTokenPrefix.size(), token.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

// The operator token's key in the per-caller rate table (user ids are positive and smaller).
constexpr int64_t kOperatorTokenKey = std::numeric_limits<int64_t>::max();

http::Response TooManyRequests(int64_t retry_after_seconds, std::string_view message) {
  http::Response response = http::ErrorResponse(429, message);
  response.SetHeader("Retry-After", std::to_string(std::max<int64_t>(1, retry_after_seconds)));
  return response;
}

http::Response Unauthorized(std::string_view message) {
  http::Response response = http::ErrorResponse(401, message);
  response.SetHeader("WWW-Authenticate", "Bearer");
  return response;
}

bool SafeMethod(http::Method m) {
  return m == http::Method::kGet || m == http::Method::kHead || m == http::Method::kOptions;
}

}  // namespace

std::string_view CookieValue(const http::Request& request, std::string_view name) {
  for (const http::Header& h : request.headers) {
    if (h.name.size() != 6) continue;
    std::string lower(h.name);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower != "cookie") continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      std::string_view pair = rest.substr(0, rest.find(';'));
      rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      size_t eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    }
  }
  return {};
}

Authenticator::Authenticator(AdminOptions options, store::AccountStore* accounts,
                             const Clock& clock)
    : options_(std::move(options)),
      accounts_(accounts),
      clock_(clock),
      limiter_(clock, options_.sign_in),
      account_limiter_(clock, options_.sign_in_per_account) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  if (!options_.token.empty()) token_hash_ = Sha256(options_.token);
}

bool Authenticator::Disabled() const {
  if (!options_.token.empty()) return false;
  if (accounts_ == nullptr) return true;
  Result<bool> has_users = accounts_->HasUsers();
  if (has_users.ok() && *has_users) seen_users_.store(true, std::memory_order_relaxed);
  return has_users.ok() && !*has_users;
}

std::optional<http::Response> Authenticator::Admit(const http::Request& request) const {
  if (options_.token.empty() && !seen_users_.load(std::memory_order_relaxed)) return std::nullopt;
  std::optional<std::string_view> token = BearerToken(request);
  if (!token) {
    if (!CookieValue(request, options_.session_cookie).empty()) return std::nullopt;
    return Unauthorized("missing or invalid admin token");
  }
  std::string address_key = "bearer-ip:" + std::string(request.remote_ip);
  if (int64_t wait = limiter_.RetryAfter(address_key); wait > 0) {
    return TooManyRequests(wait, "too many invalid admin tokens from this address; retry later");
  }
  if (!options_.token.empty() && ConstantTimeEqual(Sha256(*token), token_hash_)) {
    return std::nullopt;
  }
  if (accounts_ != nullptr && IsUserTokenShaped(*token)) return std::nullopt;
  limiter_.RecordFailure(address_key);
  return Unauthorized("missing or invalid admin token");
}

std::optional<Principal> Authenticator::FromBearer(std::string_view token) const {
  Sha256Digest hash = Sha256(token);
  if (!options_.token.empty() && ConstantTimeEqual(hash, token_hash_)) {
    return Principal::OperatorToken();
  }
  if (accounts_ == nullptr || !IsUserTokenShaped(token)) return std::nullopt;
  Result<std::vector<store::UserTokenRecord>> candidates =
      accounts_->FindTokensByPrefix(token.substr(0, kTokenLookupChars));
  if (!candidates.ok()) {
    ADS_LOG(warn, "token lookup failed", "status", candidates.status());
    return std::nullopt;
  }
  for (const store::UserTokenRecord& t : *candidates) {
    if (!ConstantTimeEqual(t.hash, hash)) continue;
    // An expired token is refused like an unknown one (issue 39).
    if (t.expires_at && clock_.NowSeconds() >= *t.expires_at) return std::nullopt;
    Result<store::UserRecord> user = accounts_->GetUser(t.user_id);
    if (!user.ok()) return std::nullopt;
    return Principal::ForUser(*user, /*via_session=*/false);
  }
  return std::nullopt;
}

Result<store::SessionRecord> Authenticator::CurrentSession(const http::Request& request) const {
  std::string_view secret = CookieValue(request, options_.session_cookie);
  if (accounts_ == nullptr || secret.empty()) return NotFoundError("not signed in");
  Sha256Digest id_hash = Sha256(secret);
  ADS_ASSIGN_OR_RETURN(store::SessionRecord session, accounts_->GetSession(id_hash));
  int64_t now = clock_.NowSeconds();
  if (now >= session.expires_at || now - session.last_seen_at >= options_.session_idle_seconds) {
    ADS_RETURN_IF_ERROR(accounts_->DeleteSession(id_hash));
    return NotFoundError("session expired");
  }
  if (now - session.last_seen_at >= kTouchEverySeconds) {
    ADS_RETURN_IF_ERROR(accounts_->TouchSession(id_hash, now));
    session.last_seen_at = now;
  }
  return session;
}

std::variant<Principal, http::Response> Authenticator::FromSession(
    const http::Request& request) const {
  Result<store::SessionRecord> session = CurrentSession(request);
  if (!session.ok()) {
    if (session.status().code() != Code::kNotFound) return http::ErrorResponse(session.status());
    return Unauthorized("missing or invalid admin token");
  }
  if (!SafeMethod(request.method)) {
    Status csrf = CheckCsrf({.header_token = request.Header("X-CSRF-Token"),
                             .session_token = session->csrf_token,
                             .origin = request.Header("Origin"),
                             .sec_fetch_site = request.Header("Sec-Fetch-Site"),
                             .host = request.Header("Host"),
                             .public_origin = options_.public_origin});
    if (!csrf.ok()) return http::ErrorResponse(csrf);
  }
  Result<store::UserRecord> user = accounts_->GetUser(session->user_id);
  if (!user.ok()) return Unauthorized("missing or invalid admin token");
  return Principal::ForUser(*user, /*via_session=*/true);
}

std::variant<Principal, http::Response> Authenticator::Authenticate(
    const http::Request& request) const {
  if (Disabled()) return http::ErrorResponse(404, kDisabledMessage);
  std::variant<Principal, http::Response> caller = Identify(request);
  const Principal* principal = std::get_if<Principal>(&caller);
  if (principal == nullptr || options_.rate_limit_per_second <= 0) return caller;
  int64_t key = principal->user_id > 0 ? principal->user_id : kOperatorTokenKey;
  int64_t wait_micros = caller_rates_.Admit(key, options_.rate_limit_per_second,
                                            std::max<int64_t>(1, options_.rate_limit_burst),
                                            clock_.NowMicros());
  if (wait_micros == 0) return caller;
  return TooManyRequests((wait_micros + 999'999) / 1'000'000,
                         "too many admin requests from this caller; retry after the time in "
                         "Retry-After");
}

std::variant<Principal, http::Response> Authenticator::Identify(
    const http::Request& request) const {
  std::optional<std::string_view> token = BearerToken(request);
  if (!token) return FromSession(request);
  // Failed tokens back off per client address, as sign-ins do: guessing a weak operator token
  // costs hours, not seconds.
  std::string address_key = "bearer-ip:" + std::string(request.remote_ip);
  if (int64_t wait = limiter_.RetryAfter(address_key); wait > 0) {
    return TooManyRequests(wait, "too many invalid admin tokens from this address; retry later");
  }
  if (std::optional<Principal> principal = FromBearer(*token)) return *principal;
  limiter_.RecordFailure(address_key);
  return Unauthorized("missing or invalid admin token");
}

Result<Authenticator::IssuedToken> Authenticator::IssueToken(
    store::Id user, std::optional<int64_t> lifetime_seconds) const {
  if (accounts_ == nullptr) return InternalError("accounts are not available");
  std::string secret = std::string(kTokenPrefix) + RandomAlphanumeric(kTokenSecretChars);
  store::UserTokenRecord record;
  record.user_id = user;
  record.hash = Sha256(secret);
  record.prefix = secret.substr(0, kTokenLookupChars);
  const int64_t now = clock_.NowSeconds();
  record.expires_at = now + lifetime_seconds.value_or(options_.token_lifetime_seconds);
  ADS_ASSIGN_OR_RETURN(record, accounts_->CreateToken(record, now, options_.max_tokens_per_user));
  return IssuedToken{std::move(secret), std::move(record)};
}

Result<Authenticator::IssuedSession> Authenticator::StartSession(store::Id user) const {
  if (accounts_ == nullptr) return InternalError("accounts are not available");
  int64_t now = clock_.NowSeconds();
  // Expired sessions are swept at each sign-in, so the table holds live sessions only.
  Result<int64_t> swept =
      accounts_->DeleteExpiredSessions(now, now - options_.session_idle_seconds);
  if (!swept.ok()) ADS_LOG(warn, "expired sessions not deleted", "status", swept.status());
  IssuedSession out;
  out.cookie_secret = RandomAlphanumeric(43);
  out.record = store::SessionRecord{.id_hash = Sha256(out.cookie_secret),
                                    .user_id = user,
                                    .csrf_token = RandomAlphanumeric(32),
                                    .created_at = now,
                                    .last_seen_at = now,
                                    .expires_at = now + options_.session_absolute_seconds};
  ADS_RETURN_IF_ERROR(accounts_->CreateSession(out.record, options_.max_sessions_per_user));
  return out;
}

std::string Authenticator::SessionCookie(std::string_view secret) const {
  std::string cookie =
      options_.session_cookie + "=" + std::string(secret) + "; Path=/; HttpOnly; SameSite=Strict";
  cookie += secret.empty() ? "; Max-Age=0"
                           : "; Max-Age=" + std::to_string(options_.session_absolute_seconds);
  if (options_.public_origin.starts_with("https://")) cookie += "; Secure";
  return cookie;
}

}  // namespace adserver::admin
