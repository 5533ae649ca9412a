#include "store/lmdb/lmdb_exposure_store.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace adserver::store {
namespace {

Address Wallet(uint8_t b) {
  Address a{};
  a.bytes.fill(b);
  return a;
}

ExposureWrite Write(uint8_t wallet, Id campaign, uint8_t decision, int64_t at, int64_t prior = 0) {
  ExposureEntry e;
  e.decision_id[0] = decision;
  e.exposed_at = at;
  e.ad_id = 7;
  e.publisher_id = 3;
  e.person = 99;
  e.arm = "b";
  e.ad_unit_id = std::string(100, 'u');  // longer than kept
  return ExposureWrite{
      .wallet = Wallet(wallet), .campaign_id = campaign, .entry = e, .prior_last_seen = prior};
}

class LmdbExposureStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = LmdbExposureStore::Open(dir_.File("exposures.lmdb"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<LmdbExposureStore> store_;
};

TEST_F(LmdbExposureStoreTest, KeepsTheMostRecentExposuresPerWalletAndCampaign) {
  std::vector<ExposureWrite> writes;
  for (int i = 0; i < 6; ++i)
    writes.push_back(Write(1, 10, static_cast<uint8_t>(i), 1000 + i, 500));
  writes.push_back(Write(1, 11, 50, 2000));
  writes.push_back(Write(2, 10, 60, 3000));
  ASSERT_TRUE(store_->AddExposures(writes).ok());
  auto record = store_->Get(Wallet(1), 10);
  ASSERT_TRUE(record.ok());
  ASSERT_TRUE(record->has_value());
  const ExposureRecord& r = **record;
  EXPECT_EQ(r.prior_last_seen, 500);
  ASSERT_EQ(r.entries.size(), kMaxExposuresPerRecord);
  EXPECT_EQ(r.entries[0].exposed_at, 1005);  // newest first
  EXPECT_EQ(r.entries[3].exposed_at, 1002);
  EXPECT_EQ(r.entries[0].ad_unit_id.size(), kMaxExposureAdUnitBytes);
  EXPECT_EQ(r.entries[0].arm, "b");
  EXPECT_EQ(r.entries[0].person, 99u);
  EXPECT_EQ((*store_->Get(Wallet(1), 11))->entries.size(), 1u);
  EXPECT_FALSE(store_->Get(Wallet(3), 10)->has_value());
  EXPECT_EQ(store_->Stats()->records, 3);
}

TEST_F(LmdbExposureStoreTest, PriorInteractionIsFixedWhenTheRecordIsCreated) {
  ASSERT_TRUE(store_->AddExposures(std::vector{Write(1, 10, 1, 1000, 0)}).ok());
  ASSERT_TRUE(store_->AddExposures(std::vector{Write(1, 10, 2, 2000, 1500)}).ok());
  EXPECT_EQ((*store_->Get(Wallet(1), 10))->prior_last_seen, 0);
}

TEST_F(LmdbExposureStoreTest, TheSameDecisionIsRecordedOnce) {
  ASSERT_TRUE(store_->AddExposures(std::vector{Write(1, 10, 1, 1000), Write(1, 10, 1, 1000)}).ok());
  EXPECT_EQ((*store_->Get(Wallet(1), 10))->entries.size(), 1u);
}

TEST_F(LmdbExposureStoreTest, ExpiryDropsOldEntriesAndEmptyRecords) {
  ASSERT_TRUE(store_
                  ->AddExposures(std::vector{Write(1, 10, 1, 1000), Write(1, 10, 2, 3000),
                                             Write(2, 10, 3, 1500)})
                  .ok());
  auto deleted = store_->ExpireBefore(2000);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);  // wallet 2's only exposure was old
  EXPECT_FALSE(store_->Get(Wallet(2), 10)->has_value());
  auto kept = store_->Get(Wallet(1), 10);
  ASSERT_TRUE(kept->has_value());
  ASSERT_EQ((*kept)->entries.size(), 1u);
  EXPECT_EQ((*kept)->entries[0].exposed_at, 3000);
}

TEST_F(LmdbExposureStoreTest, AFullStoreRefusesWritesAsUnavailable) {
  auto small = LmdbExposureStore::Open(dir_.File("small.lmdb"), {.map_size_bytes = 64 * 1024});
  ASSERT_TRUE(small.ok());
  Status last = OkStatus();
  for (int batch = 0; batch < 200 && last.ok(); ++batch) {
    std::vector<ExposureWrite> writes;
    for (int i = 0; i < 50; ++i) {
      ExposureWrite w = Write(static_cast<uint8_t>(i), batch * 100 + i, 1, 1000);
      writes.push_back(w);
    }
    last = (*small)->AddExposures(writes);
  }
  EXPECT_EQ(last.code(), Code::kUnavailable) << last.message();
  // Still readable after refusing.
  EXPECT_TRUE((*small)->Stats().ok());
}

TEST_F(LmdbExposureStoreTest, ExpiryStepsVisitEveryRecordOnceAndResumeWhereTheyStopped) {
  std::vector<ExposureWrite> writes;
  for (int i = 0; i < 25; ++i) {
    // Every third record is old; records of one wallet sit next to each other in key order.
    writes.push_back(Write(static_cast<uint8_t>(i / 5), 100 + i, static_cast<uint8_t>(i),
                           i % 3 == 0 ? 1000 : 3000));
  }
  ASSERT_TRUE(store_->AddExposures(writes).ok());
  std::string after;
  int64_t deleted = 0;
  int steps = 0;
  for (;;) {
    auto step = store_->ExpireStep(2000, after, 4);
    ASSERT_TRUE(step.ok()) << step.status().message();
    ++steps;
    deleted += step->deleted;
    EXPECT_LE(step->deleted, 4);
    if (step->done) break;
    after = step->resume;
    ASSERT_LT(steps, 20);
  }
  EXPECT_EQ(deleted, 9);  // i = 0, 3, ..., 24
  EXPECT_EQ(steps, 7);    // 25 records, 4 per step, the last step finds the end
  EXPECT_EQ(store_->Stats()->records, 16);
  // Steps resumed after deleted keys too (3 of the resume keys above were); nothing is left.
  auto again = store_->ExpireBefore(2000, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

}  // namespace
}  // namespace adserver::store
