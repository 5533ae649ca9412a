// The AdvertiserEventsStore contract (issues 15 and 17): the SQLite and PostgreSQL adapters run
// the same SQL (store/sql/sql_advertiser_events) through the same cases; an event's spclid links
// it to the campaign of the click another store (EventsStore) recorded in the same database.
// Then the advertiser keys of the inventory, which reach the catalog data. PostgreSQL cases run
// on a database of their own (skipped by hand outside CTest, a failure with
// ADSERVER_REQUIRE_POSTGRES=1).

#include <gtest/gtest.h>

#include <array>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres/postgres_advertiser_events_store.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_advertiser_events_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

class SqliteAdvertiserEvents {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<AdvertiserEventsStore>> Advertiser() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteAdvertiserEventsStore> s,
                         SqliteAdvertiserEventsStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<AdvertiserEventsStore>(std::move(s));
  }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteEventsStore> s,
                         SqliteEventsStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<InventoryStore>> Inventory() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> s,
                         SqliteStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<InventoryStore>(std::move(s));
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresAdvertiserEvents {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  Result<std::unique_ptr<AdvertiserEventsStore>> Advertiser() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresAdvertiserEventsStore> s,
                         PostgresAdvertiserEventsStore::Open(db_.url()));
    return std::unique_ptr<AdvertiserEventsStore>(std::move(s));
  }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresEventsStore> s,
                         PostgresEventsStore::Open(db_.url()));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<InventoryStore>> Inventory() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> s, PostgresStore::Open(db_.url()));
    return std::unique_ptr<InventoryStore>(std::move(s));
  }

 private:
  adserver::testing::TestDatabase db_;
};

std::array<uint8_t, 16> Decision(uint8_t n) {
  std::array<uint8_t, 16> d{};
  d.fill(n);
  return d;
}

AdvertiserEventRecord Event(std::string name, int64_t at, Id community = 1) {
  return {.community_id = community,
          .key_id = 7,
          .name = std::move(name),
          .person = 42,
          .created_at = at};
}

template <class Backend>
class AdvertiserEventsContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    store_ = OpenAdvertiser();
    ASSERT_TRUE(store_);
  }
  std::unique_ptr<AdvertiserEventsStore> OpenAdvertiser() {
    auto opened = backend_.Advertiser();
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  std::unique_ptr<EventsStore> OpenEvents() {
    auto opened = backend_.Events();
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  // A campaign of community `community` (created with the communities before it: ids are
  // assigned in order, so communities 1 and 2 are those of Event()), or 0 on failure.
  Id Campaign(Id community) {
    auto opened = backend_.Inventory();
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return 0;
    InventoryStore& s = **opened;
    while (s.ListCommunities()->size() < static_cast<size_t>(community)) {
      EXPECT_TRUE(s.CreateCommunity({.name = "C", .logo_url = "https://x.example/l.png"}, 1).ok());
    }
    auto project = s.CreateProject({.slug = "p" + std::to_string(++projects_), .name = "P"}, 1);
    EXPECT_TRUE(project.ok()) << project.status().ToString();
    if (!project.ok()) return 0;
    auto campaign = s.CreateCampaign({.community_id = community,
                                      .name = "K",
                                      .pricing_model = PricingModel::kCpc,
                                      .bid_micros = 1,
                                      .target_projects = {project->id}},
                                     1);
    EXPECT_TRUE(campaign.ok()) << campaign.status().ToString();
    return campaign.ok() ? campaign->id : 0;
  }
  std::vector<AdvertiserEventRecord> List(AdvertiserEventQuery q = {}) {
    auto rows = store_->List(q);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<AdvertiserEventRecord>{};
  }

  Backend backend_;
  std::unique_ptr<AdvertiserEventsStore> store_;
  int projects_ = 0;
};

using Backends = ::testing::Types<SqliteAdvertiserEvents, PostgresAdvertiserEvents>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(AdvertiserEventsContractTest, Backends, BackendNames);

TYPED_TEST(AdvertiserEventsContractTest, InvalidEventsAreListedWithTheirReasonAndCountedApart) {
  AdvertiserEventsStore& s = *this->store_;
  AdvertiserEventRecord valid = Event("signup", 100);
  AdvertiserEventRecord crawler = Event("signup", 101);
  crawler.invalid_reason = "crawler";
  AdvertiserEventRecord limited = Event("purchase", 102);
  limited.invalid_reason = "ip_rate_limit";
  for (AdvertiserEventRecord* e : {&valid, &crawler, &limited}) {
    ASSERT_TRUE(s.Insert(*e).ok());
  }
  std::vector<AdvertiserEventRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].invalid_reason, "ip_rate_limit");
  EXPECT_EQ(rows[1].invalid_reason, "crawler");
  EXPECT_EQ(rows[2].invalid_reason, "");
  EXPECT_EQ(*s.Counts(std::nullopt, 1),
            (std::vector<AdvertiserEventCount>{{.name = "signup", .count = 1}}));
  EXPECT_EQ(*s.InvalidCounts(std::nullopt, 1),
            (std::vector<AdvertiserEventCount>{{.name = "crawler", .count = 1},
                                               {.name = "ip_rate_limit", .count = 1}}));
  EXPECT_TRUE(s.InvalidCounts(std::nullopt, 2)->empty());
}

