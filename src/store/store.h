#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

// Persistence for inventory (publishers, keys, communities, projects, campaigns, ads) and
// wallet activity. Implementations are thread-safe; every call may block on I/O, so callers
// run them on admin/ingest worker threads, never on an event loop.
//
// Common error contract for every method:
//   NotFound     - the addressed record does not exist;
//   Conflict     - a uniqueness rule would break (duplicate slug, contract owned by another
//                  project) or a referenced record is missing (foreign key);
//   Unavailable  - the backend cannot be reached or is busy beyond its timeout;
//   Internal     - anything else the driver reports.
// Create* ignore `id`, `created_at`, `updated_at` of the input and return the stored record
// with them filled in (`now` is supplied by the caller so tests control time).
// Update* replace every mutable field of the record with that `id`.
class Store {
 public:
  virtual ~Store() = default;

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

  // Wallet activity. RecordActivity upserts each row in one transaction keyed by
  // (wallet, project_id, chain_id): last_seen = max(old, new), count = old + new.
  // Conflict if a project_id does not exist (then nothing of the batch is written).
  virtual Status RecordActivity(const std::vector<ActivityRecord>& rows) = 0;
  virtual Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) = 0;
  // Streams every activity row to `fn` (ordered by wallet), for building the serving index.
  virtual Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) = 0;

  // Everything but activity, from one consistent read transaction.
  virtual Result<CatalogData> LoadCatalogData() = 0;

  // A number that changes whenever any connection (this process or another, e.g. the CLI on
  // the same data directory) commits a change to inventory (everything but activity). Cheap;
  // polled to trigger catalog rebuilds.
  virtual Result<uint64_t> ChangeCounter() = 0;
  // Like ChangeCounter, but only for wallet activity tables.
  virtual Result<uint64_t> ActivityChangeCounter() = 0;

  // Decision counters (issue 4): spend and event counts per campaign, written asynchronously
  // by the serving process and read back at start-up. Rows are upserted by campaign id with
  // absolute values; not an inventory change (ChangeCounter does not move). Counters of
  // deleted campaigns are kept (harmless). Adapters without support return Internal.
  virtual Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) {
    (void)rows;
    return InternalError("campaign counters are not supported by this store");
  }
  virtual Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() {
    return InternalError("campaign counters are not supported by this store");
  }
};

}  // namespace adserver::store
