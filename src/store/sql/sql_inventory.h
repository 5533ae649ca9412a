#pragma once

// The inventory (publishers, keys, communities, projects, campaigns, ads) in SQL, shared by the
// SQLite and PostgreSQL adapters (store/sql/sql.h): the InventoryStore itself, over the
// transactions and change versions of the adapter's sql::Runner (an adapter derives from it). The
// error contract is InventoryStore's.

#include <optional>
#include <string>
#include <vector>

#include "store/inventory_store.h"
#include "store/records.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlInventory : public InventoryStore {
 public:
  explicit SqlInventory(Runner& runner);

  Result<PublisherRecord> CreatePublisher(const PublisherRecord& p, int64_t now) override;
  Result<PublisherRecord> GetPublisher(Id id) override;
  Result<std::vector<PublisherRecord>> ListPublishers() override;
  Result<PublisherRecord> UpdatePublisher(const PublisherRecord& p, int64_t now) override;
  Status DeletePublisher(Id id) override;
  Result<ApiKeyRecord> CreateApiKey(const ApiKeyRecord& k, int64_t now) override;
  Result<std::vector<ApiKeyRecord>> ListApiKeys(Id publisher_id) override;
  Result<ApiKeyRecord> RevokeApiKey(Id publisher_id, Id key_id, int64_t now) override;
  Result<AdvertiserKeyRecord> CreateAdvertiserKey(const AdvertiserKeyRecord& k,
                                                  int64_t now) override;
  Result<std::vector<AdvertiserKeyRecord>> ListAdvertiserKeys(Id community_id) override;
  Result<AdvertiserKeyRecord> RevokeAdvertiserKey(Id community_id, Id key_id, int64_t now) override;
  Result<CommunityRecord> CreateCommunity(const CommunityRecord& c, int64_t now) override;
  Result<CommunityRecord> GetCommunity(Id id) override;
  Result<std::vector<CommunityRecord>> ListCommunities() override;
  Result<CommunityRecord> UpdateCommunity(const CommunityRecord& c, int64_t now) override;
  Status DeleteCommunity(Id id) override;
  Result<ProjectRecord> CreateProject(const ProjectRecord& p, int64_t now) override;
  Result<ProjectRecord> GetProject(Id id) override;
  Result<ProjectRecord> GetProjectBySlug(const std::string& slug) override;
  Result<std::vector<ProjectRecord>> ListProjects() override;
  Result<ProjectRecord> UpdateProject(const ProjectRecord& p, int64_t now) override;
  Status DeleteProject(Id id) override;
  Result<OwnershipRequestRecord> RequestOwnership(const OwnershipRequestRecord& r,
                                                  int64_t now) override;
  Result<std::vector<OwnershipRequestRecord>> ListOwnershipRequests(
      std::optional<Id> community_id) override;
  Status DeleteOwnershipRequest(Id project_id, Id community_id) override;
  Result<CampaignRecord> CreateCampaign(const CampaignRecord& c, int64_t now) override;
  Result<CampaignRecord> GetCampaign(Id id) override;
  Result<std::vector<CampaignRecord>> ListCampaigns() override;
  Result<CampaignRecord> UpdateCampaign(const CampaignRecord& c, int64_t now) override;
  Status DeleteCampaign(Id id) override;
  Result<AdRecord> CreateAd(const AdRecord& a, int64_t now) override;
  Result<AdRecord> GetAd(Id id) override;
  Result<std::vector<AdRecord>> ListAds(std::optional<Id> campaign_id) override;
  Result<AdRecord> UpdateAd(const AdRecord& a, int64_t now) override;
  Status DeleteAd(Id id) override;
  Result<CatalogData> LoadCatalogData() override;
  // The runner's catalog change version (Runner::ChangeVersion).
  Result<uint64_t> ChangeCounter() override { return runner_.ChangeVersion(Runner::kCatalog); }

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
