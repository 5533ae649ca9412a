#pragma once

// Fault injection for store adapters (issue 17): decorators that wrap any adapter of a store
// interface and fail chosen calls, so that the callers' failure paths run against the same real
// adapters the contract suites check (tests/unit/store/*_contract_test.cc, each also run
// through these wrappers with no fault planned). A failed call does not reach the wrapped
// adapter.

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status.h"
#include "decision/shared_caps.h"
#include "store/account_store.h"
#include "store/campaign_counter_store.h"
#include "store/events_store.h"
#include "store/exposure_store.h"
#include "store/identity_store.h"
#include "store/inventory_store.h"

namespace adserver::testing {

// Which calls fail. Thread-safe.
class FaultPlan {
 public:
  // The next `n` calls fail with `status`.
  void FailNext(int n, Status status = UnavailableError("injected fault")) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = n;
    status_ = std::move(status);
  }
  // Every call fails until Heal().
  void FailAll(Status status = UnavailableError("injected fault")) {
    FailNext(1 << 30, std::move(status));
  }
  void Heal() { FailNext(0); }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  int failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }
  // Counts a call; the status it fails with, if it does.
  std::optional<Status> Next() {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (fail_next_ <= 0) return std::nullopt;
    --fail_next_;
    ++failed_;
    return status_;
  }

 private:
  mutable std::mutex mu_;
  int fail_next_ = 0;
  Status status_ = OkStatus();
  int calls_ = 0;
  int failed_ = 0;
};

class FaultyExposureStore final : public store::ExposureStore {
 public:
  FaultyExposureStore(store::ExposureStore& inner, FaultPlan& plan) : inner_(inner), plan_(plan) {}
  Status AddExposures(std::span<const store::ExposureWrite> writes) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.AddExposures(writes);
  }
  Result<std::optional<store::ExposureRecord>> Get(const Address& wallet,
                                                     store::Id campaign_id) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.Get(wallet, campaign_id);
  }
  Result<store::ExpiryStep> ExpireStep(int64_t cutoff, std::string_view after,
                                       size_t max_records) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.ExpireStep(cutoff, after, max_records);
  }
  Result<store::ExposureStats> Stats() override { return inner_.Stats(); }

 private:
  store::ExposureStore& inner_;
  FaultPlan& plan_;
};

class FaultyCampaignCounterStore final : public store::CampaignCounterStore {
 public:
  FaultyCampaignCounterStore(store::CampaignCounterStore& inner, FaultPlan& plan)
      : inner_(inner), plan_(plan) {}
  Status SaveCampaignCounters(const std::vector<store::CampaignCountersRecord>& rows) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.SaveCampaignCounters(rows);
  }
  Result<std::vector<store::CampaignCountersRecord>> LoadCampaignCounters() override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.LoadCampaignCounters();
  }

 private:
  store::CampaignCounterStore& inner_;
  FaultPlan& plan_;
};

class FaultyIdentityStore final : public store::IdentityStore {
 public:
  FaultyIdentityStore(store::IdentityStore& inner, FaultPlan& plan) : inner_(inner), plan_(plan) {}
  Result<store::ErasureDigestKey> DigestKey(const store::ErasureDigestKey& candidate) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.DigestKey(candidate);
  }
  Result<store::ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.PutErasure(digest, erased_at);
  }
  Status ScanErasures(int64_t after_seq,
                      const std::function<void(const store::ErasureRecord&)>& fn) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.ScanErasures(after_seq, fn);
  }
  Result<int64_t> DeleteErasuresBefore(int64_t cutoff) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.DeleteErasuresBefore(cutoff);
  }

 private:
  store::IdentityStore& inner_;
  FaultPlan& plan_;
};

class FaultyCapCounters final : public decision::CapCounterStore {
 public:
  FaultyCapCounters(decision::CapCounterStore& inner, FaultPlan& plan)
      : inner_(inner), plan_(plan) {}
  Result<std::vector<uint32_t>> AddAndRead(
      std::span<const decision::CapIncrement> increments) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.AddAndRead(increments);
  }

 private:
  decision::CapCounterStore& inner_;
  FaultPlan& plan_;
};

