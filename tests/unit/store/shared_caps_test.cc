// Frequency caps shared through Redis (issue 17 item 6): two nodes serving one person learn each
// other's impressions at their next sync, reads create nothing, and impressions queued while
// Redis is away are sent when it is back (faults injected in front of the real adapter).

#include "decision/shared_caps.h"

#include <gtest/gtest.h>

#include <memory>

#include "store/redis/detail/redis_connection.h"
#include "store/redis/redis_cap_counters.h"
#include "support/faulty_stores.h"
#include "support/redis/test_redis.h"

namespace adserver::store {
namespace {

using decision::FrequencyCaps;
using decision::SharedFrequencyCaps;

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kCampaign = 77;
constexpr int32_t kHours = 24;

Address Wallet(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

class SharedCapsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!redis_.error().empty()) FAIL() << redis_.error();
    if (redis_.url().empty()) GTEST_SKIP() << redis_.skip_reason();
  }
  std::unique_ptr<RedisCapCounters> Store() {
    auto store = RedisCapCounters::Open(redis_.url(), redis_.prefix());
    EXPECT_TRUE(store.ok()) << store.status().message();
    return store.ok() ? std::move(*store) : nullptr;
  }
  adserver::testing::TestRedis redis_;
};

TEST_F(SharedCapsTest, NodesLearnEachOthersImpressionsAtTheirNextSync) {
  auto store_a = Store(), store_b = Store();
  ASSERT_TRUE(store_a && store_b);
  FrequencyCaps local_a(1024), local_b(1024);
  SharedFrequencyCaps a(local_a, *store_a), b(local_b, *store_b);
  const Address w = Wallet(1);
  const Address both[] = {w};
  // Node A serves the person twice, node B once.
  for (int i = 0; i < 2; ++i) {
    local_a.Record(both, kCampaign, kHours, kNow);
    a.Queue(both, kCampaign, kHours);
  }
  local_b.Record(both, kCampaign, kHours, kNow);
  b.Queue(both, kCampaign, kHours);
  ASSERT_TRUE(a.Sync(kNow).ok());
  EXPECT_EQ(local_a.Count(w, kCampaign, kHours, kNow), 2u);
  ASSERT_TRUE(b.Sync(kNow).ok());
  EXPECT_EQ(local_b.Count(w, kCampaign, kHours, kNow), 3u) << "B sees A's two";
  ASSERT_TRUE(a.Sync(kNow + 1).ok()) << "nothing new on A: the pair is read again";
  EXPECT_EQ(local_a.Count(w, kCampaign, kHours, kNow + 1), 3u) << "A sees B's one";
  // Another campaign and another wallet are counted apart.
  EXPECT_EQ(local_a.Count(w, kCampaign + 1, kHours, kNow), 0u);
  EXPECT_EQ(local_a.Count(Wallet(2), kCampaign, kHours, kNow), 0u);
}

TEST_F(SharedCapsTest, TheSharedCounterExpiresWithTheCapWindowAndReadsCreateNothing) {
  auto store = Store();
  ASSERT_TRUE(store);
  const decision::CapIncrement read{.wallet = Wallet(3), .campaign_id = kCampaign, .hours = 2};
  auto counts = store->AddAndRead({&read, 1});
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->at(0), 0u);
  auto conn = redis_detail::RedisConnection::Open(redis_.url());
  ASSERT_TRUE(conn.ok());
  const std::string key =
      redis_.prefix() + "cap:77:" + HexEncode(read.wallet.bytes.data(), read.wallet.bytes.size());
  EXPECT_EQ((*conn)->Command({"EXISTS", key})->integer, 0) << "a read made no key";
  decision::CapIncrement add = read;
  add.add = 2;
  EXPECT_EQ(store->AddAndRead({&add, 1})->at(0), 2u);
  int64_t ttl = (*conn)->Command({"TTL", key})->integer;
  EXPECT_GT(ttl, 7000);
  EXPECT_LE(ttl, 7200) << "the 2-hour window opened at the first impression";
  EXPECT_EQ(store->AddAndRead({&add, 1})->at(0), 4u);
  EXPECT_LE((*conn)->Command({"TTL", key})->integer, ttl) << "later impressions keep the window";
}

