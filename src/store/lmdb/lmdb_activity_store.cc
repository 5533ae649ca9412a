#include "store/lmdb/lmdb_activity_store.h"

#include <set>

namespace adserver::store {

Result<PublisherRecord> LmdbActivityStore::CreatePublisher(const PublisherRecord& p, int64_t now) {
  return inner_->CreatePublisher(p, now);
}

Result<PublisherRecord> LmdbActivityStore::GetPublisher(Id id) { return inner_->GetPublisher(id); }

Result<std::vector<PublisherRecord>> LmdbActivityStore::ListPublishers() {
  return inner_->ListPublishers();
}

Result<PublisherRecord> LmdbActivityStore::UpdatePublisher(const PublisherRecord& p, int64_t now) {
  return inner_->UpdatePublisher(p, now);
}

Status LmdbActivityStore::DeletePublisher(Id id) { return inner_->DeletePublisher(id); }

Result<ApiKeyRecord> LmdbActivityStore::CreateApiKey(const ApiKeyRecord& k, int64_t now) {
  return inner_->CreateApiKey(k, now);
}

Result<std::vector<ApiKeyRecord>> LmdbActivityStore::ListApiKeys(Id publisher_id) {
  return inner_->ListApiKeys(publisher_id);
}

Result<ApiKeyRecord> LmdbActivityStore::RevokeApiKey(Id publisher_id, Id key_id, int64_t now) {
  return inner_->RevokeApiKey(publisher_id, key_id, now);
}

Result<CommunityRecord> LmdbActivityStore::CreateCommunity(const CommunityRecord& c, int64_t now) {
  return inner_->CreateCommunity(c, now);
}

Result<CommunityRecord> LmdbActivityStore::GetCommunity(Id id) { return inner_->GetCommunity(id); }

Result<std::vector<CommunityRecord>> LmdbActivityStore::ListCommunities() {
  return inner_->ListCommunities();
}

Result<CommunityRecord> LmdbActivityStore::UpdateCommunity(const CommunityRecord& c, int64_t now) {
  return inner_->UpdateCommunity(c, now);
}

Status LmdbActivityStore::DeleteCommunity(Id id) { return inner_->DeleteCommunity(id); }

Result<ProjectRecord> LmdbActivityStore::CreateProject(const ProjectRecord& p, int64_t now) {
  return inner_->CreateProject(p, now);
}

Result<ProjectRecord> LmdbActivityStore::GetProject(Id id) { return inner_->GetProject(id); }

Result<ProjectRecord> LmdbActivityStore::GetProjectBySlug(const std::string& slug) {
  return inner_->GetProjectBySlug(slug);
}

Result<std::vector<ProjectRecord>> LmdbActivityStore::ListProjects() {
  return inner_->ListProjects();
}

Result<ProjectRecord> LmdbActivityStore::UpdateProject(const ProjectRecord& p, int64_t now) {
  return inner_->UpdateProject(p, now);
}

Status LmdbActivityStore::DeleteProject(Id id) { return inner_->DeleteProject(id); }

Result<CampaignRecord> LmdbActivityStore::CreateCampaign(const CampaignRecord& c, int64_t now) {
  return inner_->CreateCampaign(c, now);
}

Result<CampaignRecord> LmdbActivityStore::GetCampaign(Id id) { return inner_->GetCampaign(id); }

Result<std::vector<CampaignRecord>> LmdbActivityStore::ListCampaigns() {
  return inner_->ListCampaigns();
}

Result<CampaignRecord> LmdbActivityStore::UpdateCampaign(const CampaignRecord& c, int64_t now) {
  return inner_->UpdateCampaign(c, now);
}

Status LmdbActivityStore::DeleteCampaign(Id id) { return inner_->DeleteCampaign(id); }

Result<AdRecord> LmdbActivityStore::CreateAd(const AdRecord& a, int64_t now) {
  return inner_->CreateAd(a, now);
}

Result<AdRecord> LmdbActivityStore::GetAd(Id id) { return inner_->GetAd(id); }

Result<std::vector<AdRecord>> LmdbActivityStore::ListAds(std::optional<Id> campaign_id) {
  return inner_->ListAds(campaign_id);
}

Result<AdRecord> LmdbActivityStore::UpdateAd(const AdRecord& a, int64_t now) {
  return inner_->UpdateAd(a, now);
}

Status LmdbActivityStore::DeleteAd(Id id) { return inner_->DeleteAd(id); }

Result<CatalogData> LmdbActivityStore::LoadCatalogData() { return inner_->LoadCatalogData(); }

Result<uint64_t> LmdbActivityStore::ChangeCounter() { return inner_->ChangeCounter(); }

// Activity: LMDB. Project ids are checked against the inner store so the contract (Conflict on
// an unknown project, nothing written) holds.
Status LmdbActivityStore::RecordActivity(const std::vector<ActivityRecord>& rows) {
  std::set<Id> projects;
  for (const ActivityRecord& row : rows) projects.insert(row.project_id);
  for (Id id : projects) {
    Result<ProjectRecord> p = inner_->GetProject(id);
    if (p.status().code() == Code::kNotFound) {
      return ConflictError("project " + std::to_string(id) + " does not exist");
    }
    if (!p.ok()) return p.status();
  }
  return activity_->Record(rows);
}

Result<std::vector<ActivityRecord>> LmdbActivityStore::ActivityForWallet(const Address& wallet) {
  return activity_->ForWallet(wallet);
}

Status LmdbActivityStore::ScanActivity(const std::function<void(const ActivityRecord&)>& fn) {
  return activity_->Scan(fn);
}

Result<uint64_t> LmdbActivityStore::ActivityChangeCounter() { return activity_->ChangeCounter(); }

Status MigrateActivity(Store& from, LmdbActivityIndex& to) {
  if (to.wallet_count() != 0) return OkStatus();
  std::vector<ActivityRecord> rows;
  ADS_RETURN_IF_ERROR(from.ScanActivity([&rows](const ActivityRecord& r) { rows.push_back(r); }));
  if (rows.empty()) return OkStatus();
  return to.Record(rows);
}

}  // namespace adserver::store
