#pragma once

// The counts exploration draws from (issue 36 items 3 and 4), kept by the recompute that
// follows each counter flush: a CPC/CPA campaign's clicks or conversions and impressions
//   - forgotten as the campaign is shown: both decay by half over
//     DecisionOptions::half_life_impressions of its impressions, so a campaign whose rate
//     changes is re-learned within a few of them;
//   - for CPA, counting an impression only as its conversion opportunity matures: of an
//     impression of age a, the share 1 - e^(-a / tau) (an exponential conversion delay with mean
//     tau, Chapelle 2014), so a young campaign is not valued low for conversions that have not
//     landed yet.
// Only RecomputeRateLift updates it (one thread); requests read the published counts (explain).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/options.h"
#include "decision/rate_model.h"

namespace adserver::decision {

// Effective counts: what a draw's posterior is built from.
struct RateCounts {
  double successes = 0;  // clicks (CPC) or conversions (CPA), forgotten
  double trials = 0;     // impressions, forgotten and (CPA) matured
  // The prior fitted from the campaign's peers (PeerStats) its draw used; nullopt = the
  // catalog's default rate with the configured weight.
  std::optional<RatePrior> prior;
};

// The posterior a CPC/CPA campaign's value comes from (explain, the stats endpoint): with a
// draw, the effective counts and prior the draw used (`effective`, RateTracker::Published);
// without one (greedy, or not drawn yet), its counters with the default prior.
inline RatePosterior CurrentPosterior(const Campaign& campaign,
                                      const std::optional<RateCounts>& effective,
                                      const BudgetLedger::View& counters,
                                      const DecisionOptions& options) {
  return effective ? PosteriorFrom(campaign, effective->successes, effective->trials, options,
                                   effective->prior)
                   : PosteriorOf(campaign, counters, options);
}

class RateTracker {
 public:
  // Published counts for campaign ids below `capacity`.
  explicit RateTracker(size_t capacity);

  // Folds `counters` (the campaign's cumulative counts now) into its state and returns its
  // effective counts. The first call for a campaign (start-up, or new in the catalog) starts
  // from its cumulative counts scaled down to what forgetting keeps (a rate observed evenly),
  // all of them matured. Not thread-safe: the recompute's thread only.
  RateCounts Update(const Campaign& campaign, const BudgetLedger::View& counters, int64_t now,
                    const DecisionOptions& options);

  // A CPC campaign's counts when its impressions first reached kOpeningImpressions (watched
  // from below: not for a campaign first seen with more, e.g. after a restart). Every campaign
  // gets its opening whatever its rate, so openings are what peers' priors are fitted from (a
  // campaign's later counts depend on how well it did). Recompute thread only.
  static constexpr int64_t kOpeningImpressions = 100;
  std::optional<RateCounts> Opening(int64_t campaign_id) const;
  // Publishes the prior the campaign's draw used (after Update; nullopt = the default).
  void PublishPrior(int64_t campaign_id, const std::optional<RatePrior>& prior);
  // The counts (and prior) the campaign's current draw came from; nullopt before its first
  // Update (or an id beyond the capacity). Lock-free; any thread.
  std::optional<RateCounts> Published(int64_t campaign_id) const;

  // The mean conversion delay (seconds) used for `campaign` (DecisionOptions).
  static double DelaySeconds(const Campaign& campaign, const DecisionOptions& options);

 private:
  struct History {
    int64_t seen_impressions = 0;  // cumulative counts at the last Update
    int64_t seen_events = 0;
    int64_t at = 0;          // time of the last Update
    double impressions = 0;  // forgotten
    double events = 0;       // forgotten
    double immature = 0;     // CPA: the share of `impressions` not matured yet
    bool opening_watchable = false;  // first seen below kOpeningImpressions (CPC)
    std::optional<RateCounts> opening;
  };
  struct Slot {
    std::atomic<double> successes{0};
    std::atomic<double> trials{-1};  // < 0: none published
    std::atomic<double> prior_mean{0};
    std::atomic<double> prior_weight{0};  // 0: the default prior
  };
  // Its half-life in impressions now: half_life_impressions, or longer so that it holds
  // half_life_events events at the campaign's rate so far.
  static double HalfLife(const Campaign& c, double events, double impressions,
                         const DecisionOptions& o);

  std::unordered_map<int64_t, History> history_;
  const size_t capacity_;
  std::unique_ptr<Slot[]> published_;
};

}  // namespace adserver::decision
