// The inventory's contract (issue 17 item 3): SQLite and PostgreSQL run the same SQL
// (store/sql) and must answer the same for every InventoryStore call: records round-trip with
// every field, conflicts name their cause, deletes cascade or refuse as documented, and the
// change counter moves with every inventory write, from any process. PostgreSQL cases run on a
// database of their own (skipped by hand outside CTest, a failure with
// ADSERVER_REQUIRE_POSTGRES=1).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/address.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/faulty_stores.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;

template <class T>
std::shared_ptr<T> Opened(Result<std::unique_ptr<T>> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::shared_ptr<T>(std::move(*r)) : nullptr;
}

class SqliteInventory {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  std::shared_ptr<InventoryStore> Open() {
    return Opened(SqliteStore::Open(dir_.File("adserver.db")));
  }
  std::shared_ptr<CampaignCounterStore> OpenCounters() {
    return Opened(SqliteStore::Open(dir_.File("adserver.db")));
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresInventory {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  std::shared_ptr<InventoryStore> Open() { return Opened(PostgresStore::Open(db_.url())); }
  std::shared_ptr<CampaignCounterStore> OpenCounters() {
    return Opened(PostgresStore::Open(db_.url()));
  }

 private:
  adserver::testing::TestDatabase db_;
};

// SQLite behind the fault-injecting wrapper (tests/support/faulty_stores.h), no fault planned.
class WrappedSqliteInventory {
 public:
  static constexpr const char* kName = "sqlite_behind_the_fault_wrapper";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  std::shared_ptr<InventoryStore> Open() {
    std::shared_ptr<InventoryStore> inner = inner_.Open();
    if (inner == nullptr) return nullptr;
    return std::make_shared<adserver::testing::FaultyInventoryStore>(*inner, plan_, inner);
  }
  std::shared_ptr<CampaignCounterStore> OpenCounters() { return inner_.OpenCounters(); }

 private:
  SqliteInventory inner_;
  adserver::testing::FaultPlan plan_;
};

template <class Backend>
class InventoryContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    store_ = backend_.Open();
    ASSERT_TRUE(store_);
  }
  Id Community(const std::string& name = "Uniswap Labs") {
    auto c = store_->CreateCommunity(CommunityRecord{.name = name, .logo_url = "https://l"}, kNow);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? c->id : 0;
  }
  Id Project(const std::string& slug, int64_t chain, const std::string& address) {
    ProjectRecord p{.slug = slug, .name = slug + " name", .category = "dex"};
    p.contracts.push_back(ContractRef{.chain_id = chain, .address = *ParseAddress(address)});
    auto r = store_->CreateProject(p, kNow);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->id : 0;
  }
  Backend backend_;
  std::shared_ptr<InventoryStore> store_;
};

using Backends = ::testing::Types<SqliteInventory, PostgresInventory, WrappedSqliteInventory>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(InventoryContractTest, Backends, BackendNames);

const char* kAddrA = "0x00000000000000000000000000000000000000a1";
const char* kAddrB = "0x00000000000000000000000000000000000000b2";

