#pragma once

// The inventory (publishers, keys, communities, projects, campaigns, ads) in SQL, shared by the
// SQLite and PostgreSQL adapters (store/sql/sql.h): every InventoryStore method but
// ChangeCounter, which is each adapter's. The adapter supplies transactions (sql::Runner) and
// forwards its InventoryStore methods here; the error contract is InventoryStore's.

#include <optional>
#include <string>
#include <vector>

#include "store/records.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlInventory {
 public:
  explicit SqlInventory(Runner& runner);

  Result<PublisherRecord> CreatePublisher(const PublisherRecord& p, int64_t now);
  Result<PublisherRecord> GetPublisher(Id id);
  Result<std::vector<PublisherRecord>> ListPublishers();
  Result<PublisherRecord> UpdatePublisher(const PublisherRecord& p, int64_t now);
  Status DeletePublisher(Id id);
  Result<ApiKeyRecord> CreateApiKey(const ApiKeyRecord& k, int64_t now);
  Result<std::vector<ApiKeyRecord>> ListApiKeys(Id publisher_id);
  Result<ApiKeyRecord> RevokeApiKey(Id publisher_id, Id key_id, int64_t now);
  Result<AdvertiserKeyRecord> CreateAdvertiserKey(const AdvertiserKeyRecord& k, int64_t now);
  Result<std::vector<AdvertiserKeyRecord>> ListAdvertiserKeys(Id community_id);
  Result<AdvertiserKeyRecord> RevokeAdvertiserKey(Id community_id, Id key_id, int64_t now);
  Result<CommunityRecord> CreateCommunity(const CommunityRecord& c, int64_t now);
  Result<CommunityRecord> GetCommunity(Id id);
  Result<std::vector<CommunityRecord>> ListCommunities();
  Result<CommunityRecord> UpdateCommunity(const CommunityRecord& c, int64_t now);
  Status DeleteCommunity(Id id);
  Result<ProjectRecord> CreateProject(const ProjectRecord& p, int64_t now);
  Result<ProjectRecord> GetProject(Id id);
  Result<ProjectRecord> GetProjectBySlug(const std::string& slug);
  Result<std::vector<ProjectRecord>> ListProjects();
  Result<ProjectRecord> UpdateProject(const ProjectRecord& p, int64_t now);
  Status DeleteProject(Id id);
  Result<OwnershipRequestRecord> RequestOwnership(const OwnershipRequestRecord& r, int64_t now);
  Result<std::vector<OwnershipRequestRecord>> ListOwnershipRequests(std::optional<Id> community_id);
  Status DeleteOwnershipRequest(Id project_id, Id community_id);
  Result<CampaignRecord> CreateCampaign(const CampaignRecord& c, int64_t now);
  Result<CampaignRecord> GetCampaign(Id id);
  Result<std::vector<CampaignRecord>> ListCampaigns();
  Result<CampaignRecord> UpdateCampaign(const CampaignRecord& c, int64_t now);
  Status DeleteCampaign(Id id);
  Result<AdRecord> CreateAd(const AdRecord& a, int64_t now);
  Result<AdRecord> GetAd(Id id);
  Result<std::vector<AdRecord>> ListAds(std::optional<Id> campaign_id);
  Result<AdRecord> UpdateAd(const AdRecord& a, int64_t now);
  Status DeleteAd(Id id);
  Result<CatalogData> LoadCatalogData();

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
