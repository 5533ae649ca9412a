#include "ingest/catalog_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "decision/engine.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::ingest {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01 00:00 UTC
constexpr int kLandscape = static_cast<int>(ImageFormat::kLandscape);
constexpr int kLongBanner = static_cast<int>(ImageFormat::kLongBanner);
constexpr int kShortBanner = static_cast<int>(ImageFormat::kShortBanner);
constexpr int kNoImage = static_cast<int>(ImageFormat::kNoImage);

Address Wallet(uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

store::CampaignRecord Campaign(store::Id id, std::vector<store::Id> targets,
                               CampaignStatus status = CampaignStatus::kActive) {
  store::CampaignRecord c;
  c.id = id;
  c.community_id = 20;
  c.name = "campaign " + std::to_string(id);
  c.status = status;
  c.pricing_model = PricingModel::kCpm;
  c.bid_micros = 2'000'000;
  c.target_projects = std::move(targets);
  return c;
}

store::AdRecord Ad(store::Id id, store::Id campaign_id, AdStatus status = AdStatus::kActive) {
  store::AdRecord a;
  a.id = id;
  a.campaign_id = campaign_id;
  a.headline = "Headline";
  a.content = "Some **content**";
  a.cta_url = "https://example.com";
  a.cta_label = "Go";
  a.images = {"https://img/l.png", "https://img/lb.png", "https://img/sb.png"};
  a.status = status;
  return a;
}

// One publisher (1) with a live and a revoked key, communities 20 and 21, projects 5, 6, 7
// and an active campaign 100 targeting project 5 with ad 1000.
store::CatalogData BaseData() {
  store::CatalogData d;
  d.publishers.push_back({.id = 1,
                          .name = "News",
                          .allowed_origins = {"https://z.example", "https://a.example"},
                          .blocked_communities = {21, 3},
                          .created_at = 0,
                          .updated_at = 0});
  d.api_keys.push_back({.id = 1,
                        .publisher_id = 1,
                        .hash = Sha256("spk_live"),
                        .prefix = "spk_live",
                        .test = false,
                        .created_at = 0,
                        .revoked_at = std::nullopt});
  d.api_keys.push_back({.id = 2,
                        .publisher_id = 1,
                        .hash = Sha256("spk_gone"),
                        .prefix = "spk_gone",
                        .test = false,
                        .created_at = 0,
                        .revoked_at = kNow});
  d.communities.push_back({.id = 20,
                           .name = "Twenty",
                           .logo_url = "https://l/20.png",
                           .created_at = 0,
                           .updated_at = 0});
  d.communities.push_back({.id = 21,
                           .name = "TwentyOne",
                           .logo_url = "https://l/21.png",
                           .created_at = 0,
                           .updated_at = 0});
  for (store::Id id : {5, 6, 7}) {
    store::ProjectRecord p;
    p.id = id;
    p.slug = "project-" + std::to_string(id);
    p.name = "Project " + std::to_string(id);
    d.projects.push_back(p);
  }
  d.projects[0].contracts.push_back({.chain_id = 1, .address = Wallet(0xAA)});
  d.projects[1].contracts.push_back({.chain_id = 137, .address = Wallet(0xAA)});
  d.campaigns.push_back(Campaign(100, {5}));
  d.ads.push_back(Ad(1000, 100));
  return d;
}

std::shared_ptr<const decision::Catalog> Build(const store::CatalogData& data,
                                               const decision::CatalogOptions& options = {}) {
  auto catalog = BuildCatalog(data, options);
  EXPECT_TRUE(catalog.ok()) << catalog.status().ToString();
  return catalog.ok() ? *catalog : nullptr;
}

class CatalogBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(InitCrypto()); }
};

TEST_F(CatalogBuilderTest, KeepsOnlyKeysThatAreNotRevoked) {
  auto catalog = Build(BaseData());
  ASSERT_EQ(catalog->api_keys.size(), 1u);
  EXPECT_EQ(catalog->api_keys[0].id, 1);
  EXPECT_EQ(catalog->api_keys[0].publisher, 0u);
  EXPECT_NE(catalog->FindKey(Sha256("spk_live")), nullptr);
  EXPECT_EQ(catalog->FindKey(Sha256("spk_gone")), nullptr);
}