// Issue 39: a project's verified owner and the communities' requests for it.
TYPED_TEST(InventoryContractTest, ProjectOwnersAndOwnershipRequests) {
  InventoryStore& s = *this->store_;
  Id mine = this->Community("Mine");
  Id other = this->Community("Other");
  Id dex = this->Project("dex", 1, kAddrA);
  Id lend = this->Project("lend", 1, kAddrB);
  EXPECT_FALSE(s.GetProject(dex)->owner_community_id.has_value());
  ASSERT_TRUE(
      s.RequestOwnership({.project_id = dex, .community_id = mine, .note = "a"}, kNow).ok());
  ASSERT_TRUE(s.RequestOwnership({.project_id = dex, .community_id = other}, kNow).ok());
  ASSERT_TRUE(s.RequestOwnership({.project_id = lend, .community_id = mine}, kNow).ok());
  // A repeat replaces the note and the time.
  auto again = s.RequestOwnership({.project_id = dex, .community_id = mine, .note = "b"}, kNow + 5);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->requested_at, kNow + 5);
  auto all = s.ListOwnershipRequests(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(all->back().note, "b");  // oldest first
  ASSERT_EQ(s.ListOwnershipRequests(other)->size(), 1u);
  EXPECT_EQ(s.RequestOwnership({.project_id = dex, .community_id = 9999}, kNow).status().code(),
            Code::kConflict);
  // Setting the owner answers every request for the project.
  ProjectRecord p = *s.GetProject(dex);
  p.owner_community_id = mine;
  auto updated = s.UpdateProject(p, kNow);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_EQ(updated->owner_community_id, mine);
  all = s.ListOwnershipRequests(std::nullopt);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().project_id, lend);
  EXPECT_EQ(s.DeleteOwnershipRequest(lend, other).code(), Code::kNotFound);
  EXPECT_TRUE(s.DeleteOwnershipRequest(lend, mine).ok());
  EXPECT_TRUE(s.ListOwnershipRequests(std::nullopt)->empty());
  // An unknown owner is refused; clearing works; a created project keeps its owner.
  p.owner_community_id = 9999;
  EXPECT_EQ(s.UpdateProject(p, kNow).status().code(), Code::kConflict);
  p.owner_community_id.reset();
  EXPECT_FALSE(s.UpdateProject(p, kNow)->owner_community_id.has_value());
  ProjectRecord created{.slug = "owned", .name = "Owned", .owner_community_id = other};
  EXPECT_EQ(s.CreateProject(created, kNow)->owner_community_id, other);
}

// Issue 39: a community's brand is reviewed like an ad's creative.
TYPED_TEST(InventoryContractTest, CommunitiesKeepTheirApprovedBrand) {
  InventoryStore& s = *this->store_;
  auto c = s.CreateCommunity({.name = "Old", .logo_url = "https://l/old.png"}, kNow);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->approved.has_value());
  EXPECT_EQ(c->approved->name, "Old");
  CommunityRecord edit = *c;
  edit.name = "New";
  edit.logo_url = "https://l/new.png";
  edit.review_status = ReviewStatus::kPending;
  auto pending = s.UpdateCommunity(edit, kNow);
  ASSERT_TRUE(pending.ok()) << pending.status().message();
  EXPECT_EQ(pending->name, "New");
  EXPECT_EQ(pending->review_status, ReviewStatus::kPending);
  EXPECT_EQ(pending->approved, (CommunityBrand{.name = "Old", .logo_url = "https://l/old.png"}));
  edit.review_status = ReviewStatus::kRejected;
  edit.review_reason = "not your brand";
  auto rejected = s.UpdateCommunity(edit, kNow);
  EXPECT_EQ(rejected->review_reason, "not your brand");
  EXPECT_EQ(rejected->approved->name, "Old");  // the rejected edit never serves
  edit.review_status = ReviewStatus::kApproved;
  edit.review_reason.clear();
  EXPECT_EQ(s.UpdateCommunity(edit, kNow)->approved->name, "New");
  EXPECT_EQ(s.GetCommunity(c->id)->approved->logo_url, "https://l/new.png");
}

