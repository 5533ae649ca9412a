#include "reports/statistics.h"

#include <gtest/gtest.h>

namespace adserver::reports {
namespace {

TEST(NormalCdfTest, ReferenceValues) {
  EXPECT_NEAR(NormalCdf(0), 0.5, 1e-12);
  EXPECT_NEAR(NormalCdf(1.959963984540054), 0.975, 1e-9);
  EXPECT_NEAR(NormalCdf(-1), 0.15865525393145707, 1e-12);
}

TEST(WilsonIntervalTest, ReferenceValues) {
  // 250 of 5000 (5 %): the roots of (p^ - p)^2 = z^2 p (1 - p) / n, 4.430 % .. 5.639 %.
  Interval a = WilsonInterval(250, 5000);
  EXPECT_NEAR(a.low, 0.0442969, 1e-6);
  EXPECT_NEAR(a.high, 0.0563940, 1e-6);
  // 0 of 10: lower bound 0, upper bound z^2 / (n + z^2) = 0.27753.
  Interval zero = WilsonInterval(0, 10);
  EXPECT_DOUBLE_EQ(zero.low, 0);
  EXPECT_NEAR(zero.high, 0.277533, 1e-5);
  // 10 of 10 mirrors it.
  Interval all = WilsonInterval(10, 10);
  EXPECT_NEAR(all.low, 0.722467, 1e-5);
  EXPECT_DOUBLE_EQ(all.high, 1);
  // 1 of 2: 0.0945 .. 0.9055.
  Interval half = WilsonInterval(1, 2);
  EXPECT_NEAR(half.low, 0.094531, 1e-5);
  EXPECT_NEAR(half.high, 0.905469, 1e-5);
}

TEST(WilsonIntervalTest, NoTrialsIsEmpty) {
  Interval none = WilsonInterval(0, 0);
  EXPECT_EQ(none.low, 0);
  EXPECT_EQ(none.high, 0);
}

TEST(ZTestTest, IssueReferenceValue) {
  // 250 clicks of 5,000 against 300 of 5,000: z ~ 2.19, p ~ 0.028.
  std::optional<ZTest> t = TwoProportionZTest(250, 5000, 300, 5000);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->z, 2.1931, 1e-3);
  EXPECT_NEAR(t->p, 0.0283, 1e-3);
  EXPECT_EQ(Judge(t), Better::kVariant);
}

TEST(ZTestTest, SignFollowsTheVariant) {
  std::optional<ZTest> t = TwoProportionZTest(300, 5000, 250, 5000);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->z, -2.1931, 1e-3);
  EXPECT_EQ(Judge(t), Better::kBaseline);
}

TEST(ZTestTest, NotSignificantSaysNothing) {
  // 50 of 1000 vs 55 of 1000: z ~ 0.50, p ~ 0.62.
  std::optional<ZTest> t = TwoProportionZTest(50, 1000, 55, 1000);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->z, 0.5016, 1e-3);
  EXPECT_NEAR(t->p, 0.6159, 1e-3);
  EXPECT_EQ(Judge(t), Better::kNone);
}

TEST(ZTestTest, NoVarianceOrNoSampleHasNoTest) {
  EXPECT_FALSE(TwoProportionZTest(0, 100, 0, 100).has_value());
  EXPECT_FALSE(TwoProportionZTest(100, 100, 100, 100).has_value());
  EXPECT_FALSE(TwoProportionZTest(1, 0, 1, 10).has_value());
  EXPECT_EQ(Judge(std::nullopt), Better::kNone);
}

}  // namespace
}  // namespace adserver::reports
