#include "store/sqlite/sqlite_events_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kT = 1'800'000'000;

ConversionCandidate Candidate(uint8_t tx, uint64_t person, int64_t block_time, Id campaign = 10,
                              bool once = true) {
  ConversionCandidate c;
  ConversionRecord& r = c.record;
  r.campaign_id = campaign;
  r.ad_id = 20;
  r.publisher_id = 1;
  r.ad_unit_id = "top";
  r.person = person;
  r.chain_id = 1;
  r.tx_hash[0] = tx;
  r.block_number = 100 + tx;
  r.block_hash[0] = tx;
  r.block_time = block_time;
  r.touched_at = block_time - 60;
  r.price = 3'000'000;
  c.count_once_per_person = once;
  c.window_seconds = 14 * 86400;
  return c;
}

std::vector<ClickRecord> Clicks(uint8_t first, int n, ClickStatus status = ClickStatus::kBilled) {
  std::vector<ClickRecord> clicks(n);
  for (int i = 0; i < n; ++i) {
    clicks[i].decision_id[0] = static_cast<uint8_t>(first + i);
    clicks[i].publisher_id = 1;
    clicks[i].ad_unit_id = "top";
    clicks[i].campaign_id = 10;
    clicks[i].ad_id = 20;
    clicks[i].served_at = kT - 60;
    clicks[i].clicked_at = kT + i;
    clicks[i].price = 1'000'000;
    clicks[i].status = status;
  }
  return clicks;
}

class SqliteEventsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteEventsStore> store_;
};

TEST_F(SqliteEventsStoreTest, ATransactionCountsOncePerCampaign) {
  auto first = store_->InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(1, 5, kT)}, kT);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->size(), 1u);
  auto again = store_->InsertConversions(std::vector{Candidate(1, 5, kT)}, kT);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  // The same transaction may count for another campaign.
  auto other = store_->InsertConversions(std::vector{Candidate(1, 5, kT, /*campaign=*/11)}, kT);
  EXPECT_EQ(other->size(), 1u);
}

TEST_F(SqliteEventsStoreTest, OncePerPersonPerWindowUnlessTheCampaignAllowsMore) {
  auto a =
      store_->InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 5, kT + 60)}, kT);
  EXPECT_EQ(a->size(), 1u);
  // After the window the person may convert again.
  auto later = store_->InsertConversions(std::vector{Candidate(3, 5, kT + 15 * 86400)}, kT);
  EXPECT_EQ(later->size(), 1u);
  auto many = store_->InsertConversions(
      std::vector{Candidate(4, 6, kT, 12, /*once=*/false), Candidate(5, 6, kT + 1, 12, false)}, kT);
  EXPECT_EQ(many->size(), 2u);
}

TEST_F(SqliteEventsStoreTest, AReorgMarksItsBlocksConversionsAndTakesThemOutOfTheTotals) {
  ASSERT_TRUE(
      store_->InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 6, kT)}, kT).ok());
  CampaignEventTotals before = *store_->CampaignTotals(10);
  EXPECT_EQ(before.conversions, 2);
  EXPECT_EQ(before.conversion_spend, 6'000'000);
  std::array<uint8_t, 32> hash{};
  hash[0] = 2;
  auto reverted = store_->RevertConversions(1, 102, hash, kT + 5);
  ASSERT_TRUE(reverted.ok());
  ASSERT_EQ(reverted->size(), 1u);
  EXPECT_EQ((*reverted)[0].price, 3'000'000);
  // Another hash at that height is another block: nothing to revert.
  hash[0] = 9;
  EXPECT_TRUE(store_->RevertConversions(1, 101, hash, kT + 5)->empty());
  CampaignEventTotals after = *store_->CampaignTotals(10);
  EXPECT_EQ(after.conversions, 1);
  EXPECT_EQ(after.conversion_spend, 3'000'000);
  EXPECT_EQ(after.reorged_conversions, 1);
  auto listed = store_->ListConversions({.campaign_id = 10});
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].status, ConversionStatus::kReorged);
  EXPECT_EQ((*listed)[0].reverted_at, kT + 5);
  // The transaction mined again on the new branch counts again.
  auto remined = store_->InsertConversions(std::vector{Candidate(2, 6, kT + 30)}, kT);
  EXPECT_EQ(remined->size(), 1u);
}