TYPED_TEST(InventoryContractTest, PublishersKeepEveryFieldAndTheirControls) {
  InventoryStore& s = *this->store_;
  Id blocked = this->Community("Blocked");
  Id allowed = this->Community("Allowed");
  PublisherRecord p{.name = "News \"Daily\" ü",
                    .allowed_origins = {"https://news.example", "https://m.news.example"},
                    .blocked_communities = {blocked},
                    .allowed_communities = {allowed},
                    .category_opt_ins = {"gambling", "nft"},
                    .floor_cpm_micros = 1'500'000,
                    .ab_arms = {"a", "b"},
                    .payout = PayoutRule{.model = PayoutRule::Model::kCpm, .cpm_micros = 800'000},
                    .rate_limit = RateLimit{.per_second = 12.5, .burst = 40}};
  auto created = s.CreatePublisher(p, kNow);
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto got = s.GetPublisher(created->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, p.name);
  EXPECT_EQ(got->allowed_origins, p.allowed_origins);
  EXPECT_EQ(got->blocked_communities, p.blocked_communities);
  EXPECT_EQ(got->allowed_communities, p.allowed_communities);
  EXPECT_EQ(got->category_opt_ins, p.category_opt_ins);
  EXPECT_EQ(got->floor_cpm_micros, p.floor_cpm_micros);
  EXPECT_EQ(got->ab_arms, p.ab_arms);
  EXPECT_EQ(got->payout.model, PayoutRule::Model::kCpm);
  EXPECT_EQ(got->payout.cpm_micros, 800'000);
  EXPECT_EQ(got->rate_limit, p.rate_limit);
  EXPECT_EQ(got->created_at, kNow);
  // Update replaces lists and controls; the percent keeps its fraction.
  PublisherRecord changed = *got;
  changed.allowed_origins = {};
  changed.blocked_communities = {};
  changed.rate_limit.reset();
  changed.payout = PayoutRule{.model = PayoutRule::Model::kRevshare, .percent = 62.5};
  auto updated = s.UpdatePublisher(changed, kNow + 5);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_TRUE(updated->allowed_origins.empty());
  EXPECT_TRUE(updated->blocked_communities.empty());
  EXPECT_FALSE(updated->rate_limit.has_value());
  EXPECT_DOUBLE_EQ(updated->payout.percent, 62.5);
  EXPECT_EQ(updated->updated_at, kNow + 5);
  PublisherRecord missing_ref = changed;
  missing_ref.blocked_communities = {999};
  auto refused = s.UpdatePublisher(missing_ref, kNow);
  EXPECT_EQ(refused.status().code(), Code::kConflict);
  EXPECT_NE(refused.status().message().find("community 999 does not exist"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(s.GetPublisher(created->id)->blocked_communities.size(), 0u) << "nothing half-done";
  ASSERT_EQ(s.ListPublishers()->size(), 1u);
  ASSERT_TRUE(s.DeletePublisher(created->id).ok());
  EXPECT_EQ(s.GetPublisher(created->id).status().code(), Code::kNotFound);
  EXPECT_EQ(s.DeletePublisher(created->id).code(), Code::kNotFound);
}

TYPED_TEST(InventoryContractTest, KeysNameTheirConflictsAndRevokeOnce) {
  InventoryStore& s = *this->store_;
  Id publisher = s.CreatePublisher(PublisherRecord{.name = "P"}, kNow)->id;
  ApiKeyRecord k{.publisher_id = publisher, .prefix = "spk_AbCd", .test = true};
  k.hash.fill(7);
  auto key = s.CreateApiKey(k, kNow);
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_EQ(key->hash, k.hash);
  EXPECT_TRUE(key->test);
  EXPECT_EQ(s.CreateApiKey(k, kNow).status().message(),
            "an api key with the same hash already exists");
  ApiKeyRecord orphan = k;
  orphan.publisher_id = 4242;
  orphan.hash.fill(8);
  EXPECT_EQ(s.CreateApiKey(orphan, kNow).status().message(), "publisher 4242 does not exist");
  auto revoked = s.RevokeApiKey(publisher, key->id, kNow + 10);
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_at, kNow + 10);
  EXPECT_EQ(s.RevokeApiKey(publisher, key->id, kNow + 20)->revoked_at, kNow + 10);
  EXPECT_EQ(s.RevokeApiKey(publisher + 1, key->id, kNow).status().code(), Code::kNotFound);
  ASSERT_EQ(s.ListApiKeys(publisher)->size(), 1u);

  Id community = this->Community();
  AdvertiserKeyRecord a{.community_id = community, .prefix = "sak_AbCd"};
  a.hash.fill(9);
  auto ak = s.CreateAdvertiserKey(a, kNow);
  ASSERT_TRUE(ak.ok()) << ak.status().message();
  EXPECT_EQ(s.CreateAdvertiserKey(a, kNow).status().message(),
            "an advertiser key with the same hash already exists");
  AdvertiserKeyRecord stray = a;
  stray.community_id = 777;
  stray.hash.fill(10);
  EXPECT_EQ(s.CreateAdvertiserKey(stray, kNow).status().message(), "community 777 does not exist");
  EXPECT_EQ(s.RevokeAdvertiserKey(community, ak->id, kNow + 3)->revoked_at, kNow + 3);
  EXPECT_EQ(s.ListAdvertiserKeys(community)->size(), 1u);
  EXPECT_TRUE(s.ListAdvertiserKeys(community + 1)->empty());
}

TYPED_TEST(InventoryContractTest, ProjectsNameTheOwnerOfAContractAndRefuseDeletionWhileTargeted) {
  InventoryStore& s = *this->store_;
  Id uni = this->Project("uniswap", 1, kAddrA);
  ProjectRecord other{.slug = "sushi", .name = "Sushi"};
  other.contracts.push_back(ContractRef{.chain_id = 1, .address = *ParseAddress(kAddrA)});
  auto clash = s.CreateProject(other, kNow);
  EXPECT_EQ(clash.status().message(),
            "contract 1:" + std::string(kAddrA) + " already belongs to project 'uniswap'");
  other.contracts = {};
  other.slug = "uniswap";
  EXPECT_EQ(s.CreateProject(other, kNow).status().message(),
            "project slug 'uniswap' already exists");
  EXPECT_EQ(s.GetProjectBySlug("uniswap")->id, uni);
  EXPECT_EQ(s.GetProject(uni)->contracts.size(), 1u);

  Id community = this->Community();
  CampaignRecord c{.community_id = community,
                   .name = "C",
                   .status = CampaignStatus::kActive,
                   .pricing_model = PricingModel::kCpm,
                   .bid_micros = 2'000'000,
                   .target_projects = {uni}};
  auto campaign = s.CreateCampaign(c, kNow);
  ASSERT_TRUE(campaign.ok()) << campaign.status().message();
  Status refused = s.DeleteProject(uni);
  EXPECT_EQ(refused.code(), Code::kConflict);
  EXPECT_EQ(refused.message(), "project " + std::to_string(uni) + " is referenced by campaign " +
                                   std::to_string(campaign->id));
  EXPECT_EQ(s.DeleteCommunity(community).code(), Code::kConflict);
  ASSERT_TRUE(s.DeleteCampaign(campaign->id).ok());
  ASSERT_TRUE(s.DeleteProject(uni).ok());
  ASSERT_TRUE(s.DeleteCommunity(community).ok());
}

// Issue 40: a project's ticker and the lists it came from, in order, through create and update.
TYPED_TEST(InventoryContractTest, ProjectsKeepTheirSymbolAndSources) {
  InventoryStore& s = *this->store_;
  ProjectRecord p{.slug = "usd-coin", .name = "USD Coin", .category = "token", .symbol = "USDC"};
  p.sources = {"@ledgerhq/cryptoassets@13.33.0", "@1delta/asset-registry@0.0.99"};
  p.contracts.push_back(ContractRef{.chain_id = 1, .address = *ParseAddress(kAddrA)});
  auto created = s.CreateProject(p, kNow);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->symbol, "USDC");
  EXPECT_EQ(created->sources, p.sources);
  ProjectRecord update = *created;
  update.symbol = "USD₮0";
  update.sources.push_back("@swapkit/tokens@2.4.0");
  ASSERT_TRUE(s.UpdateProject(update, kNow + 1).ok());
  ProjectRecord got = *s.GetProjectBySlug("usd-coin");
  EXPECT_EQ(got.symbol, "USD₮0");
  EXPECT_EQ(got.sources,
            (std::vector<std::string>{"@ledgerhq/cryptoassets@13.33.0",
                                      "@1delta/asset-registry@0.0.99", "@swapkit/tokens@2.4.0"}));
  update.sources.clear();
  update.symbol.clear();
  ASSERT_TRUE(s.UpdateProject(update, kNow + 2).ok());
  got = *s.GetProject(created->id);
  EXPECT_TRUE(got.sources.empty());
  EXPECT_EQ(got.symbol, "");
}

TYPED_TEST(InventoryContractTest, CampaignsAndAdsKeepEveryField) {
  InventoryStore& s = *this->store_;
  Id a = this->Project("aave", 1, kAddrA);
  Id b = this->Project("blur", 10, kAddrB);
  Id community = this->Community();
  Id publisher = s.CreatePublisher(PublisherRecord{.name = "P"}, kNow)->id;
  CampaignRecord c{.community_id = community,
                   .name = "Spring",
                   .status = CampaignStatus::kPaused,
                   .starts_at = kNow - 100,
                   .ends_at = kNow + 86'400,
                   .pricing_model = PricingModel::kCpa,
                   .bid_micros = 7'000'000,
                   .total_budget_micros = 500'000'000,
                   .daily_budget_micros = 50'000'000,
                   .target_projects = {b, a},
                   .exclude_projects = {a},
                   .chains = {1, 10},
                   .recency_days = 30,
                   .frequency_cap = FrequencyCap{.count = 3, .hours = 24},
                   .category = "defi",
                   .allowed_publishers = {publisher},
                   .pacing = "asap",
                   .advertiser_project = a,
                   .exclude_existing_users = true,
                   .conversion = ConversionRule{.projects = {a},
                                                .kind = ConversionKind::kReturning,
                                                .returning_after_days = 60,
                                                .window_days = 7,
                                                .count_once_per_person = false}};
  auto created = s.CreateCampaign(c, kNow);
  ASSERT_TRUE(created.ok()) << created.status().message();
  CampaignRecord got = *s.GetCampaign(created->id);
  c.id = got.id;
  c.created_at = c.updated_at = kNow;
  EXPECT_EQ(got.target_projects, c.target_projects) << "in the order given";
  EXPECT_EQ(got.exclude_projects, c.exclude_projects);
  EXPECT_EQ(got.chains, c.chains);
  EXPECT_EQ(got.recency_days, c.recency_days);
  EXPECT_EQ(got.frequency_cap, c.frequency_cap);
  EXPECT_EQ(got.allowed_publishers, c.allowed_publishers);
  EXPECT_EQ(got.pacing, "asap");
  EXPECT_EQ(got.advertiser_project, a);
  EXPECT_TRUE(got.exclude_existing_users);
  EXPECT_EQ(got.conversion, c.conversion);
  EXPECT_EQ(got.total_budget_micros, c.total_budget_micros);
  EXPECT_EQ(got.starts_at, c.starts_at);
  EXPECT_EQ(got.status, CampaignStatus::kPaused);
  EXPECT_EQ(got.pricing_model, PricingModel::kCpa);
  CampaignRecord orphan = c;
  orphan.community_id = 5555;
  EXPECT_EQ(s.CreateCampaign(orphan, kNow).status().message(), "community 5555 does not exist");
  CampaignRecord stray = c;
  stray.target_projects = {6666};
  EXPECT_EQ(s.CreateCampaign(stray, kNow).status().message(), "project 6666 does not exist");

  AdRecord ad{.campaign_id = got.id,
              .headline = "Swap <b>less</b>",
              .content = "Lower fees",
              .cta_url = "https://aave.example/?ref=1",
              .cta_label = "Go",
              .weight = 3,
              .status = AdStatus::kPaused,
              .ab_arm = "b",
              .review_status = ReviewStatus::kRejected,
              .review_reason = "too loud"};
  ad.images[0] = "https://img.example/l.png";
  ad.images[2] = "https://img.example/s.png";
  auto made = s.CreateAd(ad, kNow);
  ASSERT_TRUE(made.ok()) << made.status().message();
  AdRecord read = *s.GetAd(made->id);
  EXPECT_EQ(read.headline, ad.headline);
  EXPECT_EQ(read.images, ad.images);
  EXPECT_EQ(read.weight, 3);
  EXPECT_EQ(read.status, AdStatus::kPaused);
  EXPECT_EQ(read.ab_arm, "b");
  EXPECT_EQ(read.review_status, ReviewStatus::kRejected);
  EXPECT_EQ(read.review_reason, "too loud");
  EXPECT_EQ(s.ListAds(got.id)->size(), 1u);
  EXPECT_TRUE(s.ListAds(got.id + 1)->empty());
  AdRecord stray_ad = ad;
  stray_ad.campaign_id = 8888;
  EXPECT_EQ(s.CreateAd(stray_ad, kNow).status().message(), "campaign 8888 does not exist");
  EXPECT_FALSE(read.archived);
  EXPECT_FALSE(got.archived_at.has_value());

  // Archiving (issue 38): stamped with the first archiving write's time, kept by later writes,
  // cleared by restoring.
  read.archived = true;
  AdRecord archived_ad = *s.UpdateAd(read, kNow + 5);
  EXPECT_TRUE(archived_ad.archived);
  EXPECT_EQ(archived_ad.archived_at, kNow + 5);
  archived_ad.weight = 4;
  EXPECT_EQ(s.UpdateAd(archived_ad, kNow + 9)->archived_at, kNow + 5);
  got.archived = true;
  EXPECT_EQ(s.UpdateCampaign(got, kNow + 7)->archived_at, kNow + 7);
  CampaignRecord archived_campaign = *s.GetCampaign(got.id);
  EXPECT_TRUE(archived_campaign.archived);
  EXPECT_EQ(archived_campaign.archived_at, kNow + 7);
  archived_campaign.archived = false;
  archived_campaign.archived_at.reset();
  CampaignRecord restored = *s.UpdateCampaign(archived_campaign, kNow + 8);
  EXPECT_FALSE(restored.archived);
  EXPECT_FALSE(restored.archived_at.has_value());
  // Deleting the campaign deletes its ads.
  ASSERT_TRUE(s.DeleteCampaign(got.id).ok());
  EXPECT_EQ(s.GetAd(made->id).status().code(), Code::kNotFound);
}

TYPED_TEST(InventoryContractTest, TheCatalogHasEverythingAndTheCounterMovesForEveryProcess) {
  InventoryStore& s = *this->store_;
  auto other = this->backend_.Open();  // another process on the same store
  ASSERT_TRUE(other);
  uint64_t before = *other->ChangeCounter();
  Id project = this->Project("lido", 1, kAddrA);
  Id community = this->Community();
  Id publisher = s.CreatePublisher(PublisherRecord{.name = "P"}, kNow)->id;
  ApiKeyRecord k{.publisher_id = publisher, .prefix = "spk_x"};
  k.hash.fill(3);
  ASSERT_TRUE(s.CreateApiKey(k, kNow).ok());
  Id campaign = s.CreateCampaign(CampaignRecord{.community_id = community,
                                                .name = "C",
                                                .status = CampaignStatus::kActive,
                                                .bid_micros = 1,
                                                .target_projects = {project}},
                                 kNow)
                    ->id;
  AdRecord ad;
  ad.campaign_id = campaign;
  ad.headline = "h";
  ad.content = "c";
  ad.cta_url = "https://x.example";
  ad.cta_label = "l";
  ASSERT_TRUE(s.CreateAd(ad, kNow).ok());
  uint64_t after = *other->ChangeCounter();
  EXPECT_GE(after, before + 6) << "every write moved it";
  CatalogData d = *other->LoadCatalogData();
  EXPECT_EQ(d.publishers.size(), 1u);
  EXPECT_EQ(d.api_keys.size(), 1u);
  EXPECT_EQ(d.communities.size(), 1u);
  EXPECT_EQ(d.projects.size(), 1u);
  ASSERT_EQ(d.campaigns.size(), 1u);
  EXPECT_EQ(d.campaigns[0].target_projects, std::vector<Id>{project});
  EXPECT_EQ(d.ads.size(), 1u);
  // A failed write and a counter save leave it alone.
  ad.campaign_id = 99'999;
  EXPECT_FALSE(s.CreateAd(ad, kNow).ok());
  auto counters = this->backend_.OpenCounters();
  ASSERT_TRUE(counters);
  ASSERT_TRUE(
      counters->SaveCampaignCounters({CampaignCountersRecord{.campaign_id = campaign}}).ok());
  EXPECT_EQ(*other->ChangeCounter(), after);
}

}  // namespace
}  // namespace adserver::store

