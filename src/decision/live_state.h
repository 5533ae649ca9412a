#pragma once

// The mutable state decisions read next to the immutable catalog: spend and event counters
// (budgets, pacing, predicted rates) and frequency caps. Owned by the serving process, shared
// by every request; lock-free and thread-safe. Pure (time is passed in).

#include <atomic>
#include <span>

#include "common/address.h"
#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/frequency_caps.h"
#include "decision/options.h"

namespace adserver::decision {

struct LiveState {
  explicit LiveState(const LiveStateOptions& live_options = {},
                     const DecisionOptions& decision_options = {})
      : options(decision_options),
        ledger(live_options.ledger_capacity),
        caps(live_options.frequency_capacity) {}

  // The value model and pacing tuning of every decision made with this state.
  const DecisionOptions options;
  BudgetLedger ledger;
  FrequencyCaps caps;

  // The largest factor by which a learned click/conversion rate has exceeded its prior mean
  // (at least 1). Only grows; lets the auction bound CPC/CPA values without reading counters.
  double MaxRateLift() const;
  void NoteRateLift(double lift);

 private:
  std::atomic<double> max_rate_lift_{1.0};
};

// Recomputes MaxRateLift from the counters of every CPC/CPA campaign of `catalog` (after
// counters were restored at start-up).
void RecomputeRateLift(LiveState& state, const Catalog& catalog, int64_t now);

// What one impression of `campaign` costs: CPM bid / 1000 (rounded down), 0 for CPC and CPA.
Micros ImpressionPrice(const Campaign& campaign);

// Billable events. An impression (a 200 served by a live key) is charged to CPM campaigns and
// counted against the frequency cap of every wallet of the request; a click is charged to CPC
// campaigns, a conversion to CPA campaigns. All of them feed the predicted rates.
void RecordImpression(LiveState& state, const Campaign& campaign, std::span<const Address> wallets,
                      int64_t now);
void RecordClick(LiveState& state, const Campaign& campaign, int64_t now);
void RecordConversion(LiveState& state, const Campaign& campaign, int64_t now);

// Beta-smoothed rate: (successes + mean * weight) / (trials + weight).
double SmoothedRate(int64_t successes, int64_t trials, double prior_mean, double prior_weight);

// Expected value of one impression of `campaign` in micros: CPM bid / 1000, CPC bid x
// predicted click rate, CPA bid x predicted conversion rate. Rates are Beta-smoothed from
// `counters` with the catalog's default rate (value_micros / bid) as prior mean.
double ExpectedValue(const Campaign& campaign, const BudgetLedger::View& counters,
                     const DecisionOptions& options);

}  // namespace adserver::decision
