#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "common/mutex.h"

namespace adserver {

// Published<T> holds the current immutable T (a catalog, an activity index) and lets many
// reader threads take it without a lock on the common path, while one writer publishes new
// versions. Thread-safe.
//
// Readers call Current(): each thread keeps its own cached pointer and compares a version
// number (one atomic load); only when a new version was published does the thread take the
// mutex once to refresh its cache. Old versions live until the last reader drops them. The
// cache holds a weak_ptr, so a thread that read once and went idle (an admin worker, a
// health probe) does not keep an old version (a catalog, a wallet table of hundreds of MB)
// alive.
template <typename T>
class Published {
 public:
  Published() = default;
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;

  // Makes `value` the current version. Readers see it on their next Current().
  void Publish(std::shared_ptr<const T> value) { Exchange(std::move(value)); }

  // Publish that hands back the version it replaced (null if none), so that a background
  // publisher can let it go on its own thread (ReleaseWhenUnused below).
  std::shared_ptr<const T> Exchange(std::shared_ptr<const T> value) {
    MutexLock lock(mu_);
    std::shared_ptr<const T> old = std::move(value_);
    value_ = std::move(value);
    version_.fetch_add(1, std::memory_order_release);
    return old;
  }

  // The current version (null before the first Publish). The pointer stays valid for as
  // long as the caller holds it.
  std::shared_ptr<const T> Current() const {
    thread_local Cache cache;
    uint64_t v = version_.load(std::memory_order_acquire);
    if (cache.owner == id_ && cache.version == v) {
      // The current version cannot have expired (value_ holds it) unless it is null.
      if (std::shared_ptr<const T> value = cache.value.lock()) return value;
    }
    MutexLock lock(mu_);
    cache.owner = id_;
    cache.version = version_.load(std::memory_order_relaxed);
    cache.value = value_;
    return value_;
  }

  // Version counter: 0 before the first Publish, then incremented by each one.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  struct Cache {
    uint64_t owner = 0;
    uint64_t version = 0;
    std::weak_ptr<const T> value;
  };
  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  // Unique per instance (never reused, unlike an address), keys the thread-local cache.
  const uint64_t id_ = NextId();
  mutable Mutex mu_;
  std::shared_ptr<const T> value_ ADS_GUARDED_BY(mu_);
  std::atomic<uint64_t> version_{0};
};

// Drops `old` (a version Exchange replaced) on the calling thread once nobody else holds it,
// waiting at most `patience` (a serving thread holds a version for one request). Whoever drops
// the last reference frees the version, and freeing a large one (a catalog of 10 k campaigns,
// a wallet table) takes milliseconds that must not land on an event loop that happened to
// hold it last. A holder that keeps it longer than `patience` frees it on its own thread.
template <typename T>
void ReleaseWhenUnused(std::shared_ptr<const T> old, std::chrono::microseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (old.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace adserver
