#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/activity_store.h"
#include "store/campaign_counter_store.h"
#include "store/records.h"
#include "store/sql/sql_inventory.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class PooledRunner;
}  // namespace sqlite_detail

// The embedded system of record on one SQLite file (WAL mode, foreign keys on,
// synchronous=NORMAL): the inventory (sql::SqlInventory), the decision counters and wallet
// activity as SQLite kept it before the LMDB index (read once to migrate it, and by tests).
// Thread-safe.
//
// Writes go through one connection guarded by a mutex, each in a BEGIN IMMEDIATE transaction
// that also bumps a change counter in the `meta` table; reads use a small pool of separate
// connections, so they see every committed write and never wait behind one
// (sqlite_detail::PooledRunner). Several processes (the server and the CLI) may open the same
// file at once: the busy timeout serialises their writes and the counters let each notice the
// others' commits.
//
// Open(":memory:") works for throwaway use; then reads share the write connection, and a
// ScanActivity callback must not call back into the store.
class SqliteStore final : public sql::SqlInventory,
                          public ActivityStore,
                          public CampaignCounterStore {
 public:
  // Opens (creating it if allowed) the database at `path` and applies pending migrations.
  // Unavailable if the file cannot be opened or stays locked beyond options.busy_timeout;
  // Internal if the schema is newer than this binary knows or a migration fails.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   const SqliteOptions& options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // InventoryStore: sql::SqlInventory. Its ChangeCounter is the `catalog_version` counter:
  // bumped by every committed write to publishers, keys, communities, projects, campaigns or
  // ads, from any connection or process.

  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  // `fn` runs on the calling thread while a read transaction is open; it may call other
  // methods of this store (except with ":memory:").
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;
  // The `activity_version` counter: bumped by RecordActivity and DeleteProject.
  Result<uint64_t> ActivityChangeCounter() override;

  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override;
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override;
  Status SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                const std::optional<CounterMarks>& marks) override;
  Result<std::optional<CounterMarks>> LoadCounterMarks() override;

 private:
  explicit SqliteStore(std::unique_ptr<sqlite_detail::PooledRunner> runner);

  std::unique_ptr<sqlite_detail::PooledRunner> runner_;  // the transactions of every method
};

}  // namespace adserver::store
