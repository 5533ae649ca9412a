#pragma once

// The PostgreSQL adapter (cluster mode, issue 17): the store interfaces that PostgreSQL holds
// for every node of a cluster. So far the inventory and the accounts (AccountStore)
// (InventoryStore, the SQL shared with the SQLite adapter in store/sql; every write bumps the
// "inventory" change version and notifies, store/postgres/pg_change_feed.h), the decision counters
// (CampaignCounterStore) and the identity erasure list (IdentityStore); the other interfaces
// follow. Thread-safe: one connection behind a mutex (these calls run on background and admin
// threads, never on an event loop). A lost connection answers Unavailable and is re-established by
// the next call.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/account_store.h"
#include "store/campaign_counter_store.h"
#include "store/identity_store.h"
#include "store/inventory_store.h"
#include "store/node_counters_store.h"
#include "store/sql/sql.h"
#include "store/sql/sql_accounts.h"
#include "store/sql/sql_inventory.h"

namespace adserver::store {

namespace pg_detail {
class PgRunner;
enum class CountersWrite : uint8_t;
}

class PostgresStore final : public sql::SqlInventory,
                            public sql::SqlAccounts,
                            public CampaignCounterStore,
                            public NodeCountersStore,
                            public IdentityStore {
 public:
  // Connects to `url` (postgresql://user@host:port/db or libpq's key=value form) and applies
  // the schema migrations. Unavailable if the server cannot be reached.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url);
  ~PostgresStore() override;

  // InventoryStore (sql::SqlInventory: every write bumps the "inventory" change version, which
  // ChangeCounter answers) and AccountStore (sql::SqlAccounts).

  // CampaignCounterStore: rows upserted in one transaction. After SetNodeId, this node's rows of
  // node_campaign_counters (each node of a cluster counts what it served and billed; the
  // cluster's counters are the sum over nodes).
  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override;
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override;
  // Cluster mode (issue 37 item 3): the node's rows and its marks (node_counter_marks) in one
  // transaction; nullopt deletes the marks. Without a node id: Internal.
  Status SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                const std::optional<CounterMarks>& marks) override;
  Result<std::optional<CounterMarks>> LoadCounterMarks() override;
  // Issue 37 item 3: for every other node whose counters were last saved more than
  // `dead_seconds` ago (by PostgreSQL's clock), adds what it billed and undid past its marks
  // to its rows and moves its marks past them, in one transaction; one node of the cluster at
  // a time (an advisory lock), the others skip. A node that was not dead after all overwrites
  // its rows and marks with its own at its next flush, which hold the same events.
  Result<DeadNodesReconciled> ReconcileDeadNodes(int64_t dead_seconds) override;
  // Cluster mode: Save/LoadCampaignCounters read and write the rows of `node_id` only. Call
  // before any other use.
  void SetNodeId(std::string node_id) { node_id_ = std::move(node_id); }
  // Every other node's counters summed per campaign; their day and hour spend only where a
  // node's row is of day `day` and hour `hour` (an older row's spend is of a period that is
  // over). Empty without SetNodeId.
  Result<std::vector<CampaignCountersRecord>> LoadOtherNodesCounters(int64_t day,
                                                                     int64_t hour) override;
  // Adds `deltas` to this node's rows (after SetNodeId) in one transaction, for writers that
  // share one node id and so cannot overwrite it (the CLI's conversions): counts and total spend
  // add; day and hour spend add within the row's period, start over in a newer one, and leave
  // the row's alone for an older one. A delta may be negative (a conversion a reorg reverted).
  Status AddCampaignCounters(const std::vector<CampaignCountersRecord>& deltas);
  // Delivers the budget takes queued with billed conversions (budget_takes, written by
  // PostgresEventsStore::BillConversionsTo), oldest first, at most `limit` rows: their sum per
  // campaign goes to `apply(campaign, micros)` (negative: to give back), and the rows of every
  // campaign it accepted are deleted, all in one transaction that holds the rows (FOR UPDATE
  // SKIP LOCKED: concurrent drainers deliver distinct rows). Stops at the first campaign
  // `apply` refuses and returns its status, after deleting what was delivered before it. A
  // crash after `apply` and before the commit delivers the rows again: a budget may then look
  // more spent than it is, never less. Returns the rows delivered.
  Result<size_t> DrainBudgetTakes(const std::function<Status(Id campaign, Micros micros)>& apply,
                                  int limit = 1000) override;

  // IdentityStore. Erasures are written under a transaction-scoped advisory lock, so sequence
  // numbers commit in order and a node following the list (ScanErasures after the last seq it
  // saw) never skips one that commits late.
  Result<ErasureDigestKey> DigestKey(const ErasureDigestKey& candidate) override;
  Result<ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) override;
  Status ScanErasures(int64_t after_seq,
                      const std::function<void(const ErasureRecord&)>& fn) override;
  Result<int64_t> DeleteErasuresBefore(int64_t cutoff) override;

 private:
  explicit PostgresStore(std::unique_ptr<pg_detail::PgRunner> runner);
  // This node's rows of node_campaign_counters upserted in one transaction.
  Status UpsertNodeCounters(const std::vector<CampaignCountersRecord>& rows,
                            pg_detail::CountersWrite how);

  std::unique_ptr<pg_detail::PgRunner> runner_;  // the transactions of the SQL above and below
  std::string node_id_;  // "" = the single campaign_counters table
};

}  // namespace adserver::store
