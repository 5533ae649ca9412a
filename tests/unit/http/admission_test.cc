#include "http/detail/admission.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace adserver::http::detail {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kTarget = kMs / 2;  // 500 µs

// Reads one a millisecond for `ms` ms from `now`, each with `waited` ns, and `per_ms` requests
// after each; returns how many were admitted.
int Feed(Admission& admission, int64_t& now, int ms, int64_t waited, int per_ms = 100) {
  int admitted = 0;
  for (int i = 0; i < ms; ++i) {
    now += kMs;
    admission.OnRead(now, waited);
    for (int r = 0; r < per_ms; ++r) admitted += admission.Admit() ? 1 : 0;
  }
  return admitted;
}

TEST(AdmissionTest, WaitsUnderTheTargetAdmitEverything) {
  Admission admission{std::chrono::nanoseconds(kTarget)};
  int64_t now = 1'000 * kMs;
  EXPECT_EQ(Feed(admission, now, 1000, kTarget / 2), 100'000);
  EXPECT_EQ(admission.shed_fraction(), 0.0);
}

TEST(AdmissionTest, WaitsOverTheTargetShedAGrowingShareEvenly) {
  Admission admission{std::chrono::nanoseconds(kTarget)};
  int64_t now = 1'000 * kMs;
  Feed(admission, now, 1, 3 * kTarget / 2);
  const double first = admission.shed_fraction();
  EXPECT_GT(first, 0.0);
  Feed(admission, now, 10, 3 * kTarget / 2);
  EXPECT_GT(admission.shed_fraction(), first);  // the integral: still over target, p grows
  // Whatever p is, the share admitted over many requests is 1 - p (a credit, not a coin).
  const double p = admission.shed_fraction();
  int admitted = 0;
  for (int r = 0; r < 10'000; ++r) admitted += admission.Admit() ? 1 : 0;
  EXPECT_NEAR(admitted, (1.0 - p) * 10'000, 2);
  // Never sheds everything.
  Feed(admission, now, 5000, 3 * kTarget);
  EXPECT_LE(admission.shed_fraction(), Admission::kMaxShed);
  EXPECT_GT(Feed(admission, now, 100, 3 * kTarget), 0);
}

TEST(AdmissionTest, AGrowingWaitRaisesTheShareAtOnce) {
  Admission admission{std::chrono::nanoseconds(kTarget)};
  int64_t now = 1'000 * kMs;
  Feed(admission, now, 5, kTarget / 2);
  EXPECT_EQ(admission.shed_fraction(), 0.0);
  now += kMs;
  admission.OnRead(now, 3 * kTarget);  // the wait jumped by 2.5 targets in one interval
  EXPECT_GT(admission.shed_fraction(), 0.3);
}

TEST(AdmissionTest, QuietWaitsAndIdleTimeBringTheShareBackToZero) {
  Admission admission{std::chrono::nanoseconds(kTarget)};
  int64_t now = 1'000 * kMs;
  Feed(admission, now, 50, 2 * kTarget);
  ASSERT_GT(admission.shed_fraction(), 0.5);
  Feed(admission, now, 200, kTarget / 4);
  EXPECT_EQ(admission.shed_fraction(), 0.0);

  Feed(admission, now, 50, 2 * kTarget);
  ASSERT_GT(admission.shed_fraction(), 0.5);
  now += 200 * kMs;  // no read for 200 ms
  admission.OnRead(now, 0);
  EXPECT_EQ(admission.shed_fraction(), 0.0);
  EXPECT_TRUE(admission.Admit());
}

}  // namespace
}  // namespace adserver::http::detail
