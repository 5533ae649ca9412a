#include "decision/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "common/crypto.h"
#include "unit/decision/test_catalog.h"

namespace adserver::decision {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TestCatalog;

std::vector<double> Values(std::span<const Catalog::WalkEntry> run) {
  std::vector<double> out;
  for (const Catalog::WalkEntry& e : run) out.push_back(e.value);
  return out;
}

TEST(CatalogTest, IndexesCampaignsByTargetedProject) {
  TestCatalog t;
  t.AddCampaign(1, {5, 6});
  t.AddCampaign(2, {6});
  t.AddCampaign(3, {7, 7});  // a duplicate target is indexed once
  const Catalog& catalog = t.Finish();

  EXPECT_THAT(catalog.CampaignsForProject(5), ElementsAre(0u));
  EXPECT_THAT(catalog.CampaignsForProject(6), ElementsAre(0u, 1u));
  EXPECT_THAT(catalog.CampaignsForProject(7), ElementsAre(2u));
  EXPECT_THAT(catalog.CampaignsForProject(8), IsEmpty());
}

TEST(CatalogTest, ProjectCampaignsAreOrderedByValue) {
  TestCatalog t;
  t.AddCampaign(1, {5}, 1000);
  t.AddCampaign(2, {5}, 3000);
  t.AddCampaign(3, {5}, 1000);
  t.AddCampaign(4, {5}, 2000);
  const Catalog& catalog = t.Finish();

  EXPECT_THAT(catalog.CampaignsForProject(5), ElementsAre(1u, 3u, 0u, 2u));
  const Catalog::ProjectCampaigns five = catalog.FindProjectCampaigns(5);
  EXPECT_THAT(Values(five.steady), ElementsAre(3000, 2000, 1000, 1000));
  EXPECT_THAT(five.boostable, IsEmpty());
  EXPECT_EQ(five.steady_top, 3000);
  EXPECT_TRUE(catalog.FindProjectCampaigns(6).empty());
  EXPECT_TRUE(catalog.FindProjectCampaigns(1000).empty());
}

TEST(CatalogTest, BoostableCampaignsFormTheirOwnRunAfterTheSteadyOnes) {
  TestCatalog t;
  t.AddCampaign(1, {5}, 1000);
  t.AddCampaign(2, {5}, 3000).daily_budget_micros = 100;  // even pacing: can be boosted
  t.AddCampaign(3, {5}, 2000);
  Campaign& asap = t.AddCampaign(4, {5}, 4000);
  asap.daily_budget_micros = 100;
  asap.pacing = PacingMode::kAsap;  // never above 1
  t.AddCampaign(5, {5}, 500).total_budget_micros = 100;  // no flight: never above 1
  const Catalog& catalog = t.Finish();

  EXPECT_THAT(catalog.CampaignsForProject(5), ElementsAre(3u, 2u, 0u, 4u, 1u));
  const Catalog::ProjectCampaigns five = catalog.FindProjectCampaigns(5);
  EXPECT_THAT(Values(five.steady), ElementsAre(4000, 2000, 1000, 500));
  EXPECT_THAT(Values(five.boostable), ElementsAre(3000));
  EXPECT_EQ(five.steady_top, 4000);
  EXPECT_EQ(five.boostable_top, 3000);
  EXPECT_TRUE(catalog.campaigns[1].pacing_can_boost);
  EXPECT_FALSE(catalog.campaigns[3].pacing_can_boost);
  EXPECT_EQ(catalog.project_id_limit, 6u);
}

TEST(CatalogTest, WalkEntriesCarryWhatTheWalkChecks) {
  TestCatalog t;
  t.AddCampaign(7, {5}, 3000).recency_days = 14;
  t.AddCampaign(int64_t{1} << 40, {5}, 2000).recency_days = -3;  // id too large for lift_id
  t.AddCampaign(9, {5}, 1000);                                   // no ads
  t.AddAd(7, 100).images[static_cast<int>(ImageFormat::kShortBanner)].clear();
  t.AddAd(int64_t{1} << 40, 101, 1, std::string(400, 'x'));
  const Catalog& catalog = t.Finish();

  const Catalog::ProjectCampaigns five = catalog.FindProjectCampaigns(5);
  ASSERT_EQ(five.steady.size(), 3u);
  const Catalog::WalkEntry& a = five.steady[0];
  EXPECT_EQ(a.campaign, 0u);
  EXPECT_EQ(a.max_age_days, 14u);
  EXPECT_EQ(a.lift_id, 7u);
  // Landscape, long banner and NO_IMAGE in both variants but NO_IMAGE of the earlier one.
  EXPECT_EQ(a.formats, 0b0011'1011);
  const Catalog::WalkEntry& b = five.steady[1];
  EXPECT_EQ(b.campaign, 1u);
  EXPECT_EQ(b.max_age_days, 0u);
  EXPECT_EQ(b.lift_id, kNone);
  EXPECT_EQ(b.formats, 0b0000'1111);  // content too long for the earlier variant
  const Catalog::WalkEntry& c = five.steady[2];
  EXPECT_EQ(c.max_age_days, Catalog::kAnyAge);
  EXPECT_EQ(c.lift_id, 9u);
  EXPECT_EQ(c.formats, 0);
}

TEST(CatalogTest, AdListsFollowFormatAndVariant) {
  TestCatalog t;
  t.AddCampaign(1, {5});
  t.AddAd(1, 100, 2);
  t.AddAd(1, 101, 3).images[static_cast<int>(ImageFormat::kShortBanner)].clear();
  t.AddAd(1, 102, 5, std::string(400, 'x'));
  const Catalog& catalog = t.Finish();
  const Campaign& c = catalog.campaigns[0];

  auto landscape = static_cast<int>(ImageFormat::kLandscape);
  auto short_banner = static_cast<int>(ImageFormat::kShortBanner);
  auto no_image = static_cast<int>(ImageFormat::kNoImage);
  EXPECT_THAT(c.ads_current[landscape], ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(c.weight_current[landscape], 10u);
  EXPECT_THAT(c.ads_current[short_banner], ElementsAre(0u, 2u));
  EXPECT_EQ(c.weight_current[short_banner], 7u);
  EXPECT_THAT(c.ads_current[no_image], ElementsAre(0u, 1u, 2u));
  // Earlier variant: content must be under 400 characters and there is no NO_IMAGE.
  EXPECT_THAT(c.ads_earlier[landscape], ElementsAre(0u, 1u));
  EXPECT_EQ(c.weight_earlier[landscape], 5u);
  EXPECT_THAT(c.ads_earlier[short_banner], ElementsAre(0u));
  EXPECT_THAT(c.ads_earlier[no_image], IsEmpty());
  EXPECT_EQ(c.weight_earlier[no_image], 0u);
}

TEST(CatalogTest, SampleAdsCoverAllCampaignsPerFormatAndVariant) {
  TestCatalog t;
  t.AddCampaign(1, {5});
  t.AddCampaign(2, {6});
  t.AddAd(1, 100);
  t.AddAd(2, 200).images[static_cast<int>(ImageFormat::kLongBanner)].clear();
  t.AddAd(2, 201, 1, std::string(399, 'x'));
  t.AddAd(1, 101, 1, std::string(400, 'x'));
  const Catalog& catalog = t.Finish();

  EXPECT_THAT(catalog.SampleAds(ImageFormat::kLandscape, false), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(catalog.SampleAds(ImageFormat::kLongBanner, false), ElementsAre(0u, 2u, 3u));
  EXPECT_THAT(catalog.SampleAds(ImageFormat::kNoImage, false), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(catalog.SampleAds(ImageFormat::kLandscape, true), ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(catalog.SampleAds(ImageFormat::kLongBanner, true), ElementsAre(0u, 2u));
  EXPECT_THAT(catalog.SampleAds(ImageFormat::kNoImage, true), IsEmpty());
}

TEST(CatalogTest, FindKeyMatchesTheFullHash) {
  ASSERT_TRUE(InitCrypto());
  TestCatalog t;
  t.catalog.api_keys.push_back({.id = 1, .publisher = 0, .hash = Sha256("spk_one"), .test = false});
  t.catalog.api_keys.push_back({.id = 2, .publisher = 0, .hash = Sha256("spk_two"), .test = true});
  const Catalog& catalog = t.Finish();

  const ApiKey* two = catalog.FindKey(Sha256("spk_two"));
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->id, 2);
  EXPECT_TRUE(two->test);
  EXPECT_EQ(catalog.FindKey(Sha256("spk_one"))->id, 1);
  EXPECT_EQ(catalog.FindKey(Sha256("spk_three")), nullptr);
  Sha256Digest almost = Sha256("spk_one");
  almost[31] ^= 1;
  EXPECT_EQ(catalog.FindKey(almost), nullptr);
}

TEST(CatalogTest, EmptyOriginListAllowsAnyOrigin) {
  Publisher p;
  EXPECT_TRUE(p.AllowsOrigin("https://anything.example"));
  EXPECT_TRUE(p.AllowsOrigin(""));
}

TEST(CatalogTest, OriginMustMatchExactly) {
  Publisher p{.id = 1,
              .name = "p",
              .allowed_origins = {"https://a.example", "https://b.example:8443"},
              .blocked_communities = {}};
  EXPECT_TRUE(p.AllowsOrigin("https://a.example"));
  EXPECT_TRUE(p.AllowsOrigin("https://b.example:8443"));
  EXPECT_FALSE(p.AllowsOrigin("http://a.example"));
  EXPECT_FALSE(p.AllowsOrigin("https://a.example/"));
  EXPECT_FALSE(p.AllowsOrigin("https://A.example"));
  EXPECT_FALSE(p.AllowsOrigin("https://sub.a.example"));
  EXPECT_FALSE(p.AllowsOrigin("https://b.example"));
  EXPECT_FALSE(p.AllowsOrigin(""));
}

TEST(CatalogTest, BlocksOnlyListedCommunities) {
  Publisher p{.id = 1, .name = "p", .allowed_origins = {}, .blocked_communities = {3, 8}};
  EXPECT_TRUE(p.BlocksCommunity(3));
  EXPECT_TRUE(p.BlocksCommunity(8));
  EXPECT_FALSE(p.BlocksCommunity(5));
}

}  // namespace
}  // namespace adserver::decision
