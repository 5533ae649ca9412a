#include "ingest/snapshot_publisher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/published.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace adserver::ingest {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kNow = 1'767'225'600;

Address Wallet(uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

using adserver::testing::WaitUntil;

// Forwards to another store; fails the catalog and activity reads while `fail` is set. With
// `counter_counts_activity`, ChangeCounter also moves on activity writes (the InventoryStore
// contract allows that; SqliteStore keeps the two apart).
class FaultyStore final : public store::InventoryStore, public store::ActivityStore {
 public:
  explicit FaultyStore(store::SqliteStore& base) : base_(base) {}
  std::atomic<bool> fail{false};
  std::atomic<bool> counter_counts_activity{false};
  std::mutex loaders_mu;
  std::set<std::thread::id> loaders;  // threads that loaded catalog data

  using Id = store::Id;
  Result<store::PublisherRecord> CreatePublisher(const store::PublisherRecord& p,
                                                 int64_t now) override {
    return base_.CreatePublisher(p, now);
  }
  Result<store::PublisherRecord> GetPublisher(Id id) override { return base_.GetPublisher(id); }
  Result<std::vector<store::PublisherRecord>> ListPublishers() override {
    return base_.ListPublishers();
  }
  Result<store::PublisherRecord> UpdatePublisher(const store::PublisherRecord& p,
                                                 int64_t now) override {
    return base_.UpdatePublisher(p, now);
  }
  Status DeletePublisher(Id id) override { return base_.DeletePublisher(id); }
  Result<store::ApiKeyRecord> CreateApiKey(const store::ApiKeyRecord& k, int64_t now) override {
    return base_.CreateApiKey(k, now);
  }
  Result<std::vector<store::ApiKeyRecord>> ListApiKeys(Id publisher_id) override {
    return base_.ListApiKeys(publisher_id);
  }
  Result<store::ApiKeyRecord> RevokeApiKey(Id publisher_id, Id key_id, int64_t now) override {
    return base_.RevokeApiKey(publisher_id, key_id, now);
  }
  Result<store::CommunityRecord> CreateCommunity(const store::CommunityRecord& c,
                                                 int64_t now) override {
    return base_.CreateCommunity(c, now);
  }
  Result<store::CommunityRecord> GetCommunity(Id id) override { return base_.GetCommunity(id); }
  Result<std::vector<store::CommunityRecord>> ListCommunities() override {
    return base_.ListCommunities();
  }
  Result<store::CommunityRecord> UpdateCommunity(const store::CommunityRecord& c,
                                                 int64_t now) override {
    return base_.UpdateCommunity(c, now);
  }
  Status DeleteCommunity(Id id) override { return base_.DeleteCommunity(id); }
  Result<store::ProjectRecord> CreateProject(const store::ProjectRecord& p, int64_t now) override {
    return base_.CreateProject(p, now);
  }
  Result<store::ProjectRecord> GetProject(Id id) override { return base_.GetProject(id); }
  Result<store::ProjectRecord> GetProjectBySlug(const std::string& slug) override {
    return base_.GetProjectBySlug(slug);
  }
  Result<std::vector<store::ProjectRecord>> ListProjects() override { return base_.ListProjects(); }
  Result<store::ProjectRecord> UpdateProject(const store::ProjectRecord& p, int64_t now) override {
    return base_.UpdateProject(p, now);
  }
  Status DeleteProject(Id id) override { return base_.DeleteProject(id); }
  Result<store::CampaignRecord> CreateCampaign(const store::CampaignRecord& c,
                                               int64_t now) override {
    return base_.CreateCampaign(c, now);
  }
  Result<store::CampaignRecord> GetCampaign(Id id) override { return base_.GetCampaign(id); }
  Result<std::vector<store::CampaignRecord>> ListCampaigns() override {
    return base_.ListCampaigns();
  }
  Result<store::CampaignRecord> UpdateCampaign(const store::CampaignRecord& c,
                                               int64_t now) override {
    return base_.UpdateCampaign(c, now);
  }
  Status DeleteCampaign(Id id) override { return base_.DeleteCampaign(id); }
  Result<store::AdRecord> CreateAd(const store::AdRecord& a, int64_t now) override {
    return base_.CreateAd(a, now);
  }
  Result<store::AdRecord> GetAd(Id id) override { return base_.GetAd(id); }
  Result<std::vector<store::AdRecord>> ListAds(std::optional<Id> campaign_id) override {
    return base_.ListAds(campaign_id);
  }
  Result<store::AdRecord> UpdateAd(const store::AdRecord& a, int64_t now) override {
    return base_.UpdateAd(a, now);
  }
  Status DeleteAd(Id id) override { return base_.DeleteAd(id); }
  Status RecordActivity(const std::vector<store::ActivityRecord>& rows) override {
    return base_.RecordActivity(rows);
  }
  Result<std::vector<store::ActivityRecord>> ActivityForWallet(const Address& wallet) override {
    return base_.ActivityForWallet(wallet);
  }
  Status ScanActivity(const std::function<void(const store::ActivityRecord&)>& fn) override {
    if (fail) return UnavailableError("injected");
    return base_.ScanActivity(fn);
  }
  Result<store::CatalogData> LoadCatalogData() override {
    {
      std::lock_guard<std::mutex> lock(loaders_mu);
      loaders.insert(std::this_thread::get_id());
    }
    if (fail) return UnavailableError("injected");
    return base_.LoadCatalogData();
  }
  Result<uint64_t> ChangeCounter() override {
    ADS_ASSIGN_OR_RETURN(uint64_t catalog, base_.ChangeCounter());
    if (!counter_counts_activity) return catalog;
    ADS_ASSIGN_OR_RETURN(uint64_t activity, base_.ActivityChangeCounter());
    return catalog + activity;
  }
  Result<uint64_t> ActivityChangeCounter() override { return base_.ActivityChangeCounter(); }

 private:
  store::SqliteStore& base_;
};

class SnapshotPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
    Seed(*store_);
  }

  // A publisher, a community, a project and an active campaign 1 with one ad.
  void Seed(store::InventoryStore& store) {
    auto publisher = store.CreatePublisher({.id = 0,
                                            .name = "News",
                                            .allowed_origins = {},
                                            .blocked_communities = {},
                                            .created_at = 0,
                                            .updated_at = 0},
                                           kNow);
    ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
    auto community = store.CreateCommunity({.id = 0,
                                            .name = "DeFi",
                                            .logo_url = "https://l/defi.png",
                                            .created_at = 0,
                                            .updated_at = 0},
                                           kNow);
    ASSERT_TRUE(community.ok()) << community.status().ToString();
    community_id_ = community->id;
    store::ProjectRecord project;
    project.slug = "uniswap";
    project.name = "Uniswap";
    auto created = store.CreateProject(project, kNow);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    project_id_ = created->id;
    AddCampaign(store, "first");
  }

  void AddCampaign(store::InventoryStore& store, const std::string& name) {
    store::CampaignRecord c;
    c.community_id = community_id_;
    c.name = name;
    c.status = CampaignStatus::kActive;
    c.bid_micros = 1'000'000;
    c.target_projects = {project_id_};
    auto campaign = store.CreateCampaign(c, kNow);
    ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
    store::AdRecord a;
    a.campaign_id = campaign->id;
    a.headline = "Swap";
    a.content = "Swap now";
    a.cta_url = "https://example.com";
    a.cta_label = "Go";
    a.images = {"https://img/l.png", "", ""};
    auto ad = store.CreateAd(a, kNow);
    ASSERT_TRUE(ad.ok()) << ad.status().ToString();
  }

  void AddActivity(store::ActivityStore& store, uint8_t wallet) {
    ASSERT_TRUE(store
                    .RecordActivity({{.wallet = Wallet(wallet),
                                      .project_id = project_id_,
                                      .chain_id = 1,
                                      .last_seen = kNow,
                                      .count = 1}})
                    .ok());
  }

  size_t CampaignCount() const { return catalogs_.Current()->campaigns.size(); }

  SnapshotOptions Options(std::chrono::milliseconds poll) {
    SnapshotOptions options;
    options.poll_interval = poll;
    return options;
  }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
  store::Id community_id_ = 0;
  store::Id project_id_ = 0;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
};