TYPED_TEST(AdvertiserEventsContractTest, InsertAssignsIdsAndListsNewestFirst) {
  AdvertiserEventsStore& s = *this->store_;
  AdvertiserEventRecord a = Event("signup", 100);
  a.url = "https://shop.example/welcome";
  AdvertiserEventRecord b = Event("purchase", 200);
  b.person = 0x8000000000000002;  // beyond int64: stored as its bit pattern
  ASSERT_TRUE(s.Insert(a).ok());
  ASSERT_TRUE(s.Insert(b).ok());
  EXPECT_LT(a.id, b.id);
  std::vector<AdvertiserEventRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, b.id);
  EXPECT_EQ(rows[0].name, "purchase");
  EXPECT_EQ(rows[0].person, 0x8000000000000002u);
  EXPECT_EQ(rows[1].name, "signup");
  EXPECT_EQ(rows[1].url, "https://shop.example/welcome");
  EXPECT_FALSE(rows[0].url.has_value());
  EXPECT_EQ(rows[1].person, 42u);
  EXPECT_EQ(rows[1].key_id, 7);
  EXPECT_EQ(rows[1].community_id, 1);
  EXPECT_EQ(rows[1].created_at, 100);
  EXPECT_FALSE(rows[1].campaign_id.has_value());
  EXPECT_FALSE(rows[1].decision_id.has_value());
}

TYPED_TEST(AdvertiserEventsContractTest, DecisionIdLinksTheEventToItsClicksCampaign) {
  std::unique_ptr<EventsStore> events = this->OpenEvents();
  ASSERT_TRUE(events);
  const Id campaign = this->Campaign(1);
  const Id foreign_campaign = this->Campaign(2);
  ASSERT_GT(campaign, 0);
  std::vector<ClickRecord> clicks(2);
  clicks[0].decision_id = Decision(9);
  clicks[0].campaign_id = campaign;
  clicks[0].status = ClickStatus::kExpired;  // any status links
  clicks[1].decision_id = Decision(7);
  clicks[1].campaign_id = foreign_campaign;
  ASSERT_TRUE(events->InsertClicks(clicks).ok());

  AdvertiserEventRecord linked = Event("signup", 100);
  linked.decision_id = Decision(9);
  ASSERT_TRUE(this->store_->Insert(linked).ok());
  EXPECT_EQ(linked.campaign_id, campaign);
  AdvertiserEventRecord unknown = Event("signup", 100);
  unknown.decision_id = Decision(5);
  ASSERT_TRUE(this->store_->Insert(unknown).ok());
  EXPECT_FALSE(unknown.campaign_id.has_value());
  // Issue 39: another community's click never links (nor reveals its campaign).
  AdvertiserEventRecord foreign = Event("signup", 100);
  foreign.decision_id = Decision(7);
  ASSERT_TRUE(this->store_->Insert(foreign).ok());
  EXPECT_FALSE(foreign.campaign_id.has_value());

  std::vector<AdvertiserEventRecord> rows = this->List({.campaign_id = campaign});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, linked.id);
  EXPECT_EQ(rows[0].decision_id, Decision(9));
  EXPECT_TRUE(this->List({.campaign_id = foreign_campaign}).empty());
  EXPECT_EQ(this->List().size(), 3u);
  EXPECT_EQ(this->List()[0].decision_id, Decision(7));
}

