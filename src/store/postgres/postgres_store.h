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

#include "common/mutex.h"
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
class PgConnection;
enum class CountersWrite : uint8_t;
}

class PostgresStore final : public InventoryStore,
                            public AccountStore,
                            public CampaignCounterStore,
                            public NodeCountersStore,
                            public IdentityStore {
 public:
  // Connects to `url` (postgresql://user@host:port/db or libpq's key=value form) and applies
  // the schema migrations. Unavailable if the server cannot be reached.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url);
  ~PostgresStore() override;

  // InventoryStore (store/sql/sql_inventory.h).
  Result<PublisherRecord> CreatePublisher(const PublisherRecord& p, int64_t now) override {
    return inventory_.CreatePublisher(p, now);
  }
  Result<PublisherRecord> GetPublisher(Id id) override { return inventory_.GetPublisher(id); }
  Result<std::vector<PublisherRecord>> ListPublishers() override {
    return inventory_.ListPublishers();
  }
  Result<PublisherRecord> UpdatePublisher(const PublisherRecord& p, int64_t now) override {
    return inventory_.UpdatePublisher(p, now);
  }
  Status DeletePublisher(Id id) override { return inventory_.DeletePublisher(id); }
  Result<ApiKeyRecord> CreateApiKey(const ApiKeyRecord& k, int64_t now) override {
    return inventory_.CreateApiKey(k, now);
  }
  Result<std::vector<ApiKeyRecord>> ListApiKeys(Id publisher_id) override {
    return inventory_.ListApiKeys(publisher_id);
  }
  Result<ApiKeyRecord> RevokeApiKey(Id publisher_id, Id key_id, int64_t now) override {
    return inventory_.RevokeApiKey(publisher_id, key_id, now);
  }
  Result<AdvertiserKeyRecord> CreateAdvertiserKey(const AdvertiserKeyRecord& k,
                                                  int64_t now) override {
    return inventory_.CreateAdvertiserKey(k, now);
  }
  Result<std::vector<AdvertiserKeyRecord>> ListAdvertiserKeys(Id community_id) override {
    return inventory_.ListAdvertiserKeys(community_id);
  }
  Result<AdvertiserKeyRecord> RevokeAdvertiserKey(Id community_id, Id key_id,
                                                  int64_t now) override {
    return inventory_.RevokeAdvertiserKey(community_id, key_id, now);
  }
  Result<CommunityRecord> CreateCommunity(const CommunityRecord& c, int64_t now) override {
    return inventory_.CreateCommunity(c, now);
  }
  Result<CommunityRecord> GetCommunity(Id id) override { return inventory_.GetCommunity(id); }
  Result<std::vector<CommunityRecord>> ListCommunities() override {
    return inventory_.ListCommunities();
  }
  Result<CommunityRecord> UpdateCommunity(const CommunityRecord& c, int64_t now) override {
    return inventory_.UpdateCommunity(c, now);
  }
  Status DeleteCommunity(Id id) override { return inventory_.DeleteCommunity(id); }
  Result<ProjectRecord> CreateProject(const ProjectRecord& p, int64_t now) override {
    return inventory_.CreateProject(p, now);
  }
  Result<ProjectRecord> GetProject(Id id) override { return inventory_.GetProject(id); }
  Result<ProjectRecord> GetProjectBySlug(const std::string& slug) override {
    return inventory_.GetProjectBySlug(slug);
  }
  Result<std::vector<ProjectRecord>> ListProjects() override { return inventory_.ListProjects(); }
  Result<ProjectRecord> UpdateProject(const ProjectRecord& p, int64_t now) override {
    return inventory_.UpdateProject(p, now);
  }
  Status DeleteProject(Id id) override { return inventory_.DeleteProject(id); }
  Result<OwnershipRequestRecord> RequestOwnership(const OwnershipRequestRecord& r,
                                                  int64_t now) override {
    return inventory_.RequestOwnership(r, now);
  }
  Result<std::vector<OwnershipRequestRecord>> ListOwnershipRequests(
      std::optional<Id> community_id) override {
    return inventory_.ListOwnershipRequests(community_id);
  }
  Status DeleteOwnershipRequest(Id project_id, Id community_id) override {
    return inventory_.DeleteOwnershipRequest(project_id, community_id);
  }
  Result<CampaignRecord> CreateCampaign(const CampaignRecord& c, int64_t now) override {
    return inventory_.CreateCampaign(c, now);
  }
  Result<CampaignRecord> GetCampaign(Id id) override { return inventory_.GetCampaign(id); }
  Result<std::vector<CampaignRecord>> ListCampaigns() override {
    return inventory_.ListCampaigns();
  }
  Result<CampaignRecord> UpdateCampaign(const CampaignRecord& c, int64_t now) override {
    return inventory_.UpdateCampaign(c, now);
  }
  Status DeleteCampaign(Id id) override { return inventory_.DeleteCampaign(id); }
  Result<AdRecord> CreateAd(const AdRecord& a, int64_t now) override {
    return inventory_.CreateAd(a, now);
  }
  Result<AdRecord> GetAd(Id id) override { return inventory_.GetAd(id); }
  Result<std::vector<AdRecord>> ListAds(std::optional<Id> campaign_id) override {
    return inventory_.ListAds(campaign_id);
  }
  Result<AdRecord> UpdateAd(const AdRecord& a, int64_t now) override {
    return inventory_.UpdateAd(a, now);
  }
  Status DeleteAd(Id id) override { return inventory_.DeleteAd(id); }
  Result<CatalogData> LoadCatalogData() override { return inventory_.LoadCatalogData(); }
  // The "inventory" change version: moved by every committed inventory write of any node.
  Result<uint64_t> ChangeCounter() override;

  // AccountStore (store/sql/sql_accounts.h).
  Result<UserRecord> CreateUser(const UserRecord& user, int64_t now) override {
    return accounts_.CreateUser(user, now);
  }
  Result<UserRecord> GetUser(Id id) override { return accounts_.GetUser(id); }
  Result<UserRecord> GetUserByEmail(std::string_view email) override {
    return accounts_.GetUserByEmail(email);
  }
  Result<std::vector<UserRecord>> ListUsers() override { return accounts_.ListUsers(); }
  Result<UserRecord> UpdateUser(const UserRecord& user, int64_t now) override {
    return accounts_.UpdateUser(user, now);
  }
  Status DeleteUser(Id id) override { return accounts_.DeleteUser(id); }
  Result<bool> HasUsers() override { return accounts_.HasUsers(); }
  Result<UserTokenRecord> CreateToken(const UserTokenRecord& token, int64_t now,
                                      int max_active) override {
    return accounts_.CreateToken(token, now, max_active);
  }
  Result<std::vector<UserTokenRecord>> FindTokensByPrefix(std::string_view prefix) override {
    return accounts_.FindTokensByPrefix(prefix);
  }
  Result<std::vector<UserTokenRecord>> ListTokens(std::optional<Id> user_id) override {
    return accounts_.ListTokens(user_id);
  }
  Result<UserTokenRecord> GetToken(Id id) override { return accounts_.GetToken(id); }
  Result<UserTokenRecord> RevokeToken(Id id, int64_t now) override {
    return accounts_.RevokeToken(id, now);
  }
  Result<int64_t> RevokeUserTokens(Id user_id, int64_t now) override {
    return accounts_.RevokeUserTokens(user_id, now);
  }
  Status CreateSession(const SessionRecord& session, int max_per_user) override {
    return accounts_.CreateSession(session, max_per_user);
  }
  Result<SessionRecord> GetSession(const Sha256Digest& id_hash) override {
    return accounts_.GetSession(id_hash);
  }
  Status TouchSession(const Sha256Digest& id_hash, int64_t now) override {
    return accounts_.TouchSession(id_hash, now);
  }
  Status DeleteSession(const Sha256Digest& id_hash) override {
    return accounts_.DeleteSession(id_hash);
  }
  Result<int64_t> DeleteUserSessions(Id user_id, std::optional<Sha256Digest> keep) override {
    return accounts_.DeleteUserSessions(user_id, std::move(keep));
  }
  Result<int64_t> DeleteExpiredSessions(int64_t now, int64_t idle_before) override {
    return accounts_.DeleteExpiredSessions(now, idle_before);
  }

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
  class SqlRunner final : public sql::Runner {
   public:
    explicit SqlRunner(PostgresStore& store) : store_(store) {}
    Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
    Status Read(const std::function<Status(sql::Connection&)>& fn) override;

   private:
    PostgresStore& store_;
  };

  explicit PostgresStore(std::unique_ptr<pg_detail::PgConnection> conn);
  // This node's rows of node_campaign_counters upserted in one transaction.
  Status UpsertNodeCounters(const std::vector<CampaignCountersRecord>& rows,
                            pg_detail::CountersWrite how);

  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
  SqlRunner runner_;
  sql::SqlInventory inventory_;
  sql::SqlAccounts accounts_;
  std::string node_id_;  // "" = the single campaign_counters table
};

}  // namespace adserver::store
