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

// Issue 36 item 2: the prior peers suggest (method of moments on the Beta-binomial).
TEST(RateModelTest, PeersThatAgreeMakeAStrongPriorAtTheirAverageRate) {
  PeerStats agree;
  for (double clicks : {30.0, 31.0, 29.0, 30.0, 30.0}) agree.Add(clicks, 10'000);
  std::optional<RatePrior> prior = agree.PriorFor(0, 0, 1000);
  ASSERT_TRUE(prior.has_value());
  EXPECT_NEAR(prior->mean, 0.003, 1e-9);
  // Their rates differ less than 10,000 impressions' noise: the weight is the cap.
  EXPECT_DOUBLE_EQ(prior->weight, 1000);
  // The prior's mean is the members' average rate, not their pooled one: a member shown ten
  // times more (because it did well) does not pull the mean towards itself.
  PeerStats shown;
  shown.Add(10, 1000);
  shown.Add(10, 1000);
  shown.Add(500, 10'000);
  EXPECT_NEAR(shown.PriorFor(0, 0, 1e9)->mean, (0.01 + 0.01 + 0.05) / 3, 1e-12);
}

TEST(RateModelTest, PeersThatDifferMakeAWeakPrior) {
  PeerStats differ;
  for (double rate : {0.001, 0.004, 0.02, 0.06}) differ.Add(rate * 100'000, 100'000);
  std::optional<RatePrior> prior = differ.PriorFor(0, 0, 1000);
  ASSERT_TRUE(prior.has_value());
  const double mean = (0.001 + 0.004 + 0.02 + 0.06) / 4;
  EXPECT_NEAR(prior->mean, mean, 1e-12);
  // Var of the rates (sample) minus the binomial noise: m (1 - m) / v - 1.
  double squares = 0;
  for (double rate : {0.001, 0.004, 0.02, 0.06}) squares += (rate - mean) * (rate - mean);
  const double between = squares / 3 - mean * (1 - mean) / 100'000;
  EXPECT_NEAR(prior->weight, mean * (1 - mean) / between - 1, 1e-6);
  EXPECT_LT(prior->weight, 50);
  EXPECT_GE(prior->weight, kMinPeerWeight);
}

TEST(RateModelTest, APeerPriorNeedsEnoughPeersBesidesTheCampaignItself) {
  PeerStats group;
  group.Add(3, 1000);
  group.Add(4, 1000);
  group.Add(5, 1000);
  group.Add(900, 1000);  // the campaign asking
  group.Add(1, 10);      // too few trials to count
  EXPECT_EQ(group.members(), 4);
  // Its own counts are left out: the prior is its three peers'.
  std::optional<RatePrior> prior = group.PriorFor(900, 1000, 100);
  ASSERT_TRUE(prior.has_value());
  EXPECT_NEAR(prior->mean, 0.004, 1e-12);
  // A member asking counts its three others.
  EXPECT_NEAR(group.PriorFor(3, 1000, 100)->mean, (0.004 + 0.005 + 0.9) / 3, 1e-12);
  // In a group of three, a member has two others: none.
  PeerStats three;
  for (double clicks : {3.0, 4.0, 5.0}) three.Add(clicks, 1000);
  EXPECT_TRUE(three.PriorFor(0, 0, 100).has_value());
  EXPECT_FALSE(three.PriorFor(4, 1000, 100).has_value());
  // A group without any event keeps a small positive mean (half an event).
  PeerStats silent;
  for (int i = 0; i < 3; ++i) silent.Add(0, 1000);
  EXPECT_NEAR(silent.PriorFor(0, 0, 100)->mean, 0.5 / 3000, 1e-12);

  // PosteriorFrom with a prior uses it instead of the catalog's default rate.
  Campaign c;
  c.pricing_model = PricingModel::kCpc;
  c.bid_micros = 1'000'000;
  c.value_micros = 10'000;
  RatePosterior p =
      PosteriorFrom(c, 2, 100, DecisionOptions{}, RatePrior{.mean = 0.004, .weight = 250});
  EXPECT_DOUBLE_EQ(p.prior_mean, 0.004);
  EXPECT_DOUBLE_EQ(p.prior_weight, 250);
  EXPECT_DOUBLE_EQ(p.alpha, 3);
  EXPECT_DOUBLE_EQ(p.mean, 3.0 / 350);
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
