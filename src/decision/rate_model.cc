#include "decision/rate_model.h"

#include <algorithm>
#include <boost/math/distributions/beta.hpp>
#include <cmath>
#include <numbers>

#include "common/splitmix64.h"

namespace adserver::decision {
namespace {

// Uniform and normal draws on a SplitMix64 stream: a draw depends on its seed only and costs
// no state shared between threads.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : bits_(seed) {}
  uint64_t Next() { return bits_.Next(); }
  // Uniform on the open interval (0, 1).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box-Muller, one of the pair).
  double Normal() {
    const double radius = std::sqrt(-2 * std::log(Uniform()));
    return radius * std::cos(2 * std::numbers::pi * Uniform());
  }

 private:
  SplitMix64 bits_;
};

// Gamma(shape, 1): Marsaglia and Tsang (2000), "A simple method for generating gamma
// variables"; shape < 1 through Gamma(shape + 1) x U^(1 / shape).
double Gamma(double shape, SplitMix& rng) {
  if (shape < 1) return Gamma(shape + 1, rng) * std::pow(rng.Uniform(), 1 / shape);
  const double d = shape - 1.0 / 3;
  const double c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = rng.Normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.Uniform();
    const double x2 = x * x;
    if (u < 1 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1 - v + std::log(v))) return d * v;
  }
}

}  // namespace

double SmoothedRate(int64_t successes, int64_t trials, double prior_mean, double prior_weight) {
  double denominator = static_cast<double>(trials) + prior_weight;
  if (denominator <= 0) return prior_mean;
  return (static_cast<double>(successes) + prior_mean * prior_weight) / denominator;
}

// The prior weight of `c`'s rate: a campaign that opted out of exploration (Campaign::explore)
// keeps the greedy rule's default weight unless the operator pinned one.
double PriorWeightOf(const Campaign& c, const DecisionOptions& o) {
  const bool cpc = c.pricing_model == PricingModel::kCpc;
  const double pinned = cpc ? o.ctr_prior_weight : o.cvr_prior_weight;
  if (!c.explore && o.explore && pinned <= 0) {
    return cpc ? kGreedyCtrPriorWeight : kGreedyCvrPriorWeight;
  }
  return cpc ? CtrPriorWeight(o) : CvrPriorWeight(o);
}

RatePosterior PosteriorFrom(const Campaign& c, double successes, double trials,
                            const DecisionOptions& o, const std::optional<RatePrior>& prior) {
  RatePosterior p;
  if (c.pricing_model == PricingModel::kCpm || c.bid_micros <= 0) return p;
  p.learned = true;
  if (prior) {
    p.prior_mean = std::clamp(prior->mean, 0.0, 1.0);
    p.prior_weight = prior->weight;
  } else {
    // The catalog valued the bid at the default rate: that rate is the prior mean.
    p.prior_mean = std::clamp(c.value_micros / static_cast<double>(c.bid_micros), 0.0, 1.0);
    p.prior_weight = PriorWeightOf(c, o);
  }
  p.successes = successes;
  p.trials = trials;
  const double denominator = trials + p.prior_weight;
  p.mean =
      denominator > 0 ? (successes + p.prior_mean * p.prior_weight) / denominator : p.prior_mean;
  p.alpha = std::max(successes, 0.0) + p.prior_mean * p.prior_weight;
  p.beta = std::max(trials - successes, 0.0) + (1 - p.prior_mean) * p.prior_weight;
  return p;
}

void PeerStats::Add(double successes, double trials) {
  if (!Qualifies(trials)) return;
  const double rate = std::clamp(successes / trials, 0.0, 1.0);
  ++members_;
  trials_ += trials;
  rate_sum_ += rate;
  rate_squares_ += rate * rate;
  inverse_trials_ += 1 / trials;
}

std::optional<RatePrior> PeerStats::PriorFor(double successes, double trials,
                                             double max_weight) const {
  // Leave the campaign's own counts out.
  int k = members_;
  double n = trials_, sum = rate_sum_, squares = rate_squares_, inverse = inverse_trials_;
  if (Qualifies(trials)) {
    const double rate = std::clamp(successes / trials, 0.0, 1.0);
    --k;
    n -= trials;
    sum -= rate;
    squares -= rate * rate;
    inverse -= 1 / trials;
  }
  if (k < kMinPeers || !(n > 0)) return std::nullopt;
  // At least half an event: a group without any keeps a small, positive mean.
  const double mean = std::clamp(std::max(sum / k, 0.5 / n), 1e-9, 1 - 1e-9);
  const double spread = std::max(0.0, (squares - sum * sum / k) / (k - 1));
  const double noise = mean * (1 - mean) * inverse / k;
  const double between = spread - noise;
  const double cap = std::max(max_weight, kMinPeerWeight);
  const double weight =
      between > 0 ? std::clamp(mean * (1 - mean) / between - 1, kMinPeerWeight, cap) : cap;
  return RatePrior{.mean = mean, .weight = weight};
}

RatePosterior PosteriorOf(const Campaign& c, const BudgetLedger::View& v,
                          const DecisionOptions& o) {
  const bool cpc = c.pricing_model == PricingModel::kCpc;
  return PosteriorFrom(c, static_cast<double>(cpc ? v.clicks : v.conversions),
                       static_cast<double>(v.impressions), o);
}

RateInterval IntervalOf(const RatePosterior& p, double level) {
  if (!(p.alpha > 0 && p.beta > 0) || !(level > 0 && level < 1)) return {p.mean, p.mean};
  const boost::math::beta_distribution<double> beta(p.alpha, p.beta);
  const double tail = (1 - level) / 2;
  return {boost::math::quantile(beta, tail), boost::math::quantile(beta, 1 - tail)};
}

double ExpectedValue(const Campaign& c, const BudgetLedger::View& v, const DecisionOptions& o) {
  if (c.pricing_model == PricingModel::kCpm || c.bid_micros <= 0) return c.value_micros;
  auto bid = static_cast<double>(c.bid_micros);
  double prior_mean = c.value_micros / bid;
  const double weight = PriorWeightOf(c, o);
  if (c.pricing_model == PricingModel::kCpc) {
    return bid * SmoothedRate(v.clicks, v.impressions, prior_mean, weight);
  }
  return bid * SmoothedRate(v.conversions, v.impressions, prior_mean, weight);
}

double SampleBeta(double alpha, double beta, uint64_t seed) {
  SplitMix rng(seed);
  const double a = Gamma(alpha, rng);
  const double b = Gamma(beta, rng);
  const double sum = a + b;
  // Both draws underflow only for shapes far below 1; the mean is then the honest answer.
  return sum > 0 ? a / sum : alpha / (alpha + beta);
}

uint64_t DrawSeed(uint64_t nonce, int64_t campaign_id) {
  SplitMix mix(nonce ^ (static_cast<uint64_t>(campaign_id) * 0xD1B54A32D192ED03ULL));
  return mix.Next();
}

}  // namespace adserver::decision