TEST_F(SnapshotPublisherTest, LoadNowPublishesCatalogAndActivity) {
  AddActivity(*store_, 1);
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());

  EXPECT_EQ(catalogs_.version(), 1u);
  EXPECT_EQ(activity_.version(), 1u);
  EXPECT_EQ(CampaignCount(), 1u);
  EXPECT_EQ(catalogs_.Current()->ads.size(), 1u);
  EXPECT_EQ(activity_.Current()->Lookup(Wallet(1)).size(), 1u);
}

TEST_F(SnapshotPublisherTest, RefreshNowPublishesAWrite) {
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  AddCampaign(*store_, "second");

  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(catalogs_.version(), 2u);
  EXPECT_EQ(CampaignCount(), 2u);
  EXPECT_EQ(activity_.version(), 1u);
}

TEST_F(SnapshotPublisherTest, RefreshNowWithoutChangesPublishesNothing) {
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());

  ASSERT_TRUE(publisher.RefreshNow().ok());
  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(catalogs_.version(), 1u);
  EXPECT_EQ(activity_.version(), 1u);
}

TEST_F(SnapshotPublisherTest, ActivityOnlyChangeRebuildsOnlyTheActivityIndex) {
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  auto catalog_before = catalogs_.Current();
  AddActivity(*store_, 7);

  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(activity_.version(), 2u);
  EXPECT_EQ(activity_.Current()->Lookup(Wallet(7)).size(), 1u);
  EXPECT_EQ(catalogs_.version(), 1u);
  EXPECT_EQ(catalogs_.Current(), catalog_before);
}