TEST_F(CatalogBuilderTest, SortsPublisherOriginsAndBlockedCommunities) {
  auto catalog = Build(BaseData());
  ASSERT_EQ(catalog->publishers.size(), 1u);
  const decision::Publisher& p = catalog->publishers[0];
  EXPECT_EQ(p.name, "News");
  EXPECT_THAT(p.allowed_origins, ElementsAre("https://a.example", "https://z.example"));
  EXPECT_THAT(p.blocked_communities, ElementsAre(3, 21));
  EXPECT_TRUE(p.BlocksCommunity(21));
  EXPECT_TRUE(p.AllowsOrigin("https://z.example"));
}

TEST_F(CatalogBuilderTest, KeepsOnlyActiveCampaignsAndActiveAdsOfThem) {
  store::CatalogData d = BaseData();
  d.campaigns.push_back(Campaign(101, {5}, CampaignStatus::kPaused));
  d.campaigns.push_back(Campaign(102, {5}, CampaignStatus::kDraft));
  d.campaigns.push_back(Campaign(103, {5}, CampaignStatus::kEnded));
  d.campaigns.push_back(Campaign(104, {6}));
  d.ads.push_back(Ad(1010, 101));
  d.ads.push_back(Ad(1020, 102));
  d.ads.push_back(Ad(1030, 103));
  d.ads.push_back(Ad(1040, 104));
  d.ads.push_back(Ad(1041, 104, AdStatus::kPaused));
  auto catalog = Build(d);

  std::vector<int64_t> campaigns;
  for (const auto& c : catalog->campaigns) campaigns.push_back(c.id);
  EXPECT_THAT(campaigns, ElementsAre(100, 104));
  std::vector<int64_t> ads;
  for (const auto& a : catalog->ads) ads.push_back(a.id);
  EXPECT_THAT(ads, ElementsAre(1000, 1040));
  EXPECT_EQ(catalog->ads[1].campaign, 1u);
  EXPECT_THAT(catalog->CampaignsForProject(5), ElementsAre(0u));
  EXPECT_THAT(catalog->CampaignsForProject(6), ElementsAre(1u));
}

TEST_F(CatalogBuilderTest, KeepsOnlyApprovedAds) {
  store::CatalogData d = BaseData();
  d.ads.push_back(Ad(1001, 100));
  d.ads.back().review_status = store::ReviewStatus::kPending;
  d.ads.push_back(Ad(1002, 100));
  d.ads.back().review_status = store::ReviewStatus::kRejected;
  d.ads.back().review_reason = "misleading";
  d.ads.push_back(Ad(1003, 100));
  auto catalog = Build(d);
  std::vector<int64_t> ads;
  for (const auto& a : catalog->ads) ads.push_back(a.id);
  EXPECT_THAT(ads, ElementsAre(1000, 1003));
}

TEST_F(CatalogBuilderTest, CopiesCampaignFieldsAndSortsLists) {
  store::CatalogData d = BaseData();
  store::CampaignRecord& c = d.campaigns[0];
  c.id = 9'007'199'254'740'993;  // beyond double precision: id_str must be exact
  c.community_id = 21;
  c.starts_at = kNow;
  c.ends_at = kNow + 86400;
  c.target_projects = {7, 5, 7};
  c.exclude_projects = {6, 5};
  c.chains = {137, 1, 10};
  c.recency_days = 30;
  d.ads[0].campaign_id = c.id;
  auto catalog = Build(d);

  const decision::Campaign& out = catalog->campaigns[0];
  EXPECT_EQ(out.id_str, "9007199254740993");
  EXPECT_EQ(out.community, 1u);
  EXPECT_EQ(catalog->communities[out.community].name, "TwentyOne");
  EXPECT_EQ(out.community_id, 21);
  EXPECT_EQ(out.starts_at, kNow);
  EXPECT_EQ(out.ends_at, kNow + 86400);
  EXPECT_THAT(out.target_projects, UnorderedElementsAre(5u, 7u));
  EXPECT_THAT(out.exclude_projects, ElementsAre(5u, 6u));
  EXPECT_THAT(out.chains, ElementsAre(1u, 10u, 137u));
  EXPECT_EQ(out.recency_days, 30);
  EXPECT_THAT(catalog->CampaignsForProject(7), ElementsAre(0u));
}