// One wrapped call: fails as the plan says, else reaches the inner adapter.
#define ADS_FAULTY_CALL(ret, name, params, args)  \
  ret name params override {                      \
    if (auto fault = plan_.Next()) return *fault; \
    return inner_.name args;                      \
  }

// The inventory behind a fault plan (every method; ChangeCounter too). `keep` holds the inner
// adapter alive when the wrapper owns it.
class FaultyInventoryStore final : public store::InventoryStore {
 public:
  FaultyInventoryStore(store::InventoryStore& inner, FaultPlan& plan,
                       std::shared_ptr<void> keep = nullptr)
      : inner_(inner), plan_(plan), keep_(std::move(keep)) {}
  using Id = store::Id;
  ADS_FAULTY_CALL(Result<store::PublisherRecord>, CreatePublisher,
                  (const store::PublisherRecord& p, int64_t now), (p, now))
  ADS_FAULTY_CALL(Result<store::PublisherRecord>, GetPublisher, (Id id), (id))
  ADS_FAULTY_CALL(Result<std::vector<store::PublisherRecord>>, ListPublishers, (), ())
  ADS_FAULTY_CALL(Result<store::PublisherRecord>, UpdatePublisher,
                  (const store::PublisherRecord& p, int64_t now), (p, now))
  ADS_FAULTY_CALL(Status, DeletePublisher, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::ApiKeyRecord>, CreateApiKey,
                  (const store::ApiKeyRecord& k, int64_t now), (k, now))
  ADS_FAULTY_CALL(Result<std::vector<store::ApiKeyRecord>>, ListApiKeys, (Id publisher_id),
                  (publisher_id))
  ADS_FAULTY_CALL(Result<store::ApiKeyRecord>, RevokeApiKey,
                  (Id publisher_id, Id key_id, int64_t now), (publisher_id, key_id, now))
  ADS_FAULTY_CALL(Result<store::AdvertiserKeyRecord>, CreateAdvertiserKey,
                  (const store::AdvertiserKeyRecord& k, int64_t now), (k, now))
  ADS_FAULTY_CALL(Result<std::vector<store::AdvertiserKeyRecord>>, ListAdvertiserKeys,
                  (Id community_id), (community_id))
  ADS_FAULTY_CALL(Result<store::AdvertiserKeyRecord>, RevokeAdvertiserKey,
                  (Id community_id, Id key_id, int64_t now), (community_id, key_id, now))
  ADS_FAULTY_CALL(Result<store::CommunityRecord>, CreateCommunity,
                  (const store::CommunityRecord& c, int64_t now), (c, now))
  ADS_FAULTY_CALL(Result<store::CommunityRecord>, GetCommunity, (Id id), (id))
  ADS_FAULTY_CALL(Result<std::vector<store::CommunityRecord>>, ListCommunities, (), ())
  ADS_FAULTY_CALL(Result<store::CommunityRecord>, UpdateCommunity,
                  (const store::CommunityRecord& c, int64_t now), (c, now))
  ADS_FAULTY_CALL(Status, DeleteCommunity, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::ProjectRecord>, CreateProject,
                  (const store::ProjectRecord& p, int64_t now), (p, now))
  ADS_FAULTY_CALL(Result<store::ProjectRecord>, GetProject, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::ProjectRecord>, GetProjectBySlug, (const std::string& slug), (slug))
  ADS_FAULTY_CALL(Result<std::vector<store::ProjectRecord>>, ListProjects, (), ())
  ADS_FAULTY_CALL(Result<store::ProjectRecord>, UpdateProject,
                  (const store::ProjectRecord& p, int64_t now), (p, now))
  ADS_FAULTY_CALL(Status, DeleteProject, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::OwnershipRequestRecord>, RequestOwnership,
                  (const store::OwnershipRequestRecord& r, int64_t now), (r, now))
  ADS_FAULTY_CALL(Result<std::vector<store::OwnershipRequestRecord>>, ListOwnershipRequests,
                  (std::optional<Id> community_id), (community_id))
  ADS_FAULTY_CALL(Status, DeleteOwnershipRequest, (Id project_id, Id community_id),
                  (project_id, community_id))
  ADS_FAULTY_CALL(Result<store::CampaignRecord>, CreateCampaign,
                  (const store::CampaignRecord& c, int64_t now), (c, now))
  ADS_FAULTY_CALL(Result<store::CampaignRecord>, GetCampaign, (Id id), (id))
  ADS_FAULTY_CALL(Result<std::vector<store::CampaignRecord>>, ListCampaigns, (), ())
  ADS_FAULTY_CALL(Result<store::CampaignRecord>, UpdateCampaign,
                  (const store::CampaignRecord& c, int64_t now), (c, now))
  ADS_FAULTY_CALL(Status, DeleteCampaign, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::AdRecord>, CreateAd, (const store::AdRecord& a, int64_t now),
                  (a, now))
  ADS_FAULTY_CALL(Result<store::AdRecord>, GetAd, (Id id), (id))
  ADS_FAULTY_CALL(Result<std::vector<store::AdRecord>>, ListAds, (std::optional<Id> campaign_id),
                  (campaign_id))
  ADS_FAULTY_CALL(Result<store::AdRecord>, UpdateAd, (const store::AdRecord& a, int64_t now),
                  (a, now))
  ADS_FAULTY_CALL(Status, DeleteAd, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::CatalogData>, LoadCatalogData, (), ())
  ADS_FAULTY_CALL(Result<uint64_t>, ChangeCounter, (), ())