TEST_F(SnapshotPublisherTest, ActivityChangeMovingBothCountersKeepsTheCatalog) {
  FaultyStore store(*store_);
  store.counter_counts_activity = true;
  SnapshotPublisher publisher(store, store, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  auto catalog_before = catalogs_.Current();
  AddActivity(*store_, 7);

  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(activity_.version(), 2u);
  EXPECT_EQ(catalogs_.Current(), catalog_before);

  AddCampaign(*store_, "second");
  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(CampaignCount(), 2u);
  EXPECT_EQ(activity_.version(), 2u);
}

TEST_F(SnapshotPublisherTest, PollingPicksUpAWriteFromAnotherStoreOnTheSameFile) {
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(10ms));
  ASSERT_TRUE(publisher.LoadNow().ok());
  publisher.Start();
  auto other = store::SqliteStore::Open(dir_.File("ads.db"));
  ASSERT_TRUE(other.ok()) << other.status().ToString();

  AddCampaign(**other, "from the cli");
  EXPECT_TRUE(WaitUntil([&] { return catalogs_.version() >= 2 && CampaignCount() == 2; }));
  AddActivity(**other, 9);
  EXPECT_TRUE(WaitUntil([&] { return !activity_.Current()->Lookup(Wallet(9)).empty(); }));
  publisher.Stop();
  EXPECT_EQ(CampaignCount(), 2u);
}

