#pragma once

// What a campaign is worth per impression (issue 36): the Beta posterior of its click rate
// (CPC) or conversion rate (CPA) from its counters, its mean (the greedy value) and draws from
// it (Thompson sampling; LiveState keeps each campaign's current draw). Pure: randomness comes
// in as a seed, and the same seed gives the same draw.

#include <cstdint>
#include <optional>

#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/options.h"

namespace adserver::decision {

// Beta-smoothed rate: (successes + mean * weight) / (trials + weight).
double SmoothedRate(int64_t successes, int64_t trials, double prior_mean, double prior_weight);

// The Beta posterior of a CPC or CPA campaign's rate: Beta(alpha, beta) with
// alpha = successes + prior_mean * prior_weight and
// beta = max(trials - successes, 0) + (1 - prior_mean) * prior_weight.
struct RatePosterior {
  bool learned = false;     // false: a CPM campaign (or no bid); the value is its catalog value
  double prior_mean = 0;    // the catalog's default rate (value_micros / bid)
  double prior_weight = 0;  // in pseudo-impressions
  // Clicks (CPC) or conversions (CPA) and impressions: the counters, or with exploration the
  // effective counts (forgotten, matured: RateTracker).
  double successes = 0;
  double trials = 0;
  double alpha = 0;
  double beta = 0;
  double mean = 0;  // the greedy rate (SmoothedRate)
};

// A Beta prior of a rate: its mean and weight in pseudo-impressions.
struct RatePrior {
  double mean = 0;
  double weight = 0;
};

RatePosterior PosteriorOf(const Campaign& campaign, const BudgetLedger::View& counters,
                          const DecisionOptions& options);
// The same from effective counts (RateTracker), with `prior` instead of the catalog's default
// rate and the configured weight when given (a prior fitted from peers, PeerStats).
RatePosterior PosteriorFrom(const Campaign& campaign, double successes, double trials,
                            const DecisionOptions& options,
                            const std::optional<RatePrior>& prior = std::nullopt);

// Empirical Bayes (issue 36 item 2): the prior a group of campaigns (the same pricing model, in
// one community or network-wide) suggests for one of them, from their effective counts. Method
// of moments on the Beta-binomial: the mean is the group's pooled rate; the weight is
// m (1 - m) / v - 1, where v is the spread of the members' rates beyond what their own
// sampling noise explains (m (1 - m) / n on average), so campaigns that agree make a strong
// prior and campaigns that differ a weak one. Members need kMinPeerTrials trials; a fit needs
// kMinPeers of them besides the campaign itself (its own counts are left out, so they are not
// counted twice).
inline constexpr double kMinPeerTrials = 50;
inline constexpr int kMinPeers = 3;
inline constexpr double kMinPeerWeight = 2;
class PeerStats {
 public:
  void Add(double successes, double trials);
  // The prior for a campaign with these counts (0, 0: one not in the group), its weight at
  // most `max_weight`; nullopt with fewer than kMinPeers other members.
  std::optional<RatePrior> PriorFor(double successes, double trials, double max_weight) const;
  int members() const { return members_; }

 private:
  static bool Qualifies(double trials) { return trials >= kMinPeerTrials; }
  int members_ = 0;
  double trials_ = 0;
  double rate_sum_ = 0;        // sum of the members' rates
  double rate_squares_ = 0;    // sum of their squares
  double inverse_trials_ = 0;  // sum of 1 / trials
};

// The central `level` credible interval of a posterior's rate (e.g. 0.95: its 2.5 % and
// 97.5 % quantiles).
struct RateInterval {
  double low = 0;
  double high = 0;
};
RateInterval IntervalOf(const RatePosterior& posterior, double level);

// Expected value of one impression of `campaign` in micros: CPM bid / 1000, CPC bid x
// predicted click rate, CPA bid x predicted conversion rate. Rates are Beta-smoothed from
// `counters` with the catalog's default rate (value_micros / bid) as prior mean.
double ExpectedValue(const Campaign& campaign, const BudgetLedger::View& counters,
                     const DecisionOptions& options);

// One draw from Beta(alpha, beta) (both > 0) determined by `seed`: Marsaglia-Tsang Gamma
// draws on a SplitMix64 stream. Allocation-free, about 100 ns.
double SampleBeta(double alpha, double beta, uint64_t seed);

// A campaign's draw seed in a decision: mixes the decision's nonce with the campaign id.
uint64_t DrawSeed(uint64_t nonce, int64_t campaign_id);

}  // namespace adserver::decision
