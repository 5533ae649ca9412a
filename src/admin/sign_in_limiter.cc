#include "admin/sign_in_limiter.h"

#include <algorithm>

#include "common/crypto.h"

namespace adserver::admin {

SignInLimiter::SignInLimiter(const Clock& clock, SignInLimiterOptions options)
    : clock_(clock), options_(options) {}

int64_t SignInLimiter::RetryAfter(std::string_view key) const {
  int64_t now = clock_.NowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(std::string(key));
  if (it == entries_.end()) return 0;
  return std::max<int64_t>(0, it->second.blocked_until - now);
}

void SignInLimiter::RecordFailure(std::string_view key) {
  int64_t now = clock_.NowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(std::string(key));
  if (it != entries_.end() && now - it->second.last_failure >= options_.forget_after_seconds) {
    it->second = Entry{};
  }
  if (it == entries_.end()) {
    if (entries_.size() >= options_.max_entries) EvictOne(now);
    it = entries_.emplace(std::string(key), Entry{}).first;
  }
  Entry& e = it->second;
  ++e.failures;
  e.last_failure = now;
  int over = e.failures - options_.free_failures;
  if (over <= 0) return;
  int64_t backoff = options_.base_backoff_seconds;
  for (int i = 1; i < over && backoff < options_.max_backoff_seconds; ++i) backoff *= 2;
  e.blocked_until = now + std::min(backoff, options_.max_backoff_seconds);
}

void SignInLimiter::Reset(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(std::string(key));
}

size_t SignInLimiter::SizeForTest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void SignInLimiter::EvictOne(int64_t now) {
  // Forgotten entries first; else the one failing longest ago. O(n) per eviction, at most one
  // per failed sign-in, which already costs a password hash.
  auto oldest = entries_.begin();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (now - it->second.last_failure >= options_.forget_after_seconds) {
      entries_.erase(it);
      return;
    }
    if (it->second.last_failure < oldest->second.last_failure) oldest = it;
  }
  if (oldest != entries_.end()) entries_.erase(oldest);
}

namespace {

// "https://a.example:8443" -> "a.example:8443"; empty when it is not an http(s) origin.
std::string_view OriginHost(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.starts_with(scheme)) return origin.substr(scheme.size());
  }
  return {};
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

Status CheckCsrf(const CsrfCheck& check) {
  if (check.session_token.empty() || !ConstantTimeEqual(check.header_token, check.session_token)) {
    return PermissionDeniedError("missing or wrong X-CSRF-Token header (returned at sign-in)");
  }
  return CheckSameOrigin(check);
}

Status CheckSameOrigin(const CsrfCheck& check) {
  if (!check.sec_fetch_site.empty() && !EqualsIgnoreCase(check.sec_fetch_site, "same-origin")) {
    return PermissionDeniedError("cross-site request refused (Sec-Fetch-Site)");
  }
  if (!check.origin.empty()) {
    bool same_host = !check.host.empty() && EqualsIgnoreCase(OriginHost(check.origin), check.host);
    bool public_origin =
        !check.public_origin.empty() && EqualsIgnoreCase(check.origin, check.public_origin);
    if (!same_host && !public_origin) {
      return PermissionDeniedError("cross-origin request refused (Origin)");
    }
  }
  return OkStatus();
}

}  // namespace adserver::admin
