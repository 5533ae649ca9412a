#include "store/sqlite/sqlite_advertiser_events_store.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

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

class SqliteAdvertiserEventsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteAdvertiserEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
  }
  std::vector<AdvertiserEventRecord> List(AdvertiserEventQuery q = {}) {
    auto rows = store_->List(q);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<AdvertiserEventRecord>{};
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteAdvertiserEventsStore> store_;
};

TEST_F(SqliteAdvertiserEventsStoreTest, InvalidEventsAreListedWithTheirReasonAndCountedApart) {
  AdvertiserEventRecord valid = Event("signup", 100);
  AdvertiserEventRecord crawler = Event("signup", 101);
  crawler.invalid_reason = "crawler";
  AdvertiserEventRecord limited = Event("purchase", 102);
  limited.invalid_reason = "ip_rate_limit";
  for (AdvertiserEventRecord* e : {&valid, &crawler, &limited}) {
    ASSERT_TRUE(store_->Insert(*e).ok());
  }
  std::vector<AdvertiserEventRecord> rows = List();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].invalid_reason, "ip_rate_limit");
  EXPECT_EQ(rows[1].invalid_reason, "crawler");
  EXPECT_EQ(rows[2].invalid_reason, "");
  EXPECT_EQ(*store_->Counts(std::nullopt, 1),
            (std::vector<AdvertiserEventCount>{{.name = "signup", .count = 1}}));
  EXPECT_EQ(*store_->InvalidCounts(std::nullopt, 1),
            (std::vector<AdvertiserEventCount>{{.name = "crawler", .count = 1},
                                               {.name = "ip_rate_limit", .count = 1}}));
  EXPECT_TRUE(store_->InvalidCounts(std::nullopt, 2)->empty());
}

TEST_F(SqliteAdvertiserEventsStoreTest, InsertAssignsIdsAndListsNewestFirst) {
  AdvertiserEventRecord a = Event("signup", 100);
  a.url = "https://shop.example/welcome";
  AdvertiserEventRecord b = Event("purchase", 200);
  ASSERT_TRUE(store_->Insert(a).ok());
  ASSERT_TRUE(store_->Insert(b).ok());
  EXPECT_LT(a.id, b.id);
  std::vector<AdvertiserEventRecord> rows = List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "purchase");
  EXPECT_EQ(rows[1].name, "signup");
  EXPECT_EQ(rows[1].url, "https://shop.example/welcome");
  EXPECT_FALSE(rows[0].url.has_value());
  EXPECT_EQ(rows[1].person, 42u);
  EXPECT_EQ(rows[1].key_id, 7);
  EXPECT_FALSE(rows[1].campaign_id.has_value());
  EXPECT_FALSE(rows[1].decision_id.has_value());
}

TEST_F(SqliteAdvertiserEventsStoreTest, DecisionIdLinksTheEventToItsClicksCampaign) {
  auto events = SqliteEventsStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(events.ok()) << events.status().message();
  std::vector<ClickRecord> clicks(1);
  clicks[0].decision_id = Decision(9);
  clicks[0].campaign_id = 31;
  clicks[0].status = ClickStatus::kExpired;  // any status links
  ASSERT_TRUE((*events)->InsertClicks(clicks).ok());

  AdvertiserEventRecord linked = Event("signup", 100);
  linked.decision_id = Decision(9);
  ASSERT_TRUE(store_->Insert(linked).ok());
  EXPECT_EQ(linked.campaign_id, 31);
  AdvertiserEventRecord unknown = Event("signup", 100);
  unknown.decision_id = Decision(5);
  ASSERT_TRUE(store_->Insert(unknown).ok());
  EXPECT_FALSE(unknown.campaign_id.has_value());

  std::vector<AdvertiserEventRecord> rows = List({.campaign_id = 31});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, linked.id);
  EXPECT_EQ(rows[0].decision_id, Decision(9));
  EXPECT_EQ(List().size(), 2u);
  EXPECT_EQ(List()[0].decision_id, Decision(5));
}