TEST_F(SqliteEventsStoreTest, RevertReplacedConversionsKeepsTheBlocksOwnAndImportedOnes) {
  ConversionCandidate imported = Candidate(3, 7, kT);
  imported.record.block_hash = {};  // an import row: no block hash
  ASSERT_TRUE(store_->InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 6, kT),
                                                    imported},
                                        kT)
                  .ok());
  // Heights 101..103 applied again: 101 with its own block, 102 and 103 with other blocks.
  std::vector<BlockAtHeight> blocks(3);
  blocks[0] = {.number = 101};
  blocks[0].hash[0] = 1;
  blocks[1] = {.number = 102};
  blocks[1].hash[0] = 0x77;
  blocks[2] = {.number = 103};
  blocks[2].hash[0] = 0x78;
  auto reverted = store_->RevertReplacedConversions(1, blocks, kT + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  ASSERT_EQ(reverted->size(), 1u);
  EXPECT_EQ((*reverted)[0].block_number, 102);
  EXPECT_EQ(store_->CampaignTotals(10)->conversions, 2);
  EXPECT_TRUE(store_->RevertReplacedConversions(1, blocks, kT + 6)->empty());  // done once
}

TEST_F(SqliteEventsStoreTest, CountersFromEventsSumTheRollupsAndTheClicksNotRolledUp) {
  const int64_t now = kT / 86400 * 86400 + 12 * 3600 + 600;  // 12:10 of a day
  RollupRow served{.bucket = now - 2 * 86400, .publisher_id = 1, .campaign_id = 10, .ad_id = 20};
  served.fills = 100;
  served.impression_spend = 250'000;
  RollupRow today = served;
  today.bucket = now - 3600;  // 11:10: today, an earlier hour
  RollupRow this_hour = served;
  this_hour.bucket = now - 300;
  RollupRow unfilled{.bucket = now, .publisher_id = 1, .requests = 9, .no_fills = 9};
  ASSERT_TRUE(store_->AddRollups(std::vector{served, today, this_hour, unfilled}).ok());
  ASSERT_TRUE(store_->InsertConversions(std::vector{Candidate(1, 5, now - 60)}, now).ok());
  std::vector<ClickRecord> rolled = Clicks(1, 2);
  for (ClickRecord& c : rolled) c.clicked_at = now - 120;
  ASSERT_TRUE(store_->InsertClicks(rolled).ok());
  ASSERT_EQ(*store_->RollUpClicks(1000), 2);
  std::vector<ClickRecord> pending = Clicks(10, 1);
  pending[0].clicked_at = now - 30;
  pending.push_back(Clicks(20, 1, ClickStatus::kDuplicate)[0]);
  ASSERT_TRUE(store_->InsertClicks(pending).ok());

  auto counters = store_->CountersFromEvents(now);
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  ASSERT_EQ(counters->size(), 1u);  // requests that filled nothing belong to no campaign
  const CampaignCountersRecord& c = (*counters)[0];
  EXPECT_EQ(c.campaign_id, 10);
  EXPECT_EQ(c.impressions, 300);
  EXPECT_EQ(c.clicks, 3);  // two rolled up, one not yet; the duplicate bills nothing
  EXPECT_EQ(c.conversions, 1);
  EXPECT_EQ(c.total_spend, 3 * 250'000 + 3 * 1'000'000 + 3'000'000);
  EXPECT_EQ(c.day, now / 86400);
  EXPECT_EQ(c.day_spend, 2 * 250'000 + 3 * 1'000'000 + 3'000'000);
  EXPECT_EQ(c.hour, now / 3600);
  EXPECT_EQ(c.hour_spend, 250'000 + 3 * 1'000'000 + 3'000'000);
}

TEST_F(SqliteEventsStoreTest, BilledClickAtFindsOnlyBilledClicks) {
  std::vector<ClickRecord> clicks(2);
  clicks[0].decision_id[0] = 1;
  clicks[0].clicked_at = kT;
  clicks[1].decision_id[0] = 2;
  clicks[1].clicked_at = kT;
  clicks[1].status = ClickStatus::kExpired;
  ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  EXPECT_EQ(*store_->BilledClickAt(clicks[0].decision_id), kT);
  EXPECT_FALSE(store_->BilledClickAt(clicks[1].decision_id)->has_value());
}

TEST_F(SqliteEventsStoreTest, ClicksReachTheRollupsOnceThroughTheMark) {
  std::vector<ClickRecord> clicks = Clicks(1, 3);
  clicks.push_back(clicks[0]);  // a second click of the first decision: a duplicate
  ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  EXPECT_EQ(store_->CampaignTotals(10)->clicks, 0);  // the commit wrote the rows alone
  // Two at a time: the mark moves with each slice.
  EXPECT_EQ(*store_->RollUpClicks(2), 2);
  EXPECT_EQ(store_->CampaignTotals(10)->clicks, 2);
  EXPECT_EQ(*store_->RollUpClicks(2), 2);
  EXPECT_EQ(*store_->RollUpClicks(2), 0);
  CampaignEventTotals totals = *store_->CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 3);
  EXPECT_EQ(totals.duplicate_clicks, 1);
  EXPECT_EQ(totals.click_spend, 3'000'000);
}

TEST_F(SqliteEventsStoreTest, InvalidClicksKeepTheirReasonAndBillNothing) {
  std::vector<ClickRecord> clicks = Clicks(1, 3, ClickStatus::kInvalid);
  clicks[0].reason = "crawler";
  clicks[1].reason = "too_fast";
  clicks[2].reason = "crawler";
  clicks[2].ip = "198.51.100.0";
  ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  for (const ClickRecord& c : clicks) {
    EXPECT_EQ(c.status, ClickStatus::kInvalid);
    EXPECT_EQ(c.price, 0);
    EXPECT_FALSE(store_->BilledClickAt(c.decision_id)->has_value());
  }
  std::vector<ClickRecord> listed = *store_->ListClicks(EventQuery{.campaign_id = 10});
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].status, ClickStatus::kInvalid);
  EXPECT_EQ(listed[0].reason, "crawler");
  EXPECT_EQ(listed[0].ip, "198.51.100.0");
  EXPECT_EQ(listed[1].reason, "too_fast");
  // The decision of an invalid click can still be billed by a valid one.
  std::vector<ClickRecord> valid = Clicks(1, 1);
  ASSERT_TRUE(store_->InsertClicks(valid).ok());
  EXPECT_EQ(valid[0].status, ClickStatus::kBilled);
  EXPECT_EQ(*store_->RollUpClicks(100), 4);
  CampaignEventTotals totals = *store_->CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 1);
  EXPECT_EQ(totals.click_spend, 1'000'000);
  EXPECT_EQ(totals.invalid_clicks, 3);
  EXPECT_EQ(totals.invalid_clicks_by_reason,
            (std::map<std::string, int64_t>{{"crawler", 2}, {"too_fast", 1}}));
}