 private:
  store::InventoryStore& inner_;
  FaultPlan& plan_;
  std::shared_ptr<void> keep_;
};

// Users, tokens and console sessions behind a fault plan.
class FaultyAccountStore final : public store::AccountStore {
 public:
  FaultyAccountStore(store::AccountStore& inner, FaultPlan& plan,
                     std::shared_ptr<void> keep = nullptr)
      : inner_(inner), plan_(plan), keep_(std::move(keep)) {}
  using Id = store::Id;
  ADS_FAULTY_CALL(Result<store::UserRecord>, CreateUser,
                  (const store::UserRecord& user, int64_t now), (user, now))
  ADS_FAULTY_CALL(Result<store::UserRecord>, GetUser, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::UserRecord>, GetUserByEmail, (std::string_view email), (email))
  ADS_FAULTY_CALL(Result<std::vector<store::UserRecord>>, ListUsers, (), ())
  ADS_FAULTY_CALL(Result<store::UserRecord>, UpdateUser,
                  (const store::UserRecord& user, int64_t now), (user, now))
  ADS_FAULTY_CALL(Status, DeleteUser, (Id id), (id))
  ADS_FAULTY_CALL(Result<bool>, HasUsers, (), ())
  ADS_FAULTY_CALL(Result<store::UserTokenRecord>, CreateToken,
                  (const store::UserTokenRecord& token, int64_t now, int max_active),
                  (token, now, max_active))
  ADS_FAULTY_CALL(Result<std::vector<store::UserTokenRecord>>, FindTokensByPrefix,
                  (std::string_view prefix), (prefix))
  ADS_FAULTY_CALL(Result<std::vector<store::UserTokenRecord>>, ListTokens,
                  (std::optional<Id> user_id), (user_id))
  ADS_FAULTY_CALL(Result<store::UserTokenRecord>, GetToken, (Id id), (id))
  ADS_FAULTY_CALL(Result<store::UserTokenRecord>, RevokeToken, (Id id, int64_t now), (id, now))
  ADS_FAULTY_CALL(Result<int64_t>, RevokeUserTokens, (Id user_id, int64_t now), (user_id, now))
  ADS_FAULTY_CALL(Status, CreateSession, (const store::SessionRecord& session, int max_per_user),
                  (session, max_per_user))
  ADS_FAULTY_CALL(Result<store::SessionRecord>, GetSession, (const Sha256Digest& id_hash),
                  (id_hash))
  ADS_FAULTY_CALL(Status, TouchSession, (const Sha256Digest& id_hash, int64_t now), (id_hash, now))
  ADS_FAULTY_CALL(Status, DeleteSession, (const Sha256Digest& id_hash), (id_hash))
  ADS_FAULTY_CALL(Result<int64_t>, DeleteUserSessions,
                  (Id user_id, std::optional<Sha256Digest> keep), (user_id, keep))
  ADS_FAULTY_CALL(Result<int64_t>, DeleteExpiredSessions, (int64_t now, int64_t idle_before),
                  (now, idle_before))