TEST_F(CatalogBuilderTest, FillsProjectsAndContracts) {
  auto catalog = Build(BaseData());
  ASSERT_EQ(catalog->projects.size(), 3u);
  EXPECT_EQ(catalog->projects.at(6).slug, "project-6");
  EXPECT_EQ(catalog->projects.at(6).name, "Project 6");
  EXPECT_EQ(catalog->contract_to_project.at({1, Wallet(0xAA)}), 5u);
  EXPECT_EQ(catalog->contract_to_project.at({137, Wallet(0xAA)}), 6u);
  EXPECT_FALSE(catalog->contract_to_project.contains({10, Wallet(0xAA)}));
}

TEST_F(CatalogBuilderTest, ValuesBidsByPricingModel) {
  store::CatalogData d = BaseData();
  d.campaigns[0].pricing_model = PricingModel::kCpm;
  d.campaigns[0].bid_micros = 2'000'000;  // 2.00 per mille -> 2000 micros per impression
  d.campaigns.push_back(Campaign(101, {5}));
  d.campaigns.back().pricing_model = PricingModel::kCpc;
  d.campaigns.back().bid_micros = 500'000;  // 0.50 per click
  d.campaigns.push_back(Campaign(102, {5}));
  d.campaigns.back().pricing_model = PricingModel::kCpa;
  d.campaigns.back().bid_micros = 3'000'000;  // 3.00 per action
  d.campaigns.back().conversion = store::ConversionRule{.projects = {5}};
  d.projects[0].owner_community_id = 20;  // the CPA campaign's community owns project 5

  auto defaults = Build(d);
  EXPECT_DOUBLE_EQ(defaults->campaigns[0].value_micros, 2000);
  EXPECT_DOUBLE_EQ(defaults->campaigns[1].value_micros, 5000);  // x 0.01
  EXPECT_DOUBLE_EQ(defaults->campaigns[2].value_micros, 3000);  // x 0.001

  auto tuned = Build(d, {.default_ctr = 0.002, .default_cvr = 0.01});
  EXPECT_DOUBLE_EQ(tuned->campaigns[0].value_micros, 2000);
  EXPECT_DOUBLE_EQ(tuned->campaigns[1].value_micros, 1000);
  EXPECT_DOUBLE_EQ(tuned->campaigns[2].value_micros, 30000);
}

TEST_F(CatalogBuilderTest, CpcCampaignOutbidsCheaperCpmCampaign) {
  store::CatalogData d = BaseData();
  d.campaigns[0].bid_micros = 4'000'000;  // CPM 4.00 -> 4000
  d.campaigns.push_back(Campaign(101, {5}));
  d.campaigns.back().pricing_model = PricingModel::kCpc;
  d.campaigns.back().bid_micros = 500'000;  // CPC 0.50 x 1% -> 5000
  d.ads.push_back(Ad(1010, 101));
  auto catalog = Build(d);
  decision::ActivityIndex activity;
  activity.Add(Wallet(1), {.project_id = 5, .chain_id = 1, .last_seen_day = 20454, .count = 1});
  activity.Finalize();

  std::vector<Address> wallets = {Wallet(1)};
  decision::DecisionRequest request{.wallets = wallets,
                                    .format = ImageFormat::kLandscape,
                                    .publisher = &catalog->publishers[0],
                                    .now_seconds = kNow};
  decision::Rng rng(1);
  auto decision = decision::Decide(request, *catalog, activity, rng);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->campaign->id, 101);

  // With a 0.5% predicted click rate the CPC bid is worth 2500 and the CPM campaign wins.
  auto tuned = Build(d, {.default_ctr = 0.005, .default_cvr = 0.001});
  request.publisher = &tuned->publishers[0];
  EXPECT_EQ(decision::Decide(request, *tuned, activity, rng)->campaign->id, 100);
}

