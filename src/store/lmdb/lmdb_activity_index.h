#pragma once

// Memory-mapped wallet activity index (LMDB): the system of record for wallet activity and the
// index serving reads. Key = the 20-byte wallet, value = its interactions
// (detail/activity_codec.h).

#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "decision/activity_index.h"
#include "store/records.h"

namespace adserver::store {

struct LmdbOptions {
  // Upper bound of the memory map (virtual address space, not disk: the file grows as needed).
  uint64_t map_size_bytes = uint64_t{1} << 40;
  // Wallets written per write transaction by Record (bounds the writer's dirty pages).
  size_t wallets_per_commit = 50'000;
  // Skip fsync at commit (bulk loads, benchmarks); a crash may lose the last commits.
  bool no_sync = false;
};

// The LMDB activity index. Thread-safe. Readers (LookupAll, Lookup) never lock or wait: each
// thread keeps one read-only transaction that is renewed for each lookup batch and reset after
// it, so every batch sees the latest commit of any process and never pins old pages for long.
// Values are decoded straight from the mapped pages into a per-thread buffer (no read(), no
// allocation once warm). Writers are serialised by LMDB's own lock (also across processes).
class LmdbActivityIndex final : public decision::ActivityIndex {
 public:
  // Opens (creating) the environment in directory `dir`. Unavailable if it cannot.
  static Result<std::shared_ptr<LmdbActivityIndex>> Open(const std::string& dir,
                                                         const LmdbOptions& options = {});
  ~LmdbActivityIndex() override;
  LmdbActivityIndex(const LmdbActivityIndex&) = delete;
  LmdbActivityIndex& operator=(const LmdbActivityIndex&) = delete;

  std::span<const decision::Interaction> Lookup(const Address& wallet) const override;
  void LookupAll(std::span<const Address> wallets, const Sink& sink) const override;
  // Number of wallets (reads the B-tree header).
  size_t wallet_count() const override;

  // Upserts rows: per (wallet, project, chain) last-seen day = max, count = sum. Commits every
  // `wallets_per_commit` wallets. Rows with a non-positive project or chain id are
  // InvalidArgument (nothing written).
  Status Record(const std::vector<ActivityRecord>& rows);
  // Loads wallets in strictly increasing byte order into an EMPTY index with MDB_APPEND
  // (fully packed pages). `next` fills the next wallet and its interactions and returns false
  // at the end. Conflict if the index is not empty or the order is violated.
  Status LoadSorted(const std::function<bool(Address&, std::vector<decision::Interaction>&)>& next);

  Result<std::vector<ActivityRecord>> ForWallet(const Address& wallet) const;
  Status Scan(const std::function<void(const ActivityRecord&)>& fn) const;
  // The id of the last committed write transaction (any process). Cheap.
  uint64_t ChangeCounter() const;

  struct Stats {
    uint64_t wallets = 0;
    uint64_t pages = 0;  // B-tree pages in use (branch + leaf + overflow)
    uint64_t page_size = 0;
    uint64_t file_bytes = 0;  // data.mdb size on disk
  };
  Result<Stats> GetStats() const;

 private:
  struct ThreadReader;
  LmdbActivityIndex(MDB_env* env, MDB_dbi dbi, const LmdbOptions& options);
  // This thread's reader for this index, created on first use.
  ThreadReader& Reader() const;
  Status WriteWallets(MDB_txn* txn, const std::vector<ActivityRecord>& sorted, size_t begin,
                      size_t end);

  MDB_env* env_;
  MDB_dbi dbi_;
  LmdbOptions options_;
  uint64_t id_;  // distinguishes instances in the per-thread reader cache
  std::string path_;
  mutable std::mutex readers_mu_;
  mutable std::vector<std::unique_ptr<ThreadReader>> readers_;  // guarded by readers_mu_
};

}  // namespace adserver::store
