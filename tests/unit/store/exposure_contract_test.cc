// The ExposureStore contract (store/exposure_store.h) run against both adapters: LMDB (the
// embedded default, DATA_DIR/exposures.lmdb) and PostgreSQL (cluster mode: every node's
// exposures in one table); then what only one adapter does: LMDB's size cap, the cluster's
// single sweep.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_exposure_store.h"
#include "store/postgres/postgres_exposure_store.h"
#include "support/postgres/test_database.h"
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
  e.decision_id[15] = static_cast<uint8_t>(decision ^ 0x5a);
  e.exposed_at = at;
  e.ad_id = 7;
  e.publisher_id = 3;
  e.person = 0xfedcba9876543210ULL;  // above INT64_MAX: kept as an unsigned number
  e.arm = "b";
  e.ad_unit_id = std::string(100, 'u');  // longer than kept
  return ExposureWrite{
      .wallet = Wallet(wallet), .campaign_id = campaign, .entry = e, .prior_last_seen = prior};
}

class LmdbBackend {
 public:
  static constexpr const char* kName = "lmdb";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  std::unique_ptr<ExposureStore> Open() {
    auto s = LmdbExposureStore::Open(dir_.File("exposures.lmdb"));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresBackend {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  // Every sweep runs here: the cluster's spacing of sweeps is tested on its own below.
  std::unique_ptr<ExposureStore> Open() {
    auto s = PostgresExposureStore::Open(db_.url(), {.min_sweep_interval_seconds = 0});
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  const std::string& url() const { return db_.url(); }

 private:
  adserver::testing::TestDatabase db_;
};

template <class Backend>
class ExposureContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    store_ = backend_.Open();
    ASSERT_NE(store_, nullptr);
  }
  Backend backend_;
  std::unique_ptr<ExposureStore> store_;
};

using Backends = ::testing::Types<LmdbBackend, PostgresBackend>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(ExposureContractTest, Backends, BackendNames);

TYPED_TEST(ExposureContractTest, KeepsTheMostRecentExposuresPerWalletAndCampaign) {
  ExposureStore& store = *this->store_;
  std::vector<ExposureWrite> writes;
  for (int i = 0; i < 6; ++i)
    writes.push_back(Write(1, 10, static_cast<uint8_t>(i), 1000 + i, 500));
  writes.push_back(Write(1, 11, 50, 2000));
  writes.push_back(Write(2, 10, 60, 3000));
  ASSERT_TRUE(store.AddExposures(writes).ok());
  auto record = store.Get(Wallet(1), 10);
  ASSERT_TRUE(record.ok()) << record.status().message();
  ASSERT_TRUE(record->has_value());
  const ExposureRecord& r = **record;
  EXPECT_EQ(r.prior_last_seen, 500);
  ASSERT_EQ(r.entries.size(), kMaxExposuresPerRecord);
  EXPECT_EQ(r.entries[0].exposed_at, 1005);  // newest first
  EXPECT_EQ(r.entries[3].exposed_at, 1002);
  EXPECT_EQ(r.entries[0].decision_id, Write(1, 10, 5, 0).entry.decision_id);
  EXPECT_EQ(r.entries[0].ad_unit_id, std::string(kMaxExposureAdUnitBytes, 'u'));
  EXPECT_EQ(r.entries[0].arm, "b");
  EXPECT_EQ(r.entries[0].person, 0xfedcba9876543210ULL);
  EXPECT_EQ(r.entries[0].ad_id, 7);
  EXPECT_EQ(r.entries[0].publisher_id, 3);
  EXPECT_EQ((*store.Get(Wallet(1), 11))->entries.size(), 1u);
  EXPECT_FALSE(store.Get(Wallet(3), 10)->has_value());
  EXPECT_EQ(store.Stats()->records, 3);
}

TYPED_TEST(ExposureContractTest, LaterWritesMergeWithTheStoredEntries) {
  ExposureStore& store = *this->store_;
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 1, 1000), Write(1, 10, 2, 4000)}).ok());
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 3, 2000), Write(1, 10, 4, 3000),
                                             Write(1, 10, 5, 500)})
                  .ok());
  auto r = store.Get(Wallet(1), 10);
  ASSERT_TRUE(r.ok() && r->has_value());
  std::vector<int64_t> times;
  for (const ExposureEntry& e : (*r)->entries) times.push_back(e.exposed_at);
  EXPECT_EQ(times, (std::vector<int64_t>{4000, 3000, 2000, 1000}));
}

TYPED_TEST(ExposureContractTest, RequestStringsOfAnyBytesRoundTrip) {
  ExposureStore& store = *this->store_;
  ExposureWrite w = Write(4, 10, 1, 1000);
  w.entry.arm = std::string("a\0\"\\\n", 5);
  w.entry.ad_unit_id = "slot-\xff\xfe-\xe2\x82\xac";
  ASSERT_TRUE(store.AddExposures(std::vector{w}).ok());
  auto r = store.Get(Wallet(4), 10);
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().message();
  EXPECT_EQ((*r)->entries[0].arm, w.entry.arm);
  EXPECT_EQ((*r)->entries[0].ad_unit_id, w.entry.ad_unit_id);
}