TEST_F(SharedCapsTest, ImpressionsQueuedWhileRedisIsAwayAreSentWhenItIsBack) {
  auto real = Store();
  ASSERT_TRUE(real);
  adserver::testing::FaultPlan plan;
  adserver::testing::FaultyCapCounters store(*real, plan);
  FrequencyCaps local(1024);
  SharedFrequencyCaps caps(local, store);
  const Address w = Wallet(4);
  const Address one[] = {w};
  local.Record(one, kCampaign, kHours, kNow);
  caps.Queue(one, kCampaign, kHours);
  plan.FailNext(2);
  EXPECT_EQ(caps.Sync(kNow).code(), Code::kUnavailable);
  local.Record(one, kCampaign, kHours, kNow);
  caps.Queue(one, kCampaign, kHours);
  EXPECT_EQ(caps.Sync(kNow).code(), Code::kUnavailable);
  EXPECT_EQ(local.Count(w, kCampaign, kHours, kNow), 2u) << "caps stay local meanwhile";
  ASSERT_TRUE(caps.Sync(kNow).ok());
  const decision::CapIncrement read{.wallet = w, .campaign_id = kCampaign, .hours = kHours};
  EXPECT_EQ(real->AddAndRead({&read, 1})->at(0), 2u) << "both impressions arrived, once each";
  EXPECT_EQ(caps.dropped(), 0u);
}

TEST_F(SharedCapsTest, OnlyPairsServedLatelyAreReadAgain) {
  class Counting final : public decision::CapCounterStore {
   public:
    explicit Counting(decision::CapCounterStore& inner) : inner_(inner) {}
    Result<std::vector<uint32_t>> AddAndRead(
        std::span<const decision::CapIncrement> increments) override {
      last_batch = increments.size();
      return inner_.AddAndRead(increments);
    }
    size_t last_batch = 0;

   private:
    decision::CapCounterStore& inner_;
  };
  auto real = Store();
  ASSERT_TRUE(real);
  Counting store(*real);
  FrequencyCaps local(1024);
  SharedFrequencyCaps caps(local, store, 1024, /*recent=*/2, /*recent_seconds=*/60);
  const Address a[] = {Wallet(10)}, b[] = {Wallet(11)}, c[] = {Wallet(12)};
  caps.Queue(a, kCampaign, kHours);
  ASSERT_TRUE(caps.Sync(kNow).ok());
  caps.Queue(b, kCampaign, kHours);
  ASSERT_TRUE(caps.Sync(kNow + 10).ok());
  EXPECT_EQ(store.last_batch, 2u) << "b sent, a read again";
  caps.Queue(c, kCampaign, kHours);
  ASSERT_TRUE(caps.Sync(kNow + 20).ok());
  EXPECT_EQ(store.last_batch, 2u) << "at most 2 remembered: a, the oldest, is forgotten";
  ASSERT_TRUE(caps.Sync(kNow + 75).ok());
  EXPECT_EQ(store.last_batch, 1u) << "b was served 65 s ago: only c is read";
  store.last_batch = 0;
  ASSERT_TRUE(caps.Sync(kNow + 200).ok());
  EXPECT_EQ(store.last_batch, 0u) << "nothing served lately: no call at all";
}

TEST_F(SharedCapsTest, TheQueueIsBoundedAndCountsWhatItDrops) {
  auto store = Store();
  ASSERT_TRUE(store);
  FrequencyCaps local(1024);
  SharedFrequencyCaps caps(local, *store, /*max_pending=*/3);
  const Address wallets[] = {Wallet(5), Wallet(6), Wallet(7), Wallet(8), Wallet(9)};
  caps.Queue(wallets, kCampaign, kHours);
  EXPECT_EQ(caps.dropped(), 2u);
  ASSERT_TRUE(caps.Sync(kNow).ok());
}

}  // namespace
}  // namespace adserver::store