 private:
  store::AccountStore& inner_;
  FaultPlan& plan_;
  std::shared_ptr<void> keep_;
};

// Clicks, conversions and rollups behind a fault plan (Checkpoint too).
class FaultyEventsStore final : public store::EventsStore {
 public:
  FaultyEventsStore(store::EventsStore& inner, FaultPlan& plan,
                    std::shared_ptr<void> keep = nullptr)
      : inner_(inner), plan_(plan), keep_(std::move(keep)) {}
  using Id = store::Id;
  ADS_FAULTY_CALL(Status, InsertClicks, (std::span<store::ClickRecord> rows), (rows))
  ADS_FAULTY_CALL(Status, Checkpoint, (), ())
  ADS_FAULTY_CALL(Result<std::vector<uint8_t>>, Secret,
                  (std::string_view name, std::span<const uint8_t> candidate), (name, candidate))
  ADS_FAULTY_CALL(Result<int64_t>, RollUpClicks, (int64_t max_rows), (max_rows))
  ADS_FAULTY_CALL(Status, AddRollups, (std::span<const store::RollupRow> rows), (rows))
  ADS_FAULTY_CALL(Result<int64_t>, Prune, (const store::EventRetention& retention, int64_t now),
                  (retention, now))
  ADS_FAULTY_CALL(Result<std::vector<store::ClickRecord>>, ListClicks,
                  (const store::EventQuery& query), (query))
  ADS_FAULTY_CALL(Result<std::optional<int64_t>>, BilledClickAt,
                  (const store::DecisionIdBytes& decision_id), (decision_id))
  ADS_FAULTY_CALL(Result<std::optional<store::ClickRecord>>, LastBilledClick,
                  (Id campaign_id, uint64_t person, int64_t served_from, int64_t clicked_by),
                  (campaign_id, person, served_from, clicked_by))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, InsertConversions,
                  (std::span<const store::ConversionCandidate> candidates, int64_t now),
                  (candidates, now))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, RevertConversions,
                  (int64_t chain_id, int64_t block_number,
                   const std::array<uint8_t, 32>& block_hash, int64_t now),
                  (chain_id, block_number, block_hash, now))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, RevertReplacedConversions,
                  (int64_t chain_id, std::span<const store::BlockAtHeight> blocks, int64_t now),
                  (chain_id, blocks, now))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, ListConversions,
                  (const store::EventQuery& query), (query))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, ConversionsAfter,
                  (Id after_id, int limit), (after_id, limit))
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, ReorgedConversionsSince,
                  (int64_t since, Id after_id, Id up_to_id, int limit),
                  (since, after_id, up_to_id, limit))
  ADS_FAULTY_CALL(Result<Id>, LastConversionId, (), ())
  ADS_FAULTY_CALL(Result<std::vector<store::ConversionRecord>>, ReorgedConversionsAfterSeq,
                  (int64_t after_seq, int limit), (after_seq, limit))
  ADS_FAULTY_CALL(Result<int64_t>, LastRevertSeq, (), ())
  ADS_FAULTY_CALL(Result<store::CampaignEventTotals>, CampaignTotals, (Id campaign_id),
                  (campaign_id))
  ADS_FAULTY_CALL(Result<store::NodeBacklog>, NodeBacklogAfter,
                  (std::string_view node_id, Id click_id, Id conversion_id, int64_t revert_seq),
                  (node_id, click_id, conversion_id, revert_seq))
  ADS_FAULTY_CALL(Result<std::vector<store::CampaignCountersRecord>>, CountersFromEvents,
                  (int64_t now), (now))

 private:
  store::EventsStore& inner_;
  FaultPlan& plan_;
  std::shared_ptr<void> keep_;
};

#undef ADS_FAULTY_CALL

}  // namespace adserver::testing
