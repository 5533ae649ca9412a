// The rate model of issue 36: Beta posteriors of CPC/CPA rates and the Thompson draws the
// auction values campaigns with.

#include "decision/rate_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace adserver::decision {
namespace {

struct Moments {
  double mean = 0;
  double variance = 0;
};

Moments Draws(double alpha, double beta, int n) {
  double sum = 0;
  double squares = 0;
  for (int i = 0; i < n; ++i) {
    const double x = SampleBeta(alpha, beta, DrawSeed(0xC0FFEE, i));
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 1);
    sum += x;
    squares += x * x;
  }
  const double mean = sum / n;
  return {mean, squares / n - mean * mean};
}

TEST(RateModelTest, BetaDrawsHaveTheDistributionsMeanAndVariance) {
  // Shapes below and above 1 (the Gamma sampler's two branches), skewed like a young campaign
  // (alpha 0.5 at a 1 % prior) and concentrated like an old one.
  for (auto [alpha, beta] : std::vector<std::pair<double, double>>{
           {0.5, 49.5}, {2, 3}, {10, 990}, {500, 49'500}, {0.05, 0.2}}) {
    const int n = 40'000;
    const Moments m = Draws(alpha, beta, n);
    const double mean = alpha / (alpha + beta);
    const double variance = alpha * beta / ((alpha + beta) * (alpha + beta) * (alpha + beta + 1));
    // The sample mean is within 5 standard errors; the variance within 10 %.
    EXPECT_NEAR(m.mean, mean, 5 * std::sqrt(variance / n)) << alpha << ", " << beta;
    EXPECT_NEAR(m.variance, variance, 0.1 * variance) << alpha << ", " << beta;
  }
}

TEST(RateModelTest, ADrawDependsOnItsSeedOnly) {
  EXPECT_EQ(SampleBeta(3, 300, 42), SampleBeta(3, 300, 42));
  EXPECT_NE(SampleBeta(3, 300, 42), SampleBeta(3, 300, 43));
  EXPECT_EQ(DrawSeed(7, 100), DrawSeed(7, 100));
  EXPECT_NE(DrawSeed(7, 100), DrawSeed(7, 101));
  EXPECT_NE(DrawSeed(7, 100), DrawSeed(8, 100));
}

TEST(RateModelTest, PosteriorOfACpcCampaignIsItsPriorPlusItsCounts) {
  Campaign c;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 1'000'000;
  c.value_micros = 10'000;  // a 1 % default CTR
  DecisionOptions explore;
  RatePosterior fresh = PosteriorOf(c, {.tracked = true}, explore);
  EXPECT_TRUE(fresh.learned);
  EXPECT_DOUBLE_EQ(fresh.prior_mean, 0.01);
  EXPECT_DOUBLE_EQ(fresh.prior_weight, kExploreCtrPriorWeight);
  EXPECT_DOUBLE_EQ(fresh.alpha, 0.5);
  EXPECT_DOUBLE_EQ(fresh.beta, 49.5);
  EXPECT_DOUBLE_EQ(fresh.mean, 0.01);

  RatePosterior seen = PosteriorOf(
      c, {.tracked = true, .impressions = 1000, .clicks = 30, .conversions = 2}, explore);
  EXPECT_DOUBLE_EQ(seen.alpha, 30.5);
  EXPECT_DOUBLE_EQ(seen.beta, 970 + 49.5);
  EXPECT_DOUBLE_EQ(seen.mean, 30.5 / 1050);
  EXPECT_DOUBLE_EQ(ExpectedValue(c, {.tracked = true, .impressions = 1000, .clicks = 30}, explore),
                   1'000'000 * 30.5 / 1050);

  // Greedy: the weight of the rule before exploration.
  DecisionOptions greedy{.explore = false};
  EXPECT_DOUBLE_EQ(PosteriorOf(c, {.tracked = true}, greedy).prior_weight, 1000);
  EXPECT_DOUBLE_EQ(ExpectedValue(c, {.tracked = true, .impressions = 1000, .clicks = 30}, greedy),
                   1'000'000 * 40.0 / 2000);

  // CPM campaigns have no rate to learn.
  Campaign cpm;
  cpm.value_micros = 3000;
  EXPECT_FALSE(PosteriorOf(cpm, {.tracked = true}, explore).learned);
  EXPECT_DOUBLE_EQ(ExpectedValue(cpm, {.tracked = true}, explore), 3000);
}

TEST(RateModelTest, IntervalIsTheCentralCredibleInterval) {
  RatePosterior uniform{.learned = true, .alpha = 1, .beta = 1, .mean = 0.5};
  RateInterval i = IntervalOf(uniform, 0.95);
  EXPECT_NEAR(i.low, 0.025, 1e-12);
  EXPECT_NEAR(i.high, 0.975, 1e-12);
  // A young CPC campaign (the exploring prior, 200 impressions, 3 clicks): wide and skewed.
  Campaign c;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 1'000'000;
  c.value_micros = 10'000;
  RatePosterior p = PosteriorFrom(c, 3, 200, DecisionOptions{});
  i = IntervalOf(p, 0.95);
  EXPECT_LT(i.low, p.mean);
  EXPECT_GT(i.high, p.mean);
  EXPECT_GT(i.high - p.mean, p.mean - i.low);
  // 10,000 impressions at 2 %: about ±0.27 %.
  p = PosteriorFrom(c, 200, 10'000, DecisionOptions{});
  i = IntervalOf(p, 0.95);
  EXPECT_NEAR(i.high - i.low, 2 * 1.96 * std::sqrt(0.02 * 0.98 / 10'050), 2e-4);
}

}  // namespace
}  // namespace adserver::decision
