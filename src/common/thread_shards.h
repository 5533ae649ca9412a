#pragma once

// One `Shard` per thread that uses an owner object (serving counters, exposure buffers): each
// thread writes its own shard, so only a reader sweeping all of them (once per flush) ever
// contends for a shard's lock. A thread finds its shard through a thread-local cache keyed by
// a per-object number that is never reused, so a destroyed owner's entries are never matched.
// Shards live as long as the owner. Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace adserver {

template <typename Shard>
class ThreadShards {
 public:
  ThreadShards() : instance_(NextInstance()) {}
  ThreadShards(const ThreadShards&) = delete;
  ThreadShards& operator=(const ThreadShards&) = delete;

  // The calling thread's shard, made on its first call.
  Shard& Local() {
    thread_local std::vector<std::pair<uint64_t, Shard*>> cache;
    for (const auto& [instance, shard] : cache) {
      if (instance == instance_) return *shard;
    }
    MutexLock lock(mu_);
    shards_.push_back(std::make_unique<Shard>());
    cache.emplace_back(instance_, shards_.back().get());
    return *shards_.back();
  }

  // Every shard made so far (a snapshot; shards made later are not included).
  std::vector<Shard*> All() {
    MutexLock lock(mu_);
    std::vector<Shard*> out;
    out.reserve(shards_.size());
    for (auto& shard : shards_) out.push_back(shard.get());
    return out;
  }

 private:
  static uint64_t NextInstance() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  const uint64_t instance_;
  Mutex mu_;
  std::vector<std::unique_ptr<Shard>> shards_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver
