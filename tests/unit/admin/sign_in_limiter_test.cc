#include "admin/sign_in_limiter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace adserver::admin {
namespace {

using std::chrono::seconds;

constexpr int64_t kStart = 1'767'225'600;

TEST(SignInLimiterTest, BacksOffExponentiallyAfterTheFreeFailures) {
  FakeClock clock(kStart * 1'000'000);
  SignInLimiter limiter(clock,
                        {.free_failures = 3, .base_backoff_seconds = 2, .max_backoff_seconds = 16});
  for (int i = 0; i < 2; ++i) limiter.RecordFailure("email:a@b.c");
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 0);
  limiter.RecordFailure("email:a@b.c");  // the 3rd (the free ones used): the next waits 2 s
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 2);
  limiter.RecordFailure("email:a@b.c");  // 4th: 4 s
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 4);
  for (int i = 0; i < 10; ++i) limiter.RecordFailure("email:a@b.c");
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 16);  // capped
  clock.Advance(seconds(10));
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 6);
  clock.Advance(seconds(6));
  EXPECT_EQ(limiter.RetryAfter("email:a@b.c"), 0);
  EXPECT_EQ(limiter.RetryAfter("email:other@b.c"), 0);  // per key
}

TEST(SignInLimiterTest, ResetAndForgetClearAKey) {
  FakeClock clock(kStart * 1'000'000);
  SignInLimiter limiter(clock, {.free_failures = 2, .forget_after_seconds = 100});
  limiter.RecordFailure("ip:1.2.3.4");
  limiter.RecordFailure("ip:1.2.3.4");
  EXPECT_GT(limiter.RetryAfter("ip:1.2.3.4"), 0);
  limiter.Reset("ip:1.2.3.4");
  EXPECT_EQ(limiter.RetryAfter("ip:1.2.3.4"), 0);
  limiter.RecordFailure("ip:1.2.3.4");
  clock.Advance(seconds(100));
  limiter.RecordFailure("ip:1.2.3.4");  // the first is forgotten: one failure again, free
  EXPECT_EQ(limiter.RetryAfter("ip:1.2.3.4"), 0);
}

TEST(SignInLimiterTest, TableNeverGrowsPastItsCap) {
  FakeClock clock(kStart * 1'000'000);
  SignInLimiter limiter(clock, {.free_failures = 0, .max_entries = 100});
  for (int i = 0; i < 10'000; ++i) {
    limiter.RecordFailure("ip:" + std::to_string(i));
    if (i % 100 == 0) clock.Advance(seconds(1));
  }
  EXPECT_EQ(limiter.SizeForTest(), 100u);
  // The most recent keys are the ones kept.
  EXPECT_GT(limiter.RetryAfter("ip:9999"), 0);
  EXPECT_EQ(limiter.RetryAfter("ip:0"), 0);
}

}  // namespace
}  // namespace adserver::admin
