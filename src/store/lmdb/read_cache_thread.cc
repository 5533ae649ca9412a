#include "store/lmdb/read_cache_thread.h"

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::store {

ReadCacheThread::ReadCacheThread(WalletReadCache& cache, std::chrono::milliseconds poll_interval)
    : cache_(cache), poll_interval_(poll_interval) {}

ReadCacheThread::~ReadCacheThread() { Stop(); }

void ReadCacheThread::Start() {
  if (!thread_.joinable())
    thread_ = std::thread([this] {
      NameThisThread("wallet-table");
      LowerThisThreadPriority();
      Run();
    });
}

void ReadCacheThread::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void ReadCacheThread::Run() {
  while (!stop_.load()) {
    Status status = cache_.Refresh();
    if (status.ok() && cache_.NeedsRebuild()) {
      status = cache_.Rebuild(&stop_);
      if (status.ok()) rebuilds_.fetch_add(1, std::memory_order_relaxed);
    }
    // The table's age: since this thread first saw its transaction.
    ReadCacheStatus table = cache_.GetStatus();
    if (table.table &&
        (table_since_.load(std::memory_order_relaxed) == 0 || table.table_txn != table_txn_)) {
      table_txn_ = table.table_txn;
      table_since_.store(std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count(),
                         std::memory_order_relaxed);
    }
    if (!status.ok() && !stop_.load()) {
      ADS_LOG(warn, "wallet table not updated; lookups read LMDB", "status", status);
    }
    if (Status loaded = cache_.LoadIntoMemory(); !loaded.ok()) {
      ADS_LOG(warn, "wallet table not copied into memory; lookups use its file mapping", "status",
              loaded);
    }
    MutexLock lock(mu_);
    cv_.WaitFor(mu_, poll_interval_, [this]() ADS_REQUIRES(mu_) { return stop_.load(); });
  }
}

}  // namespace adserver::store
