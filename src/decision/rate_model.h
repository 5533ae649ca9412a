#pragma once

// What a campaign is worth per impression (issue 36): the Beta posterior of its click rate
// (CPC) or conversion rate (CPA) from its counters, its mean (the greedy value) and a draw from
// it (Thompson sampling). Pure: randomness comes in as a seed; the same seed gives the same
// draw, whichever order campaigns are evaluated in.

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
  int64_t successes = 0;    // clicks (CPC) or conversions (CPA)
  int64_t trials = 0;       // impressions
  double alpha = 0;
  double beta = 0;
  double mean = 0;  // the greedy rate (SmoothedRate)
  // The largest rate a draw can take: mean + DecisionOptions::explore_cap_sigmas standard
  // deviations (at most 1). The auction's bounds rely on no draw exceeding it.
  double cap = 0;
};

RatePosterior PosteriorOf(const Campaign& campaign, const BudgetLedger::View& counters,
                          const DecisionOptions& options);

// Expected value of one impression of `campaign` in micros: CPM bid / 1000, CPC bid x
// predicted click rate, CPA bid x predicted conversion rate. Rates are Beta-smoothed from
// `counters` with the catalog's default rate (value_micros / bid) as prior mean.
double ExpectedValue(const Campaign& campaign, const BudgetLedger::View& counters,
                     const DecisionOptions& options);

// The largest value a decision can give `campaign` with these counters: ExpectedValue when
// exploration is off or the campaign is CPM, else bid x the posterior's cap. The auction prunes
// with it (LiveState lift ceilings).
double ValueCeiling(const Campaign& campaign, const BudgetLedger::View& counters,
                    const DecisionOptions& options);

// The ceiling lift (cap / prior mean) of a campaign without counters whose prior mean is
// `prior_mean` (0 = none: 1), with exploration on; the largest over the catalog's CPC and CPA
// priors bounds campaigns whose lift ceiling is not recorded yet.
double PriorCeilingLift(double prior_mean, double prior_weight, const DecisionOptions& options);
double PriorCeilingLift(const Catalog& catalog, const DecisionOptions& options);

// One draw from Beta(alpha, beta) (both > 0) determined by `seed`: Marsaglia-Tsang Gamma
// draws on a SplitMix64 stream. Allocation-free, about 100 ns.
double SampleBeta(double alpha, double beta, uint64_t seed);

// A campaign's draw seed in a decision: mixes the decision's nonce with the campaign id.
uint64_t DrawSeed(uint64_t nonce, int64_t campaign_id);

}  // namespace adserver::decision
