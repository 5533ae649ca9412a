#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "identity/identity_graph.h"
#include "identity/key_ring.h"
#include "identity/options.h"
#include "store/identity_store.h"

namespace adserver::identity {

// Owns the in-memory identity graph and keeps it in step with an IdentityStore.
//
// Reads never touch the store: every live identity is loaded into memory at start (Load), so
// a lookup that misses in memory is a definite "unknown" and the event loop never waits. Writes
// go to memory and are written behind in batches by a background thread every
// `flush_interval`; Stop() writes the last batch (SIGTERM loses nothing). The same thread runs
// the retention sweep every `sweep_interval`. Thread-safe.
class IdentityService {
 public:
  // Parses the key ring (a random one when options.keys is empty). `store` (may be null: memory
  // only) and `clock` must outlive the service.
  static Result<std::unique_ptr<IdentityService>> Create(store::IdentityStore* store,
                                                         const Clock& clock,
                                                         const IdentityOptions& options);
  ~IdentityService();

  // Loads every identity seen within the retention period from the store.
  Status Load();
  // Starts the flush/sweep thread.
  void Start();
  // Stops the thread and flushes what is pending. Idempotent.
  void Stop();
  // Writes pending changes now. On failure they stay pending and are retried.
  Status Flush();
  // Applies retention now, in memory and in the store. Returns identities deleted in the store.
  Result<int64_t> Sweep();

  // Serving path (any thread, never blocks on I/O).
  const KeyRing& keys() const { return keys_; }
  const IdentityOptions& options() const { return options_; }
  IdentityGraph& graph() { return graph_; }
  // A fresh random 128-bit identity key.
  static store::IdentityKey NewKey();

  // Admin (worker threads): what is stored for `wallet` (pending changes flushed first), and
  // erasure of every link of it, in memory and in the store.
  Result<std::vector<store::IdentityRecord>> ForWallet(const Address& wallet);
  Result<int64_t> EraseWallet(const Address& wallet);

 private:
  IdentityService(store::IdentityStore* store, const Clock& clock, const IdentityOptions& options,
                  KeyRing keys);
  Status FlushLocked();  // requires flush_mu_
  void Run();

  store::IdentityStore* const store_;
  const Clock& clock_;
  const IdentityOptions options_;
  const KeyRing keys_;
  IdentityGraph graph_;

  // Serialises flushes, sweeps and erasures so that a batch taken before an erasure is never
  // written after it.
  std::mutex flush_mu_;
  std::vector<store::IdentityRecord> pending_;  // guarded by flush_mu_; failed batches

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by thread_mu_
  std::thread thread_;
};

}  // namespace adserver::identity
