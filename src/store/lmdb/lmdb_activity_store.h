#pragma once

// A Store whose wallet activity lives in the LMDB index and everything else in an inner store
// (SQLite). app/ and cli/ open the data directory through it, so the admin API, the NDJSON
// import and `serve` all read and write activity in LMDB.

#include <memory>

#include "store/lmdb/lmdb_activity_index.h"
#include "store/store.h"

namespace adserver::store {

// Thread-safe as its parts are.
class LmdbActivityStore final : public Store {
 public:
  LmdbActivityStore(std::unique_ptr<Store> inner, std::shared_ptr<LmdbActivityIndex> activity)
      : inner_(std::move(inner)), activity_(std::move(activity)) {}

  LmdbActivityIndex& activity() { return *activity_; }
  std::shared_ptr<LmdbActivityIndex> activity_index() const { return activity_; }

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
  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;
  Result<CatalogData> LoadCatalogData() override;
  Result<uint64_t> ChangeCounter() override;
  Result<uint64_t> ActivityChangeCounter() override;
  // Every other virtual of Store must be forwarded here too (a default would hide the inner
  // store's implementation). Decision counters (issue 4) live in the inner (SQLite) store.
  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override {
    return inner_->SaveCampaignCounters(rows);
  }
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override {
    return inner_->LoadCampaignCounters();
  }

 private:
  // RecordActivity's bulk path: LoadSorted for rows in wallet order into an empty index.
  Status AppendToEmptyIndex(const std::vector<ActivityRecord>& rows);

  std::unique_ptr<Store> inner_;
  std::shared_ptr<LmdbActivityIndex> activity_;
};

// Copies activity from `from` into `to` once, when `to` is empty (data directories created
// before the LMDB index kept activity in SQLite).
Status MigrateActivity(Store& from, LmdbActivityIndex& to);

}  // namespace adserver::store