TEST_F(SqliteEventsStoreTest, InvalidImpressionsAreRolledUpApartByReason) {
  RollupRow row{.bucket = kT,
                .publisher_id = 1,
                .ad_unit_id = "top",
                .campaign_id = 10,
                .ad_id = 20,
                .requests = 5,
                .fills = 2,
                .invalid_fills = 3,
                .invalid_fills_by_reason = {{"crawler", 2}, {"wallet_rate", 1}},
                .impression_spend = 4000};
  ASSERT_TRUE(store_->AddRollups(std::vector{row}).ok());
  row.bucket = kT + 86400;  // the next day adds up
  row.invalid_fills = 1;
  row.invalid_fills_by_reason = {{"crawler", 1}};
  ASSERT_TRUE(store_->AddRollups(std::vector{row}).ok());
  CampaignEventTotals totals = *store_->CampaignTotals(10);
  EXPECT_EQ(totals.impressions, 4);  // valid fills only
  EXPECT_EQ(totals.impression_spend, 8000);
  EXPECT_EQ(totals.invalid_impressions, 4);
  EXPECT_EQ(totals.invalid_impressions_by_reason,
            (std::map<std::string, int64_t>{{"crawler", 3}, {"wallet_rate", 1}}));
  EXPECT_EQ(store_->CampaignTotals(11)->invalid_impressions, 0);
}

TEST_F(SqliteEventsStoreTest, AnInvalidClickOfABilledDecisionIsADuplicate) {
  std::vector<ClickRecord> billed = Clicks(1, 1);
  ASSERT_TRUE(store_->InsertClicks(billed).ok());
  std::vector<ClickRecord> again = Clicks(1, 2, ClickStatus::kInvalid);
  for (ClickRecord& c : again) c.reason = "ip_rate_limit";
  ASSERT_TRUE(store_->InsertClicks(again).ok());
  EXPECT_EQ(again[0].status, ClickStatus::kDuplicate);
  EXPECT_EQ(again[0].reason, "");
  EXPECT_EQ(again[1].status, ClickStatus::kInvalid);
  EXPECT_EQ(*store_->RollUpClicks(100), 3);
  CampaignEventTotals totals = *store_->CampaignTotals(10);
  EXPECT_EQ(totals.duplicate_clicks, 1);
  EXPECT_EQ(totals.invalid_clicks, 1);
  EXPECT_EQ(totals.invalid_clicks_by_reason.at("ip_rate_limit"), 1);
}