TEST_F(CatalogBuilderTest, CountsContentInCodePoints) {
  store::CatalogData d = BaseData();
  d.ads[0].content = "h\xC3\xA9llo \xF0\x9F\x9A\x80";  // "héllo 🚀": 7 code points, 11 bytes
  d.ads.push_back(Ad(1001, 100));
  // 399 two-byte characters: 798 bytes but under the earlier variant's 400-character limit.
  d.ads.back().content.clear();
  for (int i = 0; i < 399; ++i) d.ads.back().content += "\xC3\xA9";
  d.ads.push_back(Ad(1002, 100));
  d.ads.back().content = std::string(400, 'x');
  auto catalog = Build(d);

  EXPECT_EQ(catalog->ads[0].content_chars, 7u);
  EXPECT_EQ(catalog->ads[1].content_chars, 399u);
  EXPECT_EQ(catalog->ads[2].content_chars, 400u);
  const decision::Campaign& c = catalog->campaigns[0];
  EXPECT_THAT(c.ads_current[kLandscape], ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(c.ads_earlier[kLandscape], ElementsAre(0u, 1u));
}

TEST_F(CatalogBuilderTest, BuildsAdListsAndWeightsPerFormat) {
  store::CatalogData d = BaseData();
  d.ads[0].weight = 2;
  d.ads[0].images[kShortBanner].clear();
  d.ads.push_back(Ad(1001, 100));
  d.ads.back().weight = 5;
  d.ads.back().images = {"", "https://img/lb.png", ""};
  auto catalog = Build(d);

  const decision::Campaign& c = catalog->campaigns[0];
  EXPECT_EQ(catalog->ads[0].id_str, "1000");
  EXPECT_EQ(catalog->ads[1].weight, 5u);
  EXPECT_THAT(c.ads_current[kLandscape], ElementsAre(0u));
  EXPECT_THAT(c.ads_current[kLongBanner], ElementsAre(0u, 1u));
  EXPECT_THAT(c.ads_current[kShortBanner], IsEmpty());
  EXPECT_THAT(c.ads_current[kNoImage], ElementsAre(0u, 1u));
  EXPECT_EQ(c.weight_current[kLongBanner], 7u);
  EXPECT_EQ(c.weight_current[kNoImage], 7u);
  EXPECT_EQ(c.weight_current[kShortBanner], 0u);
  EXPECT_THAT(c.ads_earlier[kLongBanner], ElementsAre(0u, 1u));
  EXPECT_THAT(c.ads_earlier[kNoImage], IsEmpty());
  EXPECT_THAT(catalog->SampleAds(ImageFormat::kLongBanner, false), ElementsAre(0u, 1u));
  EXPECT_THAT(catalog->SampleAds(ImageFormat::kLandscape, true), ElementsAre(0u));
}

TEST_F(CatalogBuilderTest, InconsistentReferencesAreInternal) {
  {
    store::CatalogData d = BaseData();
    d.api_keys[0].publisher_id = 99;
    EXPECT_EQ(BuildCatalog(d, {}).status().code(), Code::kInternal);
  }
  {
    store::CatalogData d = BaseData();
    d.campaigns[0].community_id = 99;
    EXPECT_EQ(BuildCatalog(d, {}).status().code(), Code::kInternal);
  }
  {
    store::CatalogData d = BaseData();
    d.campaigns[0].target_projects = {5, 99};
    EXPECT_EQ(BuildCatalog(d, {}).status().code(), Code::kInternal);
  }
  {
    store::CatalogData d = BaseData();
    d.campaigns[0].exclude_projects = {99};
    EXPECT_EQ(BuildCatalog(d, {}).status().code(), Code::kInternal);
  }
  {
    store::CatalogData d = BaseData();
    d.ads.push_back(Ad(1001, 999));
    EXPECT_EQ(BuildCatalog(d, {}).status().code(), Code::kInternal);
  }
}

// Issue 39: a campaign counts conversions only on projects an operator verified as its
// community's own; a CPA campaign left without one is not served (it could never bill).
TEST_F(CatalogBuilderTest, ConversionProjectsAreOnlyTheCommunitysVerifiedOwn) {
  store::CatalogData d = BaseData();
  d.projects[0].owner_community_id = 20;  // project 5: community 20's
  d.projects[1].owner_community_id = 21;  // project 6: another community's
  // project 7: nobody's
  d.campaigns[0].conversion = store::ConversionRule{.projects = {5, 6, 7}};
  d.campaigns.push_back(Campaign(101, {5}));
  d.campaigns.back().pricing_model = PricingModel::kCpa;
  d.campaigns.back().conversion = store::ConversionRule{.projects = {6, 7}};
  d.campaigns.push_back(Campaign(102, {5}));
  d.campaigns.back().pricing_model = PricingModel::kCpa;
  d.campaigns.back().conversion = store::ConversionRule{.projects = {5}};
  auto catalog = Build(d);
  ASSERT_EQ(catalog->campaigns.size(), 2u);
  EXPECT_EQ(catalog->campaigns[0].id, 100);
  ASSERT_TRUE(catalog->campaigns[0].conversion.has_value());
  EXPECT_THAT(catalog->campaigns[0].conversion->projects, ElementsAre(5));
  EXPECT_EQ(catalog->campaigns[1].id, 102);  // 101 names no project of its own
  // The owner changes: campaign 102 no longer converts on 5, and is not served.
  d.projects[0].owner_community_id = 21;
  catalog = Build(d);
  ASSERT_EQ(catalog->campaigns.size(), 1u);
  EXPECT_TRUE(catalog->campaigns[0].conversion->projects.empty());
}

// Issue 37: campaigns with a conversion rule that are not served (paused, ended) keep having
// their conversions attributed, with their bid and total budget; drafts never served.
TEST_F(CatalogBuilderTest, StoppedCampaignsWithAConversionRuleStayAttributable) {
  store::CatalogData d = BaseData();
  d.projects[0].owner_community_id = 20;
  for (auto [id, status] :
       {std::pair{101, CampaignStatus::kPaused}, std::pair{102, CampaignStatus::kEnded},
        std::pair{103, CampaignStatus::kDraft}, std::pair{104, CampaignStatus::kActive}}) {
    d.campaigns.push_back(Campaign(id, {5}, status));
    d.campaigns.back().pricing_model = PricingModel::kCpa;
    d.campaigns.back().bid_micros = 3'000'000;
    d.campaigns.back().total_budget_micros = 50'000'000;
    d.campaigns.back().conversion = store::ConversionRule{.projects = {5}, .window_days = 7};
  }
  auto catalog = Build(d);
  ASSERT_EQ(catalog->campaigns.size(), 2u);  // 100 and 104 are served
  std::vector<int64_t> attributable;
  for (decision::Index i : catalog->ConversionCampaigns(5)) {
    attributable.push_back(catalog->conversion_campaign(i).id);
  }
  EXPECT_THAT(attributable, UnorderedElementsAre(101, 102, 104));
  const decision::ConversionCampaign* paused = catalog->FindConversionCampaign(101);
  ASSERT_NE(paused, nullptr);
  EXPECT_EQ(paused->bid_micros, 3'000'000);
  EXPECT_EQ(paused->total_budget_micros, 50'000'000);
  EXPECT_EQ(paused->rule.window_days, 7);
  EXPECT_EQ(catalog->FindCampaign(101), nullptr);
  EXPECT_EQ(catalog->FindConversionCampaign(103), nullptr);
  EXPECT_EQ(catalog->max_conversion_window_days(), 7);
}

// Issue 39: served ads carry their community's approved brand; an edit waiting for review
// does not serve, and a community with no approved brand serves no ad.
TEST_F(CatalogBuilderTest, CommunitiesServeTheirApprovedBrand) {
  store::CatalogData d = BaseData();
  d.communities[0].name = "Twenty (renamed)";
  d.communities[0].logo_url = "https://l/new.png";
  d.communities[0].review_status = store::ReviewStatus::kPending;
  d.communities[0].approved =
      store::CommunityBrand{.name = "Twenty", .logo_url = "https://l/20.png"};
  auto catalog = Build(d);
  ASSERT_EQ(catalog->campaigns.size(), 1u);
  const decision::Community& served = catalog->communities[catalog->campaigns[0].community];
  EXPECT_EQ(served.name, "Twenty");
  EXPECT_EQ(served.logo_url, "https://l/20.png");
  // Never approved (a rejected first brand): the community's campaigns do not serve.
  d.communities[0].review_status = store::ReviewStatus::kRejected;
  d.communities[0].approved.reset();
  catalog = Build(d);
  EXPECT_TRUE(catalog->campaigns.empty());
  EXPECT_TRUE(catalog->ads.empty());
  // Approved and not yet settled by a store: served as written.
  d.communities[0].review_status = store::ReviewStatus::kApproved;
  catalog = Build(d);
  ASSERT_EQ(catalog->campaigns.size(), 1u);
  EXPECT_EQ(catalog->communities[catalog->campaigns[0].community].name, "Twenty (renamed)");
}

// CatalogOptions::render_ad runs once per ad of the catalog, with the community its campaign
// serves (the approved brand); without it the ads carry nothing rendered.
TEST_F(CatalogBuilderTest, RendersEveryAdWithItsCampaignsCommunity) {
  store::CatalogData d = BaseData();
  d.ads.push_back(Ad(1001, 100));
  d.communities[0].review_status = store::ReviewStatus::kPending;
  d.communities[0].name = "Twenty (renamed)";
  d.communities[0].approved = store::CommunityBrand{.name = "Twenty", .logo_url = "https://l/a"};
  int calls = 0;
  decision::CatalogOptions options;
  options.render_ad = [&calls](const decision::Ad& ad, const decision::Community* community) {
    ++calls;
    return ad.id_str + "/" + (community != nullptr ? community->name : "none");
  };
  auto catalog = Build(d, options);
  ASSERT_EQ(catalog->ads.size(), 2u);
  EXPECT_EQ(calls, 2);
  for (const decision::Ad& ad : catalog->ads) {
    EXPECT_EQ(ad.rendered, ad.id_str + "/Twenty");
  }
  EXPECT_TRUE(Build(d)->ads[0].rendered.empty());
}

TEST_F(CatalogBuilderTest, EmptyDataGivesAnEmptyCatalog) {
  auto catalog = Build({});
  EXPECT_TRUE(catalog->campaigns.empty());
  EXPECT_TRUE(catalog->SampleAds(ImageFormat::kLandscape, false).empty());
  EXPECT_EQ(catalog->FindKey(Sha256("spk_live")), nullptr);
}

TEST(BuildActivityIndexTest, ReadsEveryActivityRow) {
  testing::TempDir dir;
  auto opened = store::SqliteStore::Open(dir.File("ads.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store::SqliteStore& store = **opened;
  store::ProjectRecord project;
  project.slug = "uniswap";
  project.name = "Uniswap";
  auto p1 = store.CreateProject(project, kNow);
  project.slug = "aave";
  project.name = "Aave";
  auto p2 = store.CreateProject(project, kNow);
  ASSERT_TRUE(p1.ok() && p2.ok());
  std::vector<store::ActivityRecord> rows = {
      {.wallet = Wallet(1),
       .project_id = p2->id,
       .chain_id = 1,
       .last_seen = kNow + 3600,
       .count = 3},
      {.wallet = Wallet(1),
       .project_id = p1->id,
       .chain_id = 137,
       .last_seen = kNow - 1,
       .count = 6'000'000'000},
      {.wallet = Wallet(2), .project_id = p1->id, .chain_id = 1, .last_seen = kNow, .count = 1},
  };
  ASSERT_TRUE(store.RecordActivity(rows).ok());

  auto index = BuildActivityIndex(store);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->wallet_count(), 2u);
  auto one = (*index)->Lookup(Wallet(1));
  ASSERT_EQ(one.size(), 2u);
  uint32_t today = static_cast<uint32_t>(DayOf(kNow));
  EXPECT_EQ(one[0], (decision::Interaction{.project_id = static_cast<uint32_t>(p1->id),
                                           .chain_id = 137,
                                           .last_seen_day = today - 1,
                                           .count = std::numeric_limits<uint32_t>::max()}));
  EXPECT_EQ(one[1], (decision::Interaction{.project_id = static_cast<uint32_t>(p2->id),
                                           .chain_id = 1,
                                           .last_seen_day = today,
                                           .count = 3}));
  EXPECT_EQ((*index)->Lookup(Wallet(2)).size(), 1u);
  EXPECT_TRUE((*index)->Lookup(Wallet(3)).empty());
}

}  // namespace
}  // namespace adserver::ingest
