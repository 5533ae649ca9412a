#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "store/records.h"
#include "store/sql/sql.h"
#include "store/sql/sql_inventory.h"
#include "store/sqlite/options.h"
#include "store/store.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

// Store on one SQLite file (WAL mode, foreign keys on, synchronous=NORMAL). Thread-safe.
//
// Writes go through one connection guarded by a mutex, each in a BEGIN IMMEDIATE transaction
// that also bumps a change counter in the `meta` table; reads use a small pool of separate
// connections, so they see every committed write and never wait behind one. Several processes
// (the server and the CLI) may open the same file at once: the busy timeout serialises their
// writes and the counters let each notice the others' commits.
//
// Open(":memory:") works for throwaway use; then reads share the write connection, and a
// ScanActivity callback must not call back into the store.
class SqliteStore final : public Store {
 public:
  // Opens (creating it if allowed) the database at `path` and applies pending migrations.
  // Unavailable if the file cannot be opened or stays locked beyond options.busy_timeout;
  // Internal if the schema is newer than this binary knows or a migration fails.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   const SqliteOptions& options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

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

  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  // `fn` runs on the calling thread while a read transaction is open; it may call other
  // methods of this store (except with ":memory:").
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;

  Result<CatalogData> LoadCatalogData() override { return inventory_.LoadCatalogData(); }

  // The `catalog_version` counter: bumped by every committed write to publishers, keys,
  // communities, projects, campaigns or ads, from any connection or process.
  Result<uint64_t> ChangeCounter() override;
  // The `activity_version` counter: bumped by RecordActivity and DeleteProject.
  Result<uint64_t> ActivityChangeCounter() override;

  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override;
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override;
  Status SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                const std::optional<CounterMarks>& marks) override;
  Result<std::optional<CounterMarks>> LoadCounterMarks() override;

 private:
  using Connection = sqlite_detail::Connection;
  // Which counters a write transaction bumps.
  enum Bump : unsigned { kCatalog = 1, kActivity = 2 };

  SqliteStore(std::string path, const SqliteOptions& options, std::unique_ptr<Connection> writer);

  // The shared inventory code's view of Write and Read.
  class SqlRunner final : public sql::Runner {
   public:
    explicit SqlRunner(SqliteStore& store) : store_(store) {}
    Status Write(unsigned bump, const std::function<Status(sql::Connection&)>& fn) override;
    Status Read(const std::function<Status(sql::Connection&)>& fn) override;

   private:
    SqliteStore& store_;
  };

  // Runs `fn` inside a write transaction on the writer connection, bumps the `bump` counters
  // and commits; rolls back if `fn` (or the commit) fails.
  Status Write(unsigned bump, const std::function<Status(Connection&)>& fn);
  // Runs `fn` inside a read transaction on a pooled read connection.
  Status Read(const std::function<Status(Connection&)>& fn);

  // A read connection from the pool, or a new one. Release() puts it back.
  Result<std::unique_ptr<Connection>> AcquireReader();
  void ReleaseReader(std::unique_ptr<Connection> conn);
  Result<uint64_t> ReadCounter(const char* key);

  const std::string path_;
  const SqliteOptions options_;
  // True for ":memory:": every call uses the writer connection.
  const bool shared_connection_;

  Mutex mu_;
  std::unique_ptr<Connection> writer_ ADS_GUARDED_BY(mu_);

  Mutex readers_mu_;
  std::vector<std::unique_ptr<Connection>> idle_readers_ ADS_GUARDED_BY(readers_mu_);

  SqlRunner runner_;
  sql::SqlInventory inventory_;
};

}  // namespace adserver::store
