// SQLite persistence of the decision engine's additions (issue 4): controls on publishers,
// campaigns and ads, and campaign counters.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kNow = 1'767'225'600;

class DecisionTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
  }

  CampaignRecord NewCampaign(Id community, Id project) {
    CampaignRecord c;
    c.community_id = community;
    c.name = "c";
    c.status = CampaignStatus::kActive;
    c.bid_micros = 1'000'000;
    c.target_projects = {project};
    return c;
  }

  adserver::testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(DecisionTablesTest, PublisherControlsRoundTrip) {
  PublisherRecord p;
  p.name = "pub";
  p.allowed_communities = {3, 4};
  p.category_opt_ins = {"gambling", "nft"};
  p.floor_cpm_micros = 1'500'000;
  p.ab_arms = {"A", "b_2"};
  auto created = store_->CreatePublisher(p, kNow);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->allowed_communities, p.allowed_communities);
  EXPECT_EQ(created->category_opt_ins, p.category_opt_ins);
  EXPECT_EQ(created->floor_cpm_micros, p.floor_cpm_micros);
  EXPECT_EQ(created->ab_arms, p.ab_arms);

  PublisherRecord changed = *created;
  changed.floor_cpm_micros.reset();
  changed.ab_arms.clear();
  auto updated = store_->UpdatePublisher(changed, kNow + 1);
  ASSERT_TRUE(updated.ok());
  EXPECT_FALSE(updated->floor_cpm_micros);
  EXPECT_TRUE(updated->ab_arms.empty());
  EXPECT_EQ(store_->ListPublishers()->at(0).category_opt_ins, p.category_opt_ins);
}

TEST_F(DecisionTablesTest, CampaignAndAdControlsRoundTripAndReachTheCatalogData) {
  auto community = store_->CreateCommunity({.name = "c", .logo_url = "https://l"}, kNow);
  ProjectRecord project;
  project.slug = "uni";
  project.name = "Uni";
  auto proj = store_->CreateProject(project, kNow);
  ASSERT_TRUE(community.ok() && proj.ok());
  CampaignRecord c = NewCampaign(community->id, proj->id);
  c.category = "gambling";
  c.allowed_publishers = {1, 9};
  c.pacing = "asap";
  c.advertiser_project = proj->id;
  c.exclude_existing_users = true;
  c.explore = false;
  auto campaign = store_->CreateCampaign(c, kNow);
  ASSERT_TRUE(campaign.ok()) << campaign.status().message();
  EXPECT_EQ(campaign->category, "gambling");
  EXPECT_EQ(campaign->allowed_publishers, c.allowed_publishers);
  EXPECT_EQ(campaign->pacing, "asap");
  EXPECT_EQ(campaign->advertiser_project, proj->id);
  EXPECT_TRUE(campaign->exclude_existing_users);
  EXPECT_FALSE(campaign->explore);

  AdRecord a;
  a.campaign_id = campaign->id;
  a.headline = "h";
  a.content = "c";
  a.cta_url = "https://x";
  a.cta_label = "go";
  a.ab_arm = "control";
  auto ad = store_->CreateAd(a, kNow);
  ASSERT_TRUE(ad.ok());
  EXPECT_EQ(ad->ab_arm, "control");

  auto data = store_->LoadCatalogData();
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->campaigns.at(0).pacing, "asap");
  EXPECT_FALSE(data->campaigns.at(0).explore);
  EXPECT_EQ(data->ads.at(0).ab_arm, "control");

  CampaignRecord plain = *campaign;
  plain.category.clear();
  plain.pacing = "even";
  plain.advertiser_project.reset();
  plain.explore = true;
  auto updated = store_->UpdateCampaign(plain, kNow + 1);
  ASSERT_TRUE(updated.ok());
  EXPECT_TRUE(updated->explore);
  EXPECT_EQ(updated->category, "");
  EXPECT_EQ(updated->pacing, "even");
  EXPECT_FALSE(updated->advertiser_project);
  // Deleting the campaign removes its controls with it.
  EXPECT_TRUE(store_->DeleteCampaign(campaign->id).ok());
}

TEST_F(DecisionTablesTest, RecordsWithoutControlsGetTheDefaults) {
  auto community = store_->CreateCommunity({.name = "c", .logo_url = "https://l"}, kNow);
  ProjectRecord project;
  project.slug = "uni";
  project.name = "Uni";
  auto proj = store_->CreateProject(project, kNow);
  auto campaign = store_->CreateCampaign(NewCampaign(community->id, proj->id), kNow);
  ASSERT_TRUE(campaign.ok());
  EXPECT_EQ(campaign->pacing, "even");
  EXPECT_TRUE(campaign->category.empty());
  EXPECT_FALSE(campaign->exclude_existing_users);
  EXPECT_TRUE(campaign->explore);
}

TEST_F(DecisionTablesTest, CampaignCountersAreUpsertedAndLoaded) {
  std::vector<CampaignCountersRecord> rows = {
      {.campaign_id = 7,
       .total_spend = 100,
       .impressions = 10,
       .clicks = 1,
       .conversions = 0,
       .day = 20454,
       .day_spend = 100,
       .hour = 490896,
       .hour_spend = 50},
      {.campaign_id = 8, .total_spend = 5, .impressions = 5}};
  ASSERT_TRUE(store_->SaveCampaignCounters(rows).ok());
  rows[0].total_spend = 250;
  rows[0].impressions = 25;
  ASSERT_TRUE(store_->SaveCampaignCounters({rows[0]}).ok());
  auto loaded = store_->LoadCampaignCounters();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, rows);
}

TEST_F(DecisionTablesTest, SavingCountersIsNotAnInventoryChange) {
  uint64_t before = *store_->ChangeCounter();
  ASSERT_TRUE(store_->SaveCampaignCounters({{.campaign_id = 1, .total_spend = 1}}).ok());
  EXPECT_EQ(*store_->ChangeCounter(), before);
}

TEST_F(DecisionTablesTest, CountersSurviveReopening) {
  ASSERT_TRUE(store_->SaveCampaignCounters({{.campaign_id = 3, .total_spend = 42}}).ok());
  store_.reset();
  auto reopened = SqliteStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(reopened.ok());
  auto loaded = (*reopened)->LoadCampaignCounters();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ(loaded->at(0).total_spend, 42);
}

}  // namespace
}  // namespace adserver::store
