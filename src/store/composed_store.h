#pragma once

// A Store put together from its three narrow parts held by reference: the embedded default
// (SQLite inventory and counters, LMDB activity: lmdb/lmdb_activity_store.h derives from this
// and overrides the activity part) and cluster mode (PostgreSQL for all three). Forwards every
// call; thread-safe as its parts are. The parts must outlive this.

#include "store/store.h"

namespace adserver::store {

class ComposedStore : public Store {
 public:
  ComposedStore(InventoryStore& inventory, ActivityStore& activity,
                CampaignCounterStore& counters)
      : inventory_(inventory), activity_part_(activity), counters_(counters) {}

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
  Result<uint64_t> ChangeCounter() override { return inventory_.ChangeCounter(); }

  Status RecordActivity(const std::vector<ActivityRecord>& rows) override {
    return activity_part_.RecordActivity(rows);
  }
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override {
    return activity_part_.ActivityForWallet(wallet);
  }
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override {
    return activity_part_.ScanActivity(fn);
  }
  Result<uint64_t> ActivityChangeCounter() override {
    return activity_part_.ActivityChangeCounter();
  }

  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override {
    return counters_.SaveCampaignCounters(rows);
  }
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override {
    return counters_.LoadCampaignCounters();
  }
  Status SaveCampaignCountersAt(const std::vector<CampaignCountersRecord>& rows,
                                const std::optional<CounterMarks>& marks) override {
    return counters_.SaveCampaignCountersAt(rows, marks);
  }
  Result<std::optional<CounterMarks>> LoadCounterMarks() override {
    return counters_.LoadCounterMarks();
  }

 private:
  InventoryStore& inventory_;
  ActivityStore& activity_part_;
  CampaignCounterStore& counters_;
};

}  // namespace adserver::store
