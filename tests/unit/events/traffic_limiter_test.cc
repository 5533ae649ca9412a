#include "events/traffic_limiter.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace adserver::events {
namespace {

const std::vector<RateWindow> kDefaults = {{60, 1}, {600, 3}, {3600, 10}, {86400, 25}};
constexpr int64_t kDay = 1'700'006'400;  // a day's start (multiple of 86400)

TEST(TrafficLimiterTest, OnePerMinute) {
  TrafficLimiter limiter(1024);
  EXPECT_FALSE(limiter.Hit(42, kDefaults, kDay));
  EXPECT_TRUE(limiter.Hit(42, kDefaults, kDay + 59));
  EXPECT_FALSE(limiter.Hit(42, kDefaults, kDay + 60));  // next minute
}

TEST(TrafficLimiterTest, ThreePerTenMinutes) {
  TrafficLimiter limiter(1024);
  for (int minute = 0; minute < 3; ++minute) {
    EXPECT_FALSE(limiter.Hit(7, kDefaults, kDay + 60 * minute)) << minute;
  }
  EXPECT_TRUE(limiter.Hit(7, kDefaults, kDay + 180));
  EXPECT_FALSE(limiter.Hit(7, kDefaults, kDay + 600));  // the next ten minutes
}

TEST(TrafficLimiterTest, TenPerHourAndTwentyFivePerDay) {
  TrafficLimiter limiter(1024);
  // Three in each ten-minute window (one a minute) fill the hour after ten clicks.
  int allowed = 0;
  for (int slot = 0; slot < 6; ++slot) {
    for (int i = 0; i < 3; ++i) allowed += !limiter.Hit(9, kDefaults, kDay + 600 * slot + 60 * i);
  }
  EXPECT_EQ(allowed, 10);
  // Over the day: the daily window stops it at 25 whatever the hours allow.
  allowed = 0;
  TrafficLimiter daily(1024);
  for (int hour = 0; hour < 24; ++hour) {
    for (int i = 0; i < 3; ++i) {
      allowed += !daily.Hit(9, kDefaults, kDay + 3600 * hour + 60 * i);
    }
  }
  EXPECT_EQ(allowed, 25);
}

TEST(TrafficLimiterTest, KeysAreCountedApart) {
  TrafficLimiter limiter(1024);
  EXPECT_FALSE(limiter.Hit(1, kDefaults, kDay));
  EXPECT_FALSE(limiter.Hit(2, kDefaults, kDay));
  EXPECT_TRUE(limiter.Hit(1, kDefaults, kDay));
}

TEST(TrafficLimiterTest, AZeroMaxTurnsAWindowOff) {
  TrafficLimiter limiter(16);
  std::vector<RateWindow> off = {{60, 0}};
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Hit(3, off, kDay));
}

TEST(TrafficLimiterTest, MemoryStaysFixedUnderManyKeys) {
  TrafficLimiter limiter(64);
  EXPECT_EQ(limiter.entries(), 64u);
  // Far more keys than entries: none is limited on its first event, and the table keeps its
  // size (a forgotten key starts over).
  for (uint64_t key = 1; key <= 100'000; ++key) {
    ASSERT_FALSE(limiter.Hit(key * 0x9E3779B97F4A7C15ull, kDefaults, kDay)) << key;
  }
  EXPECT_EQ(limiter.entries(), 64u);
}

TEST(TrafficLimiterTest, ARecentKeySurvivesOneNewcomerInItsPair) {
  TrafficLimiter limiter(64);
  const uint64_t key = 128;       // pair 0
  const uint64_t other = 64 + 1;  // pair 0 too (65 % 64 = 1)
  EXPECT_FALSE(limiter.Hit(key, kDefaults, kDay + 10));
  EXPECT_FALSE(limiter.Hit(other, kDefaults, kDay + 5));  // takes the pair's free entry
  EXPECT_TRUE(limiter.Hit(key, kDefaults, kDay + 20));
}

TEST(TrafficLimiterTest, CountsExactlyUnderConcurrency) {
  TrafficLimiter limiter(1024);
  std::vector<RateWindow> hundred = {{60, 100}};
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) allowed += !limiter.Hit(5, hundred, kDay);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 100);
}

}  // namespace
}  // namespace adserver::events