TYPED_TEST(AdvertiserEventsContractTest, ListFiltersByCommunityAndTimeAndPagesByCursor) {
  for (int i = 0; i < 5; ++i) {
    AdvertiserEventRecord e = Event("view", 100 + i, i % 2 == 0 ? 1 : 2);
    ASSERT_TRUE(this->store_->Insert(e).ok());
  }
  EXPECT_EQ(this->List({.community_id = 1}).size(), 3u);
  EXPECT_EQ(this->List({.community_id = 2}).size(), 2u);
  std::vector<AdvertiserEventRecord> window = this->List({.from = 101, .to = 103});
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].created_at, 102);
  EXPECT_EQ(window[1].created_at, 101);
  std::vector<AdvertiserEventRecord> page1 = this->List({.limit = 2});
  ASSERT_EQ(page1.size(), 2u);
  std::vector<AdvertiserEventRecord> page2 = this->List({.before_id = page1.back().id, .limit = 2});
  ASSERT_EQ(page2.size(), 2u);
  EXPECT_LT(page2[0].id, page1.back().id);
  std::vector<AdvertiserEventRecord> page3 = this->List({.before_id = page2.back().id, .limit = 2});
  EXPECT_EQ(page3.size(), 1u);
}

TYPED_TEST(AdvertiserEventsContractTest, CountsPerNameByCampaignAndCommunitySurvivePruning) {
  AdvertiserEventsStore& s = *this->store_;
  std::unique_ptr<EventsStore> events = this->OpenEvents();
  ASSERT_TRUE(events);
  const Id campaign = this->Campaign(1);
  ASSERT_GT(campaign, 0);
  std::vector<ClickRecord> clicks(1);
  clicks[0].decision_id = Decision(1);
  clicks[0].campaign_id = campaign;
  ASSERT_TRUE(events->InsertClicks(clicks).ok());
  for (const char* name : {"signup", "purchase", "signup"}) {
    AdvertiserEventRecord e = Event(name, 100);
    e.decision_id = Decision(1);
    ASSERT_TRUE(s.Insert(e).ok());
  }
  AdvertiserEventRecord other = Event("signup", 100, /*community=*/2);
  ASSERT_TRUE(s.Insert(other).ok());

  auto by_campaign = s.Counts(campaign, std::nullopt);
  ASSERT_TRUE(by_campaign.ok()) << by_campaign.status().message();
  EXPECT_EQ(*by_campaign, (std::vector<AdvertiserEventCount>{{"purchase", 1}, {"signup", 2}}));
  auto unlinked = s.Counts(0, std::nullopt);
  ASSERT_TRUE(unlinked.ok());
  EXPECT_EQ(*unlinked, (std::vector<AdvertiserEventCount>{{"signup", 1}}));
  auto community2 = s.Counts(std::nullopt, 2);
  ASSERT_TRUE(community2.ok());
  EXPECT_EQ(*community2, (std::vector<AdvertiserEventCount>{{"signup", 1}}));

  auto pruned = s.Prune(101);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  EXPECT_EQ(*pruned, 4);
  EXPECT_TRUE(this->List().empty());
  auto kept = s.Counts(campaign, std::nullopt);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 2u);
}

