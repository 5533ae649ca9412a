#include "events/exposure_recorder.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "store/lmdb/lmdb_exposure_store.h"
#include "support/faulty_stores.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace adserver::events {
namespace {

store::ExposureEntry Entry(uint8_t decision, int64_t at) {
  store::ExposureEntry e;
  e.decision_id[0] = decision;
  e.exposed_at = at;
  e.ad_id = 5;
  return e;
}

Address Wallet(uint8_t b) {
  Address a{};
  a.bytes.fill(b);
  return a;
}

class ExposureRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::LmdbExposureStore::Open(dir_.File("exposures.lmdb"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<store::LmdbExposureStore> store_;
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activity_;
  FakeClock clock_;
};

TEST_F(ExposureRecorderTest, EveryWalletOfTheRequestIsExposed) {
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_);
  std::vector<Address> wallets{Wallet(1), Wallet(2), Wallet(3)};
  recorder.Record(10, Entry(1, 1000), wallets);
  ASSERT_TRUE(recorder.FlushNow().ok());
  for (const Address& w : wallets) {
    auto record = store_->Get(w, 10);
    ASSERT_TRUE(record.ok() && record->has_value());
    EXPECT_EQ((*record)->entries.size(), 1u);
  }
  EXPECT_FALSE(store_->Get(Wallet(1), 11)->has_value());
}

TEST_F(ExposureRecorderTest, RepeatsWithinTheCoalescingIntervalAreNotWrittenAgain) {
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_, {.coalesce_seconds = 600});
  std::vector<Address> wallet{Wallet(1)};
  recorder.Record(10, Entry(1, 1000), wallet);
  recorder.Record(10, Entry(2, 1100), wallet);
  ASSERT_TRUE(recorder.FlushNow().ok());
  recorder.Record(10, Entry(3, 1599), wallet);
  recorder.Record(10, Entry(4, 1600), wallet);  // 600 s after the last written one
  ASSERT_TRUE(recorder.FlushNow().ok());
  auto record = store_->Get(Wallet(1), 10);
  ASSERT_TRUE(record.ok() && record->has_value());
  ASSERT_EQ((*record)->entries.size(), 2u);
  EXPECT_EQ((*record)->entries[0].decision_id[0], 4);
  EXPECT_EQ((*record)->entries[1].decision_id[0], 1);
  EXPECT_EQ(recorder.coalesced(), 2);
}

// The coalescing table is bounded (2 slots here): a pair whose slots other pairs took is
// written again (one write more, no exposure lost).
TEST_F(ExposureRecorderTest, APairWhoseSlotWasTakenIsWrittenAgain) {
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_,
                            {.coalesce_seconds = 600, .max_recent = 2});
  recorder.Record(10, Entry(1, 1000), std::vector<Address>{Wallet(1)});
  ASSERT_TRUE(recorder.FlushNow().ok());
  recorder.Record(10, Entry(2, 1001), std::vector<Address>{Wallet(2)});
  recorder.Record(10, Entry(4, 1001), std::vector<Address>{Wallet(3)});  // evicts wallet 1
  ASSERT_TRUE(recorder.FlushNow().ok());
  recorder.Record(10, Entry(3, 1002), std::vector<Address>{Wallet(1)});
  ASSERT_TRUE(recorder.FlushNow().ok());
  EXPECT_EQ((*store_->Get(Wallet(1), 10))->entries.size(), 2u);
  EXPECT_EQ(recorder.coalesced(), 0);
}

TEST_F(ExposureRecorderTest, ABufferBeyondItsCapDropsAndCounts) {
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_, {.max_pending_per_thread = 2});
  std::vector<Address> wallet{Wallet(1)};
  for (int i = 0; i < 5; ++i) recorder.Record(10 + i, Entry(static_cast<uint8_t>(i), 1000), wallet);
  EXPECT_EQ(recorder.dropped(), 3);
  ASSERT_TRUE(recorder.FlushNow().ok());
  EXPECT_TRUE(store_->Get(Wallet(1), 11)->has_value());
  EXPECT_FALSE(store_->Get(Wallet(1), 12)->has_value());
}

// PostgreSQL down (cluster mode): the writes wait for the next flush, within their bound.
TEST_F(ExposureRecorderTest, WritesTheStoreRefusesAreRetriedWithinTheirBound) {
  testing::FaultPlan plan;
  testing::FaultyExposureStore faulty(*store_, plan);
  ExposureRecorder recorder(faulty, catalogs_, activity_, clock_, {.max_retry_writes = 2});
  recorder.Record(10, Entry(1, 1000), std::vector<Address>{Wallet(1), Wallet(2), Wallet(3)});
  plan.FailNext(1);
  EXPECT_EQ(recorder.FlushNow().code(), Code::kUnavailable);
  EXPECT_EQ(recorder.dropped(), 1);  // beyond the bound of 2
  recorder.Record(11, Entry(2, 1001), std::vector<Address>{Wallet(4)});
  ASSERT_TRUE(recorder.FlushNow().ok());
  EXPECT_TRUE(store_->Get(Wallet(1), 10)->has_value());
  EXPECT_TRUE(store_->Get(Wallet(2), 10)->has_value());
  EXPECT_FALSE(store_->Get(Wallet(3), 10)->has_value());
  EXPECT_TRUE(store_->Get(Wallet(4), 11)->has_value());
  // Any other failure is not retried.
  recorder.Record(12, Entry(3, 1002), std::vector<Address>{Wallet(5)});
  plan.FailNext(1, InternalError("corrupt"));
  EXPECT_FALSE(recorder.FlushNow().ok());
  ASSERT_TRUE(recorder.FlushNow().ok());
  EXPECT_FALSE(store_->Get(Wallet(5), 12)->has_value());
  EXPECT_EQ(recorder.dropped(), 2);
}

TEST_F(ExposureRecorderTest, StopWritesWhatIsBuffered) {
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_,
                            {.flush_interval = std::chrono::hours(1)});
  recorder.Start();
  std::thread([&] { recorder.Record(10, Entry(1, 1000), std::vector<Address>{Wallet(9)}); }).join();
  recorder.Stop();
  EXPECT_TRUE(store_->Get(Wallet(9), 10)->has_value());
}

TEST_F(ExposureRecorderTest, TheBackgroundSweepExpiresTheWholeStoreInBoundedSteps) {
  clock_.SetMicros(int64_t{100} * 86400 * 1'000'000);
  std::vector<store::ExposureWrite> writes;
  for (int i = 0; i < 20; ++i) {
    // Even wallets were exposed 20 days ago (beyond the 14-day window), odd ones today.
    int64_t at = (i % 2 == 0 ? 80 : 100) * 86400;
    writes.push_back({.wallet = Wallet(static_cast<uint8_t>(i)), .campaign_id = 10,
                      .entry = Entry(static_cast<uint8_t>(i), at)});
  }
  ASSERT_TRUE(store_->AddExposures(writes).ok());
  ExposureRecorder recorder(*store_, catalogs_, activity_, clock_,
                            {.flush_interval = std::chrono::milliseconds(5),
                             .first_expiry_after = std::chrono::milliseconds(0),
                             .expire_step_records = 3});
  recorder.Start();
  adserver::testing::WaitUntil([&] { return recorder.expired() >= 10; });
  recorder.Stop();
  EXPECT_EQ(recorder.expired(), 10);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(store_->Get(Wallet(static_cast<uint8_t>(i)), 10)->has_value(), i % 2 == 1) << i;
  }
}

}  // namespace
}  // namespace adserver::events
