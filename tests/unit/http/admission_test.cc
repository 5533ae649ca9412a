#include "http/detail/admission.h"

#include <gtest/gtest.h>

#include <chrono>

namespace adserver::http::detail {
namespace {

using std::chrono::microseconds;

constexpr microseconds kShedAfter{2000};

int AdmittedOutOf(Admission& admission, int requests) {
  int admitted = 0;
  for (int i = 0; i < requests; ++i) admitted += admission.Admit() ? 1 : 0;
  return admitted;
}

TEST(AdmissionTest, AQuietLoopAdmitsEverything) {
  Admission admission(kShedAfter);
  for (int i = 0; i < 100; ++i) admission.OnLag(microseconds(100));
  EXPECT_FALSE(admission.shedding());
  EXPECT_EQ(AdmittedOutOf(admission, 1000), 1000);
}

TEST(AdmissionTest, LagCutsTheFractionAndQuietGivesItBack) {
  Admission admission(kShedAfter);
  admission.OnLag(microseconds(2500));  // at least shed_after: halved
  EXPECT_EQ(admission.admit(), Admission::kAll / 2);
  admission.OnLag(microseconds(1200));  // at least half of it: an eighth off
  EXPECT_EQ(admission.admit(), Admission::kAll / 2 - Admission::kAll / 16);
  admission.OnLag(microseconds(700));  // between a quarter and a half: held
  EXPECT_EQ(admission.admit(), Admission::kAll / 2 - Admission::kAll / 16);
  for (int i = 0; i < 20; ++i) admission.OnLag(microseconds(2000));
  EXPECT_EQ(admission.admit(), 0u);  // a loop far behind sheds everything
  EXPECT_EQ(AdmittedOutOf(admission, 100), 0);
  // Under a quarter of shed_after: kAll/32 back per probe, all of it within 32.
  admission.OnLag(microseconds(400));
  EXPECT_EQ(admission.admit(), Admission::kAll / 32);
  for (int i = 0; i < 31; ++i) admission.OnLag(microseconds(100));
  EXPECT_EQ(admission.admit(), Admission::kAll);
  EXPECT_FALSE(admission.shedding());
}

TEST(AdmissionTest, AdmittedRequestsAreSpreadEvenly) {
  Admission admission(kShedAfter);
  admission.OnLag(microseconds(3000));  // half
  ASSERT_TRUE(admission.shedding());
  // Every other request, not a run of admits then a run of sheds.
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(admission.Admit()) << i;
    EXPECT_TRUE(admission.Admit()) << i;
  }
  admission.OnLag(microseconds(3000));  // a quarter
  EXPECT_EQ(AdmittedOutOf(admission, 400), 100);
  // Any fraction: admitted / offered matches it within one request.
  for (int i = 0; i < 5; ++i) admission.OnLag(microseconds(1000));  // cut by an eighth each
  const uint32_t admit = admission.admit();
  const int offered = 10'000;
  const int expected = static_cast<int>(static_cast<uint64_t>(offered) * admit / Admission::kAll);
  EXPECT_NEAR(AdmittedOutOf(admission, offered), expected, 1);
}

TEST(AdmissionTest, OffMeansNoShedding) {
  Admission off;  // shed_after 0: every lag is "at least shed_after", but the server never
                  // probes when shedding is off; the default must still admit everything.
  EXPECT_EQ(AdmittedOutOf(off, 100), 100);
}

}  // namespace
}  // namespace adserver::http::detail
