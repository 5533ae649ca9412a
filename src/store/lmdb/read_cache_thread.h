#pragma once

// Keeps the serving read cache of the LMDB wallet index current (wallet_read_cache.h): every
// poll interval it reads the change log, and rebuilds the wallet table when it is missing or
// stale. One background thread; lookups never wait for it.

#include <atomic>
#include <chrono>
#include <thread>

#include "common/mutex.h"
#include "store/lmdb/wallet_read_cache.h"

namespace adserver::store {

class ReadCacheThread {
 public:
  // `cache` (enabled) must outlive this object.
  ReadCacheThread(WalletReadCache& cache, std::chrono::milliseconds poll_interval);
  ~ReadCacheThread();
  ReadCacheThread(const ReadCacheThread&) = delete;
  ReadCacheThread& operator=(const ReadCacheThread&) = delete;

  void Start();
  // Unix seconds since which the current wallet table has been in use (0: none yet), and the
  // rebuilds done. Any thread.
  int64_t table_since() const { return table_since_.load(std::memory_order_relaxed); }
  uint64_t rebuilds() const { return rebuilds_.load(std::memory_order_relaxed); }
  // Stops the thread (a table build in progress is abandoned) and joins it. Idempotent.
  void Stop();

 private:
  void Run();

  WalletReadCache& cache_;
  const std::chrono::milliseconds poll_interval_;
  Mutex mu_;
  CondVar cv_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> table_since_{0};
  std::atomic<uint64_t> rebuilds_{0};
  uint64_t table_txn_ = 0;  // the thread's
  std::thread thread_;
};

}  // namespace adserver::store
