#include "http/detail/admission.h"

#include <gtest/gtest.h>

#include <chrono>

namespace adserver::http::detail {
namespace {

using std::chrono::microseconds;

constexpr microseconds kShedAfter{2000};

TEST(AdmissionTest, AQuietLoopAdmitsEverything) {
  Admission admission(kShedAfter);
  for (int i = 0; i < 100; ++i) admission.OnLag(microseconds(100));
  EXPECT_FALSE(admission.shedding());
  EXPECT_TRUE(admission.Admit());
}

TEST(AdmissionTest, OneLateProbeIsNotEnoughTwoInARowAre) {
  Admission admission(kShedAfter);
  admission.OnLag(microseconds(5000));
  EXPECT_FALSE(admission.shedding());  // the thread may have lost its CPU for a moment
  admission.OnLag(microseconds(500));  // on time again: the count starts over
  admission.OnLag(microseconds(2000));
  EXPECT_FALSE(admission.shedding());
  admission.OnLag(microseconds(2000));
  EXPECT_TRUE(admission.shedding());
  EXPECT_FALSE(admission.Admit());
}

TEST(AdmissionTest, SheddingStopsOnlyBelowHalfOfShedAfter) {
  Admission admission(kShedAfter);
  admission.OnLag(microseconds(3000));
  admission.OnLag(microseconds(3000));
  ASSERT_TRUE(admission.shedding());
  admission.OnLag(microseconds(1500));  // better, not yet caught up
  EXPECT_TRUE(admission.shedding());
  admission.OnLag(microseconds(1000));  // exactly half: still behind
  EXPECT_TRUE(admission.shedding());
  admission.OnLag(microseconds(999));
  EXPECT_FALSE(admission.shedding());
  EXPECT_TRUE(admission.Admit());
  // One late probe after that does not restart shedding at once.
  admission.OnLag(microseconds(4000));
  EXPECT_FALSE(admission.shedding());
}

TEST(AdmissionTest, DefaultAdmitsEverything) {
  Admission off;  // shedding off: the server never probes
  EXPECT_TRUE(off.Admit());
  EXPECT_FALSE(off.shedding());
}

}  // namespace
}  // namespace adserver::http::detail
