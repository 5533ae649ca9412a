#include "ingest/counter_flusher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::ingest {
namespace {

constexpr int64_t kNow = 1'767'225'600 + 3600;

class CounterFlusherTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    store_.reset();
    auto opened = store::SqliteStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
  }

  adserver::testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(CounterFlusherTest, StopWritesEverythingAndRecoverRestoresIt) {
  decision::BudgetLedger ledger(64);
  {
    // A long interval: only the final flush of Stop() (the SIGTERM path) can write.
    CounterFlusher flusher(*store_, ledger, std::chrono::hours(1));
    flusher.Start();
    ledger.RecordImpression(1, 2500, kNow);
    ledger.RecordImpression(1, 2500, kNow);
    ledger.RecordClick(2, 1'000'000, kNow);
    ASSERT_TRUE(flusher.Stop().ok());
  }
  Reopen();
  decision::BudgetLedger recovered(64);
  CounterFlusher flusher(*store_, recovered);
  ASSERT_TRUE(flusher.Recover().ok());
  decision::BudgetLedger::View one = recovered.Read(1, kNow);
  EXPECT_EQ(one.total_spend, 5000);
  EXPECT_EQ(one.day_spend, 5000);
  EXPECT_EQ(one.hour_spend, 5000);
  EXPECT_EQ(one.impressions, 2);
  EXPECT_EQ(recovered.Read(2, kNow).clicks, 1);
  EXPECT_EQ(recovered.Read(2, kNow).total_spend, 1'000'000);
  EXPECT_EQ(recovered.All(), ledger.All());
}

TEST_F(CounterFlusherTest, ReconcileRaisesCountersToTheRecordedEventsAndSavesThem) {
  const int64_t day = kNow / 86400;
  const int64_t hour = kNow / 3600;
  decision::BudgetLedger ledger(64);
  {
    CounterFlusher flusher(*store_, ledger, std::chrono::hours(1));
    ledger.RecordClick(1, 1'000'000, kNow);
    ledger.RecordImpression(2, 9'000'000, kNow);
    ASSERT_TRUE(flusher.FlushNow().ok());
  }
  // Billed after the last flush, then kill -9: the click rows are committed, the counters not.
  ledger.RecordClick(1, 1'000'000, kNow);
  Reopen();
  decision::BudgetLedger recovered(64);
  CounterFlusher flusher(*store_, recovered, std::chrono::hours(1));
  ASSERT_TRUE(flusher.Recover().ok());
  std::vector<store::CampaignCountersRecord> events{
      // Campaign 1: two billed clicks committed.
      {.campaign_id = 1, .total_spend = 2'000'000, .clicks = 2, .day = day,
       .day_spend = 2'000'000, .hour = hour, .hour_spend = 2'000'000},
      // Campaign 2: counters from before events were recorded are higher: kept.
      {.campaign_id = 2, .total_spend = 1'000'000, .impressions = 1, .day = day,
       .day_spend = 1'000'000, .hour = hour, .hour_spend = 1'000'000},
      // Campaign 3: never flushed at all.
      {.campaign_id = 3, .total_spend = 500, .conversions = 1, .day = day, .day_spend = 500,
       .hour = hour, .hour_spend = 500},
  };
  Result<size_t> raised = flusher.Reconcile(events);
  ASSERT_TRUE(raised.ok()) << raised.status().message();
  EXPECT_EQ(*raised, 2u);
  EXPECT_EQ(recovered.Read(1, kNow).total_spend, 2'000'000);
  EXPECT_EQ(recovered.Read(1, kNow).day_spend, 2'000'000);
  EXPECT_EQ(recovered.Read(1, kNow).hour_spend, 2'000'000);
  EXPECT_EQ(recovered.Read(1, kNow).clicks, 2);
  EXPECT_EQ(recovered.Read(2, kNow).total_spend, 9'000'000);
  EXPECT_EQ(recovered.Read(3, kNow).conversions, 1);
  // Saved: the next start finds the raised counters without the events.
  Reopen();
  decision::BudgetLedger again(64);
  CounterFlusher next(*store_, again);
  ASSERT_TRUE(next.Recover().ok());
  EXPECT_EQ(again.Read(1, kNow).total_spend, 2'000'000);
  EXPECT_EQ(again.Read(3, kNow).total_spend, 500);
  EXPECT_EQ(*next.Reconcile(events), 0u);
}

TEST_F(CounterFlusherTest, FlushNowWritesOnlyChangesAndKeepsLatestValues) {
  decision::BudgetLedger ledger(64);
  CounterFlusher flusher(*store_, ledger, std::chrono::hours(1));
  ledger.RecordImpression(5, 10, kNow);
  ASSERT_TRUE(flusher.FlushNow().ok());
  ledger.RecordImpression(5, 10, kNow);
  ASSERT_TRUE(flusher.FlushNow().ok());
  ASSERT_TRUE(flusher.FlushNow().ok());  // nothing changed
  auto rows = store_->LoadCampaignCounters();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0).total_spend, 20);
  EXPECT_EQ(rows->at(0).impressions, 2);
}

TEST_F(CounterFlusherTest, BackgroundThreadFlushesPeriodically) {
  decision::BudgetLedger ledger(64);
  CounterFlusher flusher(*store_, ledger, std::chrono::milliseconds(5));
  flusher.Start();
  ledger.RecordImpression(9, 77, kNow);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    auto rows = store_->LoadCampaignCounters();
    seen = rows.ok() && rows->size() == 1 && rows->at(0).total_spend == 77;
    if (!seen) std::this_thread::yield();
  }
  EXPECT_TRUE(seen);
  EXPECT_TRUE(flusher.Stop().ok());
}

}  // namespace
}  // namespace adserver::ingest