TEST_F(SqliteEventsStoreTest, ClicksNotRolledUpBeforeACrashAreRolledUpAfterIt) {
  std::vector<ClickRecord> early = Clicks(1, 2);
  ASSERT_TRUE(store_->InsertClicks(early).ok());
  ASSERT_EQ(*store_->RollUpClicks(1000), 2);
  std::vector<ClickRecord> late = Clicks(10, 3, ClickStatus::kExpired);
  ASSERT_TRUE(store_->InsertClicks(late).ok());
  store_.reset();  // the process ends before its next flush
  auto reopened = SqliteEventsStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  store_ = std::move(reopened).value();
  EXPECT_EQ(*store_->RollUpClicks(1000), 3);
  EXPECT_EQ(*store_->RollUpClicks(1000), 0);
  CampaignEventTotals totals = *store_->CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 2);
  EXPECT_EQ(totals.expired_clicks, 3);
}

TEST_F(SqliteEventsStoreTest, PruneKeepsClicksNotYetRolledUp) {
  std::vector<ClickRecord> clicks = Clicks(1, 2);
  ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  const int64_t much_later = kT + 365 * 86400;
  EXPECT_EQ(*store_->Prune({}, much_later), 0);
  EXPECT_EQ(store_->ListClicks({})->size(), 2u);
  ASSERT_EQ(*store_->RollUpClicks(1000), 2);
  EXPECT_GE(*store_->Prune({}, much_later), 2);
  EXPECT_TRUE(store_->ListClicks({})->empty());
  EXPECT_EQ(store_->CampaignTotals(10)->clicks, 2);  // daily rollups stay
}

TEST_F(SqliteEventsStoreTest, LastBilledClickSkipsDuplicatesAndExpiredClicks) {
  std::vector<ClickRecord> clicks = Clicks(1, 3);
  for (ClickRecord& c : clicks) c.person = 7;
  clicks[1].status = ClickStatus::kExpired;  // the latest valid one is clicks[2]
  clicks.push_back(clicks[2]);               // a duplicate of it, clicked later
  clicks.back().clicked_at = kT + 50;
  ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  auto last = store_->LastBilledClick(10, 7, kT - 86400, kT + 100);
  ASSERT_TRUE(last.ok());
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ((*last)->clicked_at, kT + 2);
  EXPECT_EQ((*last)->status, ClickStatus::kBilled);
  EXPECT_EQ((*store_->LastBilledClick(10, 7, kT - 86400, kT + 1))->clicked_at, kT);
  EXPECT_FALSE(store_->LastBilledClick(10, 8, kT - 86400, kT + 100)->has_value());
  EXPECT_FALSE(store_->LastBilledClick(11, 7, kT - 86400, kT + 100)->has_value());
}

TEST_F(SqliteEventsStoreTest, ClickCommitsLeaveTheLogToCheckpoint) {
  auto db_bytes = [&] { return std::filesystem::file_size(dir_.File("adserver.db")); };
  auto wal_bytes = [&] { return std::filesystem::file_size(dir_.File("adserver.db-wal")); };
  ASSERT_TRUE(store_->Checkpoint().ok());  // the migrations' pages
  const uintmax_t before = db_bytes();
  // Far more than SQLite's automatic checkpoint threshold (1000 pages) of clicks, in many
  // commits: the writer leaves them all in the log.
  for (int batch = 0; batch < 200; ++batch) {
    std::vector<ClickRecord> clicks(100);
    for (size_t i = 0; i < clicks.size(); ++i) {
      clicks[i].decision_id[0] = static_cast<uint8_t>(batch);
      clicks[i].decision_id[1] = static_cast<uint8_t>(batch >> 8);
      clicks[i].decision_id[2] = static_cast<uint8_t>(i);
      clicks[i].ad_unit_id = "a-placement-with-a-long-name-" + std::to_string(i);
      clicks[i].clicked_at = kT;
    }
    ASSERT_TRUE(store_->InsertClicks(clicks).ok());
  }
  EXPECT_EQ(db_bytes(), before);
  EXPECT_GT(wal_bytes(), uintmax_t{1000} * 4096);
  ASSERT_TRUE(store_->Checkpoint().ok());
  EXPECT_GT(db_bytes(), before + 1'000'000);
  EXPECT_EQ(store_->ListClicks(EventQuery{.limit = 1000})->size(), 1000u);
}

}  // namespace
}  // namespace adserver::store
