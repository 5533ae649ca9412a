#include "common/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace adserver {
namespace {

constexpr int64_t kT = 1'800'000'000'000'000;  // µs

TEST(RateLimiterTest, ABurstPassesThenTheRate) {
  RateLimiter limiter;
  // 10 per second, burst 3: three at once, the fourth waits 100 ms.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Admit(7, 10, 3, kT), 0) << i;
  EXPECT_EQ(limiter.Admit(7, 10, 3, kT), 100'000);
  EXPECT_EQ(limiter.Admit(7, 10, 3, kT + 99'999), 1);
  EXPECT_EQ(limiter.Admit(7, 10, 3, kT + 100'000), 0);
  EXPECT_GT(limiter.Admit(7, 10, 3, kT + 100'000), 0);
  // Idle for a while: the whole burst is back, not more.
  const int64_t later = kT + 10'000'000;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Admit(7, 10, 3, later), 0) << i;
  EXPECT_GT(limiter.Admit(7, 10, 3, later), 0);
}

TEST(RateLimiterTest, PublishersHaveTheirOwnBuckets) {
  RateLimiter limiter;
  EXPECT_EQ(limiter.Admit(1, 1, 1, kT), 0);
  EXPECT_EQ(limiter.Admit(1, 1, 1, kT), 1'000'000);
  EXPECT_EQ(limiter.Admit(2, 1, 1, kT), 0);
}

TEST(RateLimiterTest, SustainedRateOverASecondIsTheLimit) {
  RateLimiter limiter;
  int passed = 0;
  for (int64_t t = 0; t < 1'000'000; t += 1000) passed += limiter.Admit(9, 50, 5, kT + t) == 0;
  EXPECT_GE(passed, 50);
  EXPECT_LE(passed, 55);  // the burst, then 50 per second
}

TEST(RateLimiterTest, AFullTableLetsFurtherPublishersThrough) {
  RateLimiter limiter(2);
  EXPECT_EQ(limiter.Admit(1, 1, 1, kT), 0);
  EXPECT_EQ(limiter.Admit(2, 1, 1, kT), 0);
  EXPECT_EQ(limiter.Admit(3, 1, 1, kT), 0);
  EXPECT_EQ(limiter.Admit(3, 1, 1, kT), 0);  // not tracked: not limited
  EXPECT_GT(limiter.Admit(1, 1, 1, kT), 0);  // the tracked ones still are
}

TEST(RateLimiterTest, ConcurrentRequestsNeverPassMoreThanTheBurst) {
  RateLimiter limiter;
  std::atomic<int> passed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) passed += limiter.Admit(4, 1, 100, kT) == 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(passed.load(), 100);
}

}  // namespace
}  // namespace adserver
