#pragma once

// Keeps the serving read cache of the LMDB wallet index current (LmdbActivityIndex's
// EnableReadCache): every poll interval it reads the change log, and rebuilds the wallet table
// when it is missing or stale. One background thread; lookups never wait for it.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/lmdb/lmdb_activity_index.h"

namespace adserver::app {

class ReadCacheThread {
 public:
  // `index` must outlive this object.
  ReadCacheThread(store::LmdbActivityIndex& index, std::chrono::milliseconds poll_interval);
  ~ReadCacheThread();
  ReadCacheThread(const ReadCacheThread&) = delete;
  ReadCacheThread& operator=(const ReadCacheThread&) = delete;

  void Start();
  // Stops the thread (a table build in progress is abandoned) and joins it. Idempotent.
  void Stop();

 private:
  void Run();

  store::LmdbActivityIndex& index_;
  const std::chrono::milliseconds poll_interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace adserver::app
