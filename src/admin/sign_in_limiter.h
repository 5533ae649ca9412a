#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"

namespace adserver::admin {

struct SignInLimiterOptions {
  // Failed attempts per key (email or client IP) before back-off starts.
  int free_failures = 5;
  // First back-off; each further failure doubles it, up to max_backoff_seconds.
  int64_t base_backoff_seconds = 1;
  int64_t max_backoff_seconds = 15 * 60;
  // A key's failures are forgotten this long after its last failure.
  int64_t forget_after_seconds = 60 * 60;
  // Most keys remembered; beyond it the key with the oldest last failure is dropped, so no
  // client can grow the table without bound.
  size_t max_entries = 10'000;
};

// Back-off for failed sign-ins, per key ("email:x@y", "ip:1.2.3.4"): after `free_failures`
// failures a key is refused until its back-off passes. In memory, bounded by max_entries.
// Thread-safe.
class SignInLimiter {
 public:
  // clock must outlive this object.
  SignInLimiter(const Clock& clock, SignInLimiterOptions options);

  // Seconds until `key` may try again; 0 = now.
  int64_t RetryAfter(std::string_view key) const;
  // Records a failed attempt of `key`.
  void RecordFailure(std::string_view key);
  // Forgets `key` (a successful sign-in).
  void Reset(std::string_view key);
  size_t SizeForTest() const;

 private:
  struct Entry {
    int failures = 0;
    int64_t last_failure = 0;
    int64_t blocked_until = 0;
  };
  // REQUIRES: mu_ held. Makes room for one more entry.
  void EvictOne(int64_t now);

  const Clock& clock_;
  const SignInLimiterOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // guarded by mu_
};

// Cross-site request checks for a write authenticated by the session cookie (issue 16).
struct CsrfCheck {
  std::string_view header_token;    // X-CSRF-Token as sent
  std::string_view session_token;   // the token bound to the session
  std::string_view origin;          // Origin header, may be empty
  std::string_view sec_fetch_site;  // Sec-Fetch-Site header, may be empty
  std::string_view host;            // Host header
  std::string_view public_origin;   // scheme://host[:port] of http.public_url, may be empty
};
// OK when the CSRF header matches the session's token (constant time) and, when present,
// Origin names this server (the Host it was sent to, or the public URL) and Sec-Fetch-Site is
// same-origin; else PermissionDenied saying which.
Status CheckCsrf(const CsrfCheck& check);
// The Origin and Sec-Fetch-Site part of CheckCsrf alone (for the sign-in itself, which has no
// token yet).
Status CheckSameOrigin(const CsrfCheck& check);

}  // namespace adserver::admin