TEST_F(SqliteAdvertiserEventsStoreTest, ListFiltersByCommunityAndTimeAndPagesByCursor) {
  for (int i = 0; i < 5; ++i) {
    AdvertiserEventRecord e = Event("view", 100 + i, i % 2 == 0 ? 1 : 2);
    ASSERT_TRUE(store_->Insert(e).ok());
  }
  EXPECT_EQ(List({.community_id = 1}).size(), 3u);
  EXPECT_EQ(List({.community_id = 2}).size(), 2u);
  std::vector<AdvertiserEventRecord> window = List({.from = 101, .to = 103});
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].created_at, 102);
  EXPECT_EQ(window[1].created_at, 101);
  std::vector<AdvertiserEventRecord> page1 = List({.limit = 2});
  ASSERT_EQ(page1.size(), 2u);
  std::vector<AdvertiserEventRecord> page2 = List({.before_id = page1.back().id, .limit = 2});
  ASSERT_EQ(page2.size(), 2u);
  EXPECT_LT(page2[0].id, page1.back().id);
  std::vector<AdvertiserEventRecord> page3 = List({.before_id = page2.back().id, .limit = 2});
  EXPECT_EQ(page3.size(), 1u);
}

TEST_F(SqliteAdvertiserEventsStoreTest, CountsPerNameByCampaignAndCommunitySurvivePruning) {
  auto events = SqliteEventsStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(events.ok());
  std::vector<ClickRecord> clicks(1);
  clicks[0].decision_id = Decision(1);
  clicks[0].campaign_id = 8;
  ASSERT_TRUE((*events)->InsertClicks(clicks).ok());
  for (const char* name : {"signup", "purchase", "signup"}) {
    AdvertiserEventRecord e = Event(name, 100);
    e.decision_id = Decision(1);
    ASSERT_TRUE(store_->Insert(e).ok());
  }
  AdvertiserEventRecord other = Event("signup", 100, /*community=*/2);
  ASSERT_TRUE(store_->Insert(other).ok());

  auto by_campaign = store_->Counts(8, std::nullopt);
  ASSERT_TRUE(by_campaign.ok());
  EXPECT_EQ(*by_campaign, (std::vector<AdvertiserEventCount>{{"purchase", 1}, {"signup", 2}}));
  auto unlinked = store_->Counts(0, std::nullopt);
  ASSERT_TRUE(unlinked.ok());
  EXPECT_EQ(*unlinked, (std::vector<AdvertiserEventCount>{{"signup", 1}}));
  auto community2 = store_->Counts(std::nullopt, 2);
  ASSERT_TRUE(community2.ok());
  EXPECT_EQ(*community2, (std::vector<AdvertiserEventCount>{{"signup", 1}}));

  auto pruned = store_->Prune(101);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 4);
  EXPECT_TRUE(List().empty());
  auto kept = store_->Counts(8, std::nullopt);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 2u);
}

TEST_F(SqliteAdvertiserEventsStoreTest, PruneKeepsRowsAtOrAfterTheCutoff) {
  AdvertiserEventRecord old_event = Event("a", 99);
  AdvertiserEventRecord kept = Event("b", 100);
  ASSERT_TRUE(store_->Insert(old_event).ok());
  ASSERT_TRUE(store_->Insert(kept).ok());
  auto pruned = store_->Prune(100);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 1);
  std::vector<AdvertiserEventRecord> rows = List();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "b");
}

// Advertiser keys live with the inventory (SqliteStore) and reach the catalog data.
TEST(SqliteAdvertiserKeysTest, CreateListRevokeAndLoadWithTheCatalogData) {
  testing::TempDir dir;
  auto opened = SqliteStore::Open(dir.File("adserver.db"));
  ASSERT_TRUE(opened.ok());
  SqliteStore& s = **opened;
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