TYPED_TEST(AdvertiserEventsContractTest, PruneKeepsRowsAtOrAfterTheCutoff) {
  AdvertiserEventRecord old_event = Event("a", 99);
  AdvertiserEventRecord kept = Event("b", 100);
  ASSERT_TRUE(this->store_->Insert(old_event).ok());
  ASSERT_TRUE(this->store_->Insert(kept).ok());
  auto pruned = this->store_->Prune(100);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 1);
  std::vector<AdvertiserEventRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "b");
}

// Events of one name sent to several nodes at once are all counted.
TYPED_TEST(AdvertiserEventsContractTest, CountsOfSeveralNodesAddUp) {
  constexpr int kNodes = 2;
  constexpr int kEvents = 40;
  std::unique_ptr<AdvertiserEventsStore> other = this->OpenAdvertiser();
  ASSERT_TRUE(other);
  AdvertiserEventsStore* nodes[] = {this->store_.get(), other.get()};
  Status failed[kNodes];
  std::latch start(kNodes);
  auto node = [&](int n) {
    start.arrive_and_wait();
    for (int i = 0; i < kEvents; ++i) {
      AdvertiserEventRecord e = Event("signup", 100 + i);
      if (i % 4 == 0) e.invalid_reason = "crawler";
      Status s = nodes[n]->Insert(e);
      if (!s.ok()) {
        failed[n] = s;
        return;
      }
    }
  };
  std::thread a(node, 0), b(node, 1);
  a.join();
  b.join();
  for (const Status& s : failed) ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*this->store_->Counts(std::nullopt, 1),
            (std::vector<AdvertiserEventCount>{{"signup", kNodes * kEvents * 3 / 4}}));
  EXPECT_EQ(*this->store_->InvalidCounts(0, 1),
            (std::vector<AdvertiserEventCount>{{"crawler", kNodes * kEvents / 4}}));
  EXPECT_EQ(this->List({.limit = 1000}).size(), size_t{kNodes * kEvents});
}

// Advertiser keys live with the inventory and reach the catalog data.
TYPED_TEST(AdvertiserEventsContractTest, AdvertiserKeysCreateListRevokeAndLoadWithTheCatalogData) {
  auto opened = this->backend_.Inventory();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  InventoryStore& s = **opened;
  auto community = s.CreateCommunity({.name = "Shop", .logo_url = "https://x/l.png"}, 10);
  ASSERT_TRUE(community.ok());
  auto before = s.ChangeCounter();
  AdvertiserKeyRecord k{.community_id = community->id, .prefix = "sak_Abcd", .test = true};
  k.hash.fill(3);
  auto created = s.CreateAdvertiserKey(k, 20);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->community_id, community->id);
  EXPECT_EQ(created->hash, k.hash);
  EXPECT_TRUE(created->test);
  EXPECT_EQ(created->created_at, 20);
  EXPECT_FALSE(created->revoked_at.has_value());
  EXPECT_GT(*s.ChangeCounter(), *before);

  EXPECT_EQ(s.CreateAdvertiserKey(k, 21).status().code(), Code::kConflict);  // same hash
  AdvertiserKeyRecord orphan = k;
  orphan.hash.fill(4);
  orphan.community_id = 999;
  EXPECT_EQ(s.CreateAdvertiserKey(orphan, 21).status().code(), Code::kConflict);

  auto listed = s.ListAdvertiserKeys(community->id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(s.RevokeAdvertiserKey(community->id + 1, created->id, 30).status().code(),
            Code::kNotFound);
  auto revoked = s.RevokeAdvertiserKey(community->id, created->id, 30);
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_at, 30);
  auto again = s.RevokeAdvertiserKey(community->id, created->id, 40);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoked_at, 30);  // the first revocation time stays

  auto data = s.LoadCatalogData();
  ASSERT_TRUE(data.ok());
  ASSERT_EQ(data->advertiser_keys.size(), 1u);
  EXPECT_EQ(data->advertiser_keys[0].revoked_at, 30);
}

}  // namespace
}  // namespace adserver::store
