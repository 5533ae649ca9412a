#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// Inventory: publishers and their keys, advertiser keys, communities, projects, campaigns and
// ads, read whole for the serving catalog. The error contract and the rules for Create*/Update*
// are in store/stores.h. Thread-safe; every call may block on I/O.
class InventoryStore {
 public:
  virtual ~InventoryStore() = default;

  // Publishers and keys.
  virtual Result<PublisherRecord> CreatePublisher(const PublisherRecord& p, int64_t now) = 0;
  virtual Result<PublisherRecord> GetPublisher(Id id) = 0;
  virtual Result<std::vector<PublisherRecord>> ListPublishers() = 0;
  virtual Result<PublisherRecord> UpdatePublisher(const PublisherRecord& p, int64_t now) = 0;
  // Deletes the publisher and all its keys.
  virtual Status DeletePublisher(Id id) = 0;

  virtual Result<ApiKeyRecord> CreateApiKey(const ApiKeyRecord& k, int64_t now) = 0;
  virtual Result<std::vector<ApiKeyRecord>> ListApiKeys(Id publisher_id) = 0;
  // Sets revoked_at = now (idempotent: an already revoked key keeps its first time).
  // NotFound if the key does not exist or does not belong to the publisher.
  virtual Result<ApiKeyRecord> RevokeApiKey(Id publisher_id, Id key_id, int64_t now) = 0;

  // Advertiser keys (issue 15), the keys of POST /v1/events; a community's keys go with it.
  // Like the publisher keys: Create is Conflict when the community does not exist, Revoke is
  // NotFound when the key does not exist or does not belong to the community. Inventory
  // changes (ChangeCounter moves). Adapters without support return Internal.
  virtual Result<AdvertiserKeyRecord> CreateAdvertiserKey(const AdvertiserKeyRecord& k,
                                                          int64_t now) {
    (void)k, (void)now;
    return InternalError("advertiser keys are not supported by this store");
  }
  virtual Result<std::vector<AdvertiserKeyRecord>> ListAdvertiserKeys(Id community_id) {
    (void)community_id;
    return InternalError("advertiser keys are not supported by this store");
  }
  virtual Result<AdvertiserKeyRecord> RevokeAdvertiserKey(Id community_id, Id key_id, int64_t now) {
    (void)community_id, (void)key_id, (void)now;
    return InternalError("advertiser keys are not supported by this store");
  }

  // Communities. DeleteCommunity is Conflict while campaigns reference it.
  virtual Result<CommunityRecord> CreateCommunity(const CommunityRecord& c, int64_t now) = 0;
  virtual Result<CommunityRecord> GetCommunity(Id id) = 0;
  virtual Result<std::vector<CommunityRecord>> ListCommunities() = 0;
  virtual Result<CommunityRecord> UpdateCommunity(const CommunityRecord& c, int64_t now) = 0;
  virtual Status DeleteCommunity(Id id) = 0;

  // Projects. Contracts are replaced as a whole by UpdateProject. DeleteProject is Conflict
  // while campaigns target or exclude it; it removes the project's activity.
  virtual Result<ProjectRecord> CreateProject(const ProjectRecord& p, int64_t now) = 0;
  virtual Result<ProjectRecord> GetProject(Id id) = 0;
  virtual Result<ProjectRecord> GetProjectBySlug(const std::string& slug) = 0;
  virtual Result<std::vector<ProjectRecord>> ListProjects() = 0;
  virtual Result<ProjectRecord> UpdateProject(const ProjectRecord& p, int64_t now) = 0;
  virtual Status DeleteProject(Id id) = 0;

  // Requests that an operator verify a project as a community's own (issue 39), one per
  // (project, community); a repeat replaces the note and time. Conflict when the project or the
  // community does not exist; UpdateProject setting an owner removes the project's requests.
  // Inventory is unchanged by them (no ChangeCounter move). Adapters without support return
  // Internal.
  virtual Result<OwnershipRequestRecord> RequestOwnership(const OwnershipRequestRecord& r,
                                                          int64_t now) {
    (void)r, (void)now;
    return InternalError("ownership requests are not supported by this store");
  }
  // Every request, oldest first, or only `community_id`'s.
  virtual Result<std::vector<OwnershipRequestRecord>> ListOwnershipRequests(
      std::optional<Id> community_id) {
    (void)community_id;
    return InternalError("ownership requests are not supported by this store");
  }
  // NotFound when there is no such request.
  virtual Status DeleteOwnershipRequest(Id project_id, Id community_id) {
    (void)project_id, (void)community_id;
    return InternalError("ownership requests are not supported by this store");
  }

  // Campaigns. DeleteCampaign also deletes its ads.
  virtual Result<CampaignRecord> CreateCampaign(const CampaignRecord& c, int64_t now) = 0;
  virtual Result<CampaignRecord> GetCampaign(Id id) = 0;
  virtual Result<std::vector<CampaignRecord>> ListCampaigns() = 0;
  virtual Result<CampaignRecord> UpdateCampaign(const CampaignRecord& c, int64_t now) = 0;
  virtual Status DeleteCampaign(Id id) = 0;

  // Ads.
  virtual Result<AdRecord> CreateAd(const AdRecord& a, int64_t now) = 0;
  virtual Result<AdRecord> GetAd(Id id) = 0;
  // All ads, or only those of `campaign_id`.
  virtual Result<std::vector<AdRecord>> ListAds(std::optional<Id> campaign_id) = 0;
  virtual Result<AdRecord> UpdateAd(const AdRecord& a, int64_t now) = 0;
  virtual Status DeleteAd(Id id) = 0;

  // Everything but activity, from one consistent read transaction.
  virtual Result<CatalogData> LoadCatalogData() = 0;

  // A number that changes whenever any connection (this process or another, e.g. the CLI on
  // the same data directory) commits a change to inventory (everything but activity). Cheap;
  // polled to trigger catalog rebuilds.
  virtual Result<uint64_t> ChangeCounter() = 0;
};

}  // namespace adserver::store
