#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "common/crypto.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/status.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "store/activity_store.h"
#include "store/inventory_store.h"

namespace adserver::ingest {

struct SnapshotOptions {
  // How often the store's change counters are polled (changes made by other processes on the
  // same data directory, e.g. the CLI, become visible within this interval plus build time).
  std::chrono::milliseconds poll_interval{200};
  decision::CatalogOptions catalog;
  // False when the published activity index reads its store live (LMDB): then activity changes
  // need no rebuild and the publisher never replaces the index.
  bool rebuild_activity = true;
  // `serve` answers wallet lookups from a wallet table derived from the LMDB index
  // (activity.lmdb/wallets.table, ~13 bytes per (wallet, project) pair on disk and in the page
  // cache; a 50-wallet lookup ~10x faster). False: every lookup reads LMDB, no table is built.
  bool wallet_table = true;
  // The wallet table is served from a copy in anonymous memory (2 MiB pages advised; its file
  // size in RSS, loaded in the background after start or rebuild) rather than from the file's
  // mapping: random lookups are faster and never wait for the disk. False: the mapping.
  bool wallet_table_in_memory = true;
};

// Keeps the published catalog and activity index in step with the store. A background thread
// polls the store's change counters and rebuilds whatever changed; NotifyChanged() asks for an
// immediate check (the admin API calls it after each write). Thread-safe.
class SnapshotPublisher {
 public:
  // The inventory (the catalog and its change counter) and the wallet activity (the index and
  // its change counter) it reads, `catalogs` and `activity` must outlive this object.
  SnapshotPublisher(store::InventoryStore& inventory, store::ActivityStore& wallets,
                    Published<decision::Catalog>& catalogs,
                    Published<decision::ActivityIndex>& activity, const SnapshotOptions& options);
  ~SnapshotPublisher();

  // Builds and publishes both snapshots synchronously (startup). Returns the store's error.
  Status LoadNow();
  // Starts the polling thread. Call after LoadNow().
  void Start();
  // Wakes the polling thread to check now; returns without waiting.
  void NotifyChanged();
  // Rebuilds whatever changed and returns once it is published (used by admin writes so a
  // change is visible to serving when the admin call returns). Once started, the build runs on
  // the publisher's own thread (background priority, so a catalog build does not take the
  // event loops' CPU; one thread's allocator arena instead of one per admin worker) while the
  // caller waits; callers that ask while a build is queued share the next one.
  Status RefreshNow();
  // Stops and joins the thread. Idempotent.
  void Stop();
  // How long the last catalog / activity index took to build, and when the last catalog was
  // published (Unix seconds; 0 before). Any thread.
  int64_t catalog_build_ms() const { return catalog_build_ms_.load(std::memory_order_relaxed); }
  int64_t activity_build_ms() const { return activity_build_ms_.load(std::memory_order_relaxed); }
  int64_t catalog_published_at() const {
    return catalog_published_at_.load(std::memory_order_relaxed);
  }
  // Called (under the refresh lock) whenever the activity change counter moved and the
  // activity index is not rebuilt (rebuild_activity = false): serving's read cache of the LMDB
  // index catches up there, so an admin write is visible when the call returns. Set before
  // Start().
  void SetActivityRefresh(std::function<Status()> refresh) {
    activity_refresh_ = std::move(refresh);
  }

 private:
  void Run();
  Status RefreshLocked() ADS_REQUIRES(refresh_mu_);
  // Loads catalog data and publishes a new catalog if the data differs from the last one
  // published (or `force`).
  Status RebuildCatalogLocked(uint64_t counter, bool force) ADS_REQUIRES(refresh_mu_);
  Status RebuildActivityLocked(uint64_t counter) ADS_REQUIRES(refresh_mu_);

  store::InventoryStore& inventory_;
  store::ActivityStore& wallets_;
  Published<decision::Catalog>& catalogs_;
  Published<decision::ActivityIndex>& activity_;
  SnapshotOptions options_;
  std::function<Status()> activity_refresh_;
  std::atomic<int64_t> catalog_build_ms_{0};
  std::atomic<int64_t> activity_build_ms_{0};
  std::atomic<int64_t> catalog_published_at_{0};
  Mutex refresh_mu_;  // serialises rebuilds
  uint64_t catalog_counter_ ADS_GUARDED_BY(refresh_mu_) = UINT64_MAX;
  uint64_t activity_counter_ ADS_GUARDED_BY(refresh_mu_) = UINT64_MAX;
  // Digest of the CatalogData behind the published catalog. The Store contract lets
  // ChangeCounter move on any commit, activity included; when the data hashes the same, no new
  // catalog is published.
  std::optional<Sha256Digest> catalog_digest_ ADS_GUARDED_BY(refresh_mu_);
  Mutex mu_;
  CondVar cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  bool wake_ ADS_GUARDED_BY(mu_) = false;
  bool running_ ADS_GUARDED_BY(mu_) = false;       // Start ran, Stop has not finished
  std::thread::id thread_id_ ADS_GUARDED_BY(mu_);  // the publisher's thread
  uint64_t requested_ ADS_GUARDED_BY(mu_) = 0;     // RefreshNow requests so far
  uint64_t completed_ ADS_GUARDED_BY(mu_) = 0;     // requests covered by a finished refresh
  Status last_status_ ADS_GUARDED_BY(mu_);         // that refresh's result
  CondVar done_cv_;
  std::thread thread_;
};

}  // namespace adserver::ingest
