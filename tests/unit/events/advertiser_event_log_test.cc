// The advertiser events' log (events/advertiser_event_log.h) over the real SQLite store: what an
// accepted event is stored as, and retention pruning on the insert path.

#include "events/advertiser_event_log.h"

#include <gtest/gtest.h>

#include <memory>

#include "store/sqlite/sqlite_advertiser_events_store.h"
#include "support/temp_dir.h"

namespace adserver::events {
namespace {

constexpr int64_t kNow = 1'700'000'000;

class AdvertiserEventLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteAdvertiserEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
  }

  std::vector<store::AdvertiserEventRecord> Rows() {
    Result<std::vector<store::AdvertiserEventRecord>> rows = store_->List({});
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<store::AdvertiserEventRecord>{};
  }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteAdvertiserEventsStore> store_;
};

TEST_F(AdvertiserEventLogTest, StoresTheEventWithItsReasonAndDecision) {
  AdvertiserEventLog log(*store_, *store_);
  std::array<uint8_t, 16> decision{};
  decision[0] = 7;
  ASSERT_TRUE(log.Record({.community_id = 9,
                          .key_id = 5,
                          .name = "sign_up",
                          .url = "https://shop.example/?spclid=x",
                          .decision_id = decision,
                          .person = 42,
                          .created_at = kNow})
                  .ok());
  ASSERT_TRUE(log.Record({.community_id = 9,
                          .key_id = 5,
                          .name = "sign_up",
                          .person = 43,
                          .created_at = kNow + 1,
                          .invalid = InvalidReason::kCrawler})
                  .ok());
  std::vector<store::AdvertiserEventRecord> rows = Rows();
  ASSERT_EQ(rows.size(), 2u);  // newest first
  EXPECT_EQ(rows[0].invalid_reason, "crawler");
  EXPECT_FALSE(rows[0].decision_id.has_value());
  EXPECT_EQ(rows[1].invalid_reason, "");
  EXPECT_EQ(rows[1].decision_id, decision);
  EXPECT_EQ(rows[1].url, "https://shop.example/?spclid=x");
  EXPECT_EQ(rows[1].person, 42u);
  EXPECT_EQ(rows[1].community_id, 9);
  EXPECT_EQ(rows[1].key_id, 5);
  // Only the valid one counts; the invalid one is counted apart.
  Result<std::vector<store::AdvertiserEventCount>> counts = store_->Counts(std::nullopt, 9);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].count, 1);
}

TEST_F(AdvertiserEventLogTest, PrunesRowsPastRetentionOncePerInterval) {
  AdvertiserEventLog log(*store_, *store_,
                         {.retention_seconds = 100, .prune_interval_seconds = 50});
  ASSERT_TRUE(log.Record({.community_id = 9, .key_id = 5, .name = "a", .created_at = kNow}).ok());
  // Past retention, but the interval has not passed since the first insert pruned: kept.
  ASSERT_TRUE(
      log.Record({.community_id = 9, .key_id = 5, .name = "b", .created_at = kNow + 40}).ok());
  EXPECT_EQ(Rows().size(), 2u);
  // 150 s on: the prune runs and removes "a" (older than 100 s); "b" at 110 s old too.
  ASSERT_TRUE(
      log.Record({.community_id = 9, .key_id = 5, .name = "c", .created_at = kNow + 150}).ok());
  std::vector<store::AdvertiserEventRecord> rows = Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "c");
}

}  // namespace
}  // namespace adserver::events
