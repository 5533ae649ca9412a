// The LMDB adapter's own behaviour: its size cap. The ExposureStore contract both adapters
// share is exposure_contract_test.cc.

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

}  // namespace
}  // namespace adserver::store