TEST_F(SnapshotPublisherTest, NotifyChangedWakesThePollingThread) {
  SnapshotPublisher publisher(*store_, *store_, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  publisher.Start();
  AddCampaign(*store_, "second");

  publisher.NotifyChanged();
  EXPECT_TRUE(WaitUntil([&] { return catalogs_.version() == 2; }));
}

TEST_F(SnapshotPublisherTest, FailedRefreshKeepsThePreviousSnapshot) {
  FaultyStore store(*store_);
  SnapshotPublisher publisher(store, store, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  auto catalog_before = catalogs_.Current();
  AddCampaign(*store_, "second");
  AddActivity(*store_, 3);

  store.fail = true;
  EXPECT_EQ(publisher.RefreshNow().code(), Code::kUnavailable);
  EXPECT_EQ(catalogs_.Current(), catalog_before);
  EXPECT_EQ(activity_.version(), 1u);

  // The change is not forgotten: it is published once the store recovers.
  store.fail = false;
  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(CampaignCount(), 2u);
  EXPECT_EQ(activity_.Current()->Lookup(Wallet(3)).size(), 1u);
}

// Once started, RefreshNow hands the build to the publisher's thread (background priority, one
// allocator arena) and waits for it: each caller's own write is published when it returns.
TEST_F(SnapshotPublisherTest, RefreshNowBuildsOnThePublisherThreadAndWaits) {
  FaultyStore store(*store_);
  SnapshotPublisher publisher(store, store, catalogs_, activity_, Options(1h));
  ASSERT_TRUE(publisher.LoadNow().ok());
  publisher.Start();
  {
    std::lock_guard<std::mutex> lock(store.loaders_mu);
    store.loaders.clear();  // LoadNow ran here
  }
  constexpr int kWriters = 6;
  std::vector<std::thread> writers;
  std::atomic<int> saw_own_write{0};
  std::mutex callers_mu;
  std::set<std::thread::id> callers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      {
        std::lock_guard<std::mutex> lock(callers_mu);
        callers.insert(std::this_thread::get_id());
      }
      const std::string name = "writer " + std::to_string(i);
      AddCampaign(*store_, name);
      auto records = store_->ListCampaigns();
      ASSERT_TRUE(records.ok());
      int64_t id = 0;
      for (const auto& r : *records) id = r.name == name ? r.id : id;
      ASSERT_TRUE(publisher.RefreshNow().ok());
      for (const auto& c : catalogs_.Current()->campaigns) {
        if (c.id == id) saw_own_write.fetch_add(1);
      }
    });
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(saw_own_write.load(), kWriters);
  EXPECT_EQ(CampaignCount(), 1u + kWriters);
  {
    std::lock_guard<std::mutex> lock(store.loaders_mu);
    ASSERT_EQ(store.loaders.size(), 1u);  // one thread built, none of the callers
    EXPECT_EQ(callers.count(*store.loaders.begin()), 0u);
    EXPECT_NE(*store.loaders.begin(), std::this_thread::get_id());
  }
  // Errors reach the caller too, and a stopped publisher builds on the caller's thread.
  AddCampaign(*store_, "while failing");
  store.fail = true;
  EXPECT_EQ(publisher.RefreshNow().code(), Code::kUnavailable);
  store.fail = false;
  publisher.Stop();
  AddCampaign(*store_, "after stop");
  ASSERT_TRUE(publisher.RefreshNow().ok());
  EXPECT_EQ(CampaignCount(), 3u + kWriters);
}

TEST_F(SnapshotPublisherTest, LoadNowReturnsTheStoreError) {
  FaultyStore store(*store_);
  store.fail = true;
  SnapshotPublisher publisher(store, store, catalogs_, activity_, Options(1h));
  EXPECT_EQ(publisher.LoadNow().code(), Code::kUnavailable);
  EXPECT_EQ(catalogs_.version(), 0u);
}

TEST_F(SnapshotPublisherTest, StopIsIdempotentAndTheDestructorStops) {
  SnapshotPublisher stopped(*store_, *store_, catalogs_, activity_, Options(10ms));
  stopped.Stop();  // never started
  stopped.Start();
  stopped.Stop();
  stopped.Stop();
  {
    SnapshotPublisher running(*store_, *store_, catalogs_, activity_, Options(1ms));
    ASSERT_TRUE(running.LoadNow().ok());
    running.Start();
  }  // joins in the destructor
  SUCCEED();
}

}  // namespace
}  // namespace adserver::ingest