namespace adserver::store {
namespace {

// A failed write reaches nothing: the campaign is not created and the change counter does not
// move; the retry creates it.
TEST(FaultyInventoryStoreTest, AFailedWriteChangesNothingAndTheRetryWrites) {
  SqliteInventory backend;
  std::shared_ptr<InventoryStore> inner = backend.Open();
  ASSERT_TRUE(inner);
  adserver::testing::FaultPlan plan;
  adserver::testing::FaultyInventoryStore store(*inner, plan);
  auto community = store.CreateCommunity(CommunityRecord{.name = "C"}, kNow);
  ASSERT_TRUE(community.ok());
  uint64_t before = *store.ChangeCounter();
  CampaignRecord c;
  c.community_id = community->id;
  c.name = "x";
  plan.FailNext(1);
  EXPECT_EQ(store.CreateCampaign(c, kNow).status().code(), Code::kUnavailable);
  EXPECT_TRUE(inner->ListCampaigns()->empty());
  EXPECT_EQ(*store.ChangeCounter(), before);
  ASSERT_TRUE(store.CreateCampaign(c, kNow).ok());
  EXPECT_EQ(inner->ListCampaigns()->size(), 1u);
  EXPECT_GT(*store.ChangeCounter(), before);
}

}  // namespace
}  // namespace adserver::store
