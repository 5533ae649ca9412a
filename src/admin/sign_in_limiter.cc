#include "admin/sign_in_limiter.h"

#include <algorithm>

#include "common/mutex.h"

namespace adserver::admin {

SignInLimiter::SignInLimiter(const Clock& clock, SignInLimiterOptions options)
    : clock_(clock), options_(options) {}

int64_t SignInLimiter::RetryAfter(std::string_view key) const {
  int64_t now = clock_.NowSeconds();
  MutexLock lock(mu_);
  auto it = entries_.find(std::string(key));
  if (it == entries_.end()) return 0;
  return std::max<int64_t>(0, it->second.blocked_until - now);
}

void SignInLimiter::RecordFailure(std::string_view key) {
  int64_t now = clock_.NowSeconds();
  MutexLock lock(mu_);
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
  int over = e.failures - options_.free_failures + 1;
  if (over <= 0) return;
  int64_t backoff = options_.base_backoff_seconds;
  for (int i = 1; i < over && backoff < options_.max_backoff_seconds; ++i) backoff *= 2;
  e.blocked_until = now + std::min(backoff, options_.max_backoff_seconds);
}

void SignInLimiter::Reset(std::string_view key) {
  MutexLock lock(mu_);
  entries_.erase(std::string(key));
}

size_t SignInLimiter::SizeForTest() const {
  MutexLock lock(mu_);
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

}  // namespace adserver::admin
