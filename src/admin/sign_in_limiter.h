#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/mutex.h"

namespace adserver::admin {

struct SignInLimiterOptions {
  // Failed attempts per key allowed without waiting: after that many, the next attempt waits
  // base_backoff_seconds (the docs' "after 5 failed attempts").
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
  // Makes room for one more entry.
  void EvictOne(int64_t now) ADS_REQUIRES(mu_);

  const Clock& clock_;
  const SignInLimiterOptions options_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::admin