TYPED_TEST(ExposureContractTest, PriorInteractionIsFixedWhenTheRecordIsCreated) {
  ExposureStore& store = *this->store_;
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 1, 1000, 0)}).ok());
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 2, 2000, 1500)}).ok());
  EXPECT_EQ((*store.Get(Wallet(1), 10))->prior_last_seen, 0);
}

TYPED_TEST(ExposureContractTest, TheSameDecisionIsRecordedOnce) {
  ExposureStore& store = *this->store_;
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 1, 1000), Write(1, 10, 1, 1000)}).ok());
  ASSERT_TRUE(store.AddExposures(std::vector{Write(1, 10, 1, 1000)}).ok());
  EXPECT_EQ((*store.Get(Wallet(1), 10))->entries.size(), 1u);
}

TYPED_TEST(ExposureContractTest, ExpiryDropsOldEntriesAndEmptyRecords) {
  ExposureStore& store = *this->store_;
  ASSERT_TRUE(store
                  .AddExposures(std::vector{Write(1, 10, 1, 1000), Write(1, 10, 2, 3000),
                                            Write(2, 10, 3, 1500)})
                  .ok());
  auto deleted = store.ExpireBefore(2000);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(*deleted, 1);  // wallet 2's only exposure was old
  EXPECT_FALSE(store.Get(Wallet(2), 10)->has_value());
  auto kept = store.Get(Wallet(1), 10);
  ASSERT_TRUE(kept->has_value());
  ASSERT_EQ((*kept)->entries.size(), 1u);
  EXPECT_EQ((*kept)->entries[0].exposed_at, 3000);
}

TYPED_TEST(ExposureContractTest, ExpiryStepsVisitEveryRecordOnceAndResumeWhereTheyStopped) {
  ExposureStore& store = *this->store_;
  std::vector<ExposureWrite> writes;
  for (int i = 0; i < 25; ++i) {
    // Every third record is old; records of one wallet sit next to each other in key order.
    writes.push_back(Write(static_cast<uint8_t>(i / 5), 100 + i, static_cast<uint8_t>(i),
                           i % 3 == 0 ? 1000 : 3000));
  }
  ASSERT_TRUE(store.AddExposures(writes).ok());
  std::string after;
  int64_t deleted = 0;
  int steps = 0;
  for (;;) {
    auto step = store.ExpireStep(2000, after, 4);
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
  EXPECT_EQ(store.Stats()->records, 16);
  // Steps resumed after deleted keys too (3 of the resume keys above were); nothing is left.
  auto again = store.ExpireBefore(2000, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

// The embedded file is bounded by its map size: beyond it writes fail as Unavailable (the
// recorder keeps them for a retry) and reads go on.
TEST(LmdbExposureStoreTest, AFullStoreRefusesWritesAsUnavailable) {
  adserver::testing::TempDir dir;
  auto small = LmdbExposureStore::Open(dir.File("small.lmdb"), {.map_size_bytes = 64 * 1024});
  ASSERT_TRUE(small.ok());
  Status last = OkStatus();
  for (int batch = 0; batch < 200 && last.ok(); ++batch) {
    std::vector<ExposureWrite> writes;
    for (int i = 0; i < 50; ++i) writes.push_back(Write(static_cast<uint8_t>(i), batch * 100 + i, 1, 1000));
    last = (*small)->AddExposures(writes);
  }
  EXPECT_EQ(last.code(), Code::kUnavailable) << last.message();
  EXPECT_TRUE((*small)->Stats().ok());
}

// Cluster mode: two nodes write the same rows; a conversion on either sees both nodes' entries,
// and only one node's sweep runs within the sweep interval.
TEST(PostgresExposureStoreTest, NodesShareRowsAndOneSweepRunsAtATime) {
  adserver::testing::TestDatabase db;
  ADSERVER_REQUIRE_TEST_DATABASE(db);
  auto node1 = PostgresExposureStore::Open(db.url(), {.min_sweep_interval_seconds = 3600});
  auto node2 = PostgresExposureStore::Open(db.url(), {.min_sweep_interval_seconds = 3600});
  ASSERT_TRUE(node1.ok() && node2.ok());
  ASSERT_TRUE((*node1)->AddExposures(std::vector{Write(1, 10, 1, 1000, 100)}).ok());
  ASSERT_TRUE((*node2)->AddExposures(std::vector{Write(1, 10, 2, 3000, 900)}).ok());
  auto r = (*node1)->Get(Wallet(1), 10);
  ASSERT_TRUE(r.ok() && r->has_value());
  ASSERT_EQ((*r)->entries.size(), 2u);
  EXPECT_EQ((*r)->entries[0].exposed_at, 3000);  // node 2's
  EXPECT_EQ((*r)->prior_last_seen, 100);         // the creating write's
  auto first = (*node1)->ExpireBefore(2000);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE((*node2)->AddExposures(std::vector{Write(2, 10, 3, 1500)}).ok());
  auto second = (*node2)->ExpireStep(2000, "", 100);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->done);
  EXPECT_EQ(second->deleted, 0);
  EXPECT_TRUE((*node2)->Get(Wallet(2), 10)->has_value());  // kept for the next sweep
  EXPECT_EQ((*(*node2)->Get(Wallet(1), 10))->entries.size(), 1u);  // node 1's sweep ran
}

}  // namespace
}  // namespace adserver::store
