#pragma once

// What a campaign is worth per impression (issue 36): the Beta posterior of its click rate
// (CPC) or conversion rate (CPA) from its counters, its mean (the greedy value) and draws from
// it (Thompson sampling; LiveState keeps each campaign's current draw). Pure: randomness comes
// in as a seed, and the same seed gives the same draw.

#include <cstdint>

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

RatePosterior PosteriorOf(const Campaign& campaign, const BudgetLedger::View& counters,
                          const DecisionOptions& options);
// The same from effective counts (RateTracker).
RatePosterior PosteriorFrom(const Campaign& campaign, double successes, double trials,
                            const DecisionOptions& options);

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
