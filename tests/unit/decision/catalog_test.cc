#include "decision/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/crypto.h"
#include "unit/decision/test_catalog.h"

namespace adserver::decision {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TestCatalog;

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
  const Catalog::ProjectCampaigns* five = catalog.FindProjectCampaigns(5);
  ASSERT_NE(five, nullptr);
  EXPECT_THAT(five->values, ElementsAre(3000, 2000, 1000, 1000));
  EXPECT_EQ(catalog.FindProjectCampaigns(6), nullptr);
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

  const Catalog::ProjectCampaigns* five = catalog.FindProjectCampaigns(5);
  ASSERT_NE(five, nullptr);
  EXPECT_THAT(five->campaigns, ElementsAre(3u, 2u, 0u, 4u, 1u));
  EXPECT_THAT(five->values, ElementsAre(4000, 2000, 1000, 500, 3000));
  EXPECT_EQ(five->steady, 4u);
  EXPECT_TRUE(catalog.campaigns[1].pacing_can_boost);
  EXPECT_FALSE(catalog.campaigns[3].pacing_can_boost);
  EXPECT_EQ(catalog.project_id_limit, 6u);
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
