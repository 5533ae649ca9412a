#pragma once

// The counts exploration draws from (issue 36 items 3 and 4), kept by the recompute that
// follows each counter flush: a CPC/CPA campaign's clicks or conversions and impressions
//   - forgotten as the campaign is shown: both decay by half over
//     DecisionOptions::half_life_impressions of its impressions, so a campaign whose rate
//     changes is re-learned within a few of them;
//   - for CPA, counting an impression only as its conversion opportunity matures: of an
//     impression of age a, the share 1 - e^(-a / tau) (an exponential conversion delay with mean
//     tau, Chapelle 2014), and wholly once its window has passed, so a young campaign is not
//     valued low for conversions that have not landed yet; tau fitted from the network's
//     conversions (conversion_delay.h; FitDelay);
//   - for CPC, restarted from its recent impressions when they show its rate has changed
//     (DecisionOptions::change_threshold: a likelihood-ratio test over recent windows, as in the
//     change-point bandits of Besson et al. 2020), so a collapse or a recovery is seen within a
//     few expected clicks, not a half-life.
// Only RecomputeRateLift updates it (one thread); requests read the published counts (explain).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/conversion_delay.h"
#include "decision/options.h"
#include "decision/rate_model.h"

namespace adserver::decision {

// Effective counts: what a draw's posterior is built from.
struct RateCounts {
  double successes = 0;  // clicks (CPC) or conversions (CPA), forgotten
  double trials = 0;     // impressions, forgotten and (CPA) matured
  // Impressions, forgotten, matured or not (= trials for CPC); set by Update only.
  double impressions = 0;
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

  // The mean conversion delay (seconds) assumed for `campaign` before any fit: the configured
  // one (DecisionOptions::conversion_delay_days), else a quarter of its conversion window.
  static double DelaySeconds(const Campaign& campaign, const DecisionOptions& options);
  // The mean delay CPA impressions mature with now: the configured one, else the last fit
  // (before the first, DelaySeconds).
  double MeanDelaySeconds(const Campaign& campaign, const DecisionOptions& options) const;

  // Known conversion delays (DelayFeed::Take) for the campaigns' next Update.
  void AddDelays(std::span<const DelayFeed::Delta> deltas);
  // Fits the mean delay to every explored CPA campaign of `catalog` (kFitSteps EM steps from
  // the last fit; conversion_delay.h), unless options set one. Before the recompute's Updates.
  void FitDelay(const Catalog& catalog, int64_t now, const DecisionOptions& options);
  // The fitted mean delay in seconds (0 before a fit, or when the options set one); any thread.
  double fitted_delay_seconds() const { return fitted_published_.load(std::memory_order_relaxed); }
  // The prior of the fit: this many conversions at a quarter of the window.
  static constexpr double kDelayPriorConversions = 1;
  static constexpr int kFitSteps = 4;

  // A campaign's half-life in impressions with these effective counts: half_life_impressions,
  // or longer so that it holds half_life_events events at the campaign's rate so far.
  static double HalfLife(const Campaign& c, double events, double impressions,
                         const DecisionOptions& o);

  // Times the campaign's counts restarted on a detected change (explain, tests).
  int64_t Changes(int64_t campaign_id) const;

  // The generalized likelihood ratio of two Bernoulli samples (k of n and k0 of n0) having
  // different rates rather than one: n KL(k/n, p) + n0 KL(k0/n0, p), p the pooled rate.
  static double ChangeStatistic(double k, double n, double k0, double n0);
  // The same with the second sample's LogLikelihood(k0, n0) known (two logarithms fewer).
  static double ChangeStatistic(double k, double n, double k0, double n0, double log_likelihood0);
  // The log-likelihood of k events in n trials at their own rate k / n.
  static double LogLikelihood(double k, double n);

  // Change detection's windows: up to kMarks steps, each of kStepEvents expected events at the
  // campaign's rate (at least kMinStep impressions).
  static constexpr size_t kMarks = 16;
  static constexpr double kStepEvents = 2;
  static constexpr double kMinStep = 20;

 private:
  // Where a step of recent impressions started: the cumulative counters, and the effective
  // (forgotten) counts then, which the window from the mark on is tested against.
  struct Mark {
    int64_t impressions = 0;
    int64_t events = 0;
    double before_impressions = 0;
    double before_events = 0;
    double before_log_likelihood = 0;  // LogLikelihood(before_events, before_impressions)
  };
  struct History {
    int64_t seen_impressions = 0;  // cumulative counts at the last Update
    int64_t seen_events = 0;
    int64_t at = 0;          // time of the last Update
    double impressions = 0;  // forgotten
    double events = 0;       // forgotten
    double immature = 0;     // CPA: the share of `impressions` not matured yet
    // CPA: its impressions by age within the window, and its conversions with a known delay
    // (forgotten as `events`).
    std::unique_ptr<ImpressionAges> ages;
    double delayed = 0;
    double delay_seconds = 0;
    double eventual_rate = -1;       // its conversion rate as the last delay fit estimated it
    bool opening_watchable = false;  // first seen below kOpeningImpressions (CPC)
    std::optional<RateCounts> opening;
    // Change detection (CPC): the recent steps' marks, a ring of mark_count from mark_first.
    std::array<Mark, kMarks> marks{};
    size_t mark_first = 0;
    size_t mark_count = 0;
    int64_t changes = 0;
  };
  struct Slot {
    std::atomic<double> successes{0};
    std::atomic<double> trials{-1};  // < 0: none published
    std::atomic<double> prior_mean{0};
    std::atomic<double> prior_weight{0};  // 0: the default prior
  };
  // Tests the recent windows of `h` (after its counts took in the counters `impressions` and
  // `events`); on a change its counts restart from the window that shows it best. Then marks a
  // new step when one is due.
  static void DetectChange(const Campaign& c, History& h, int64_t impressions, int64_t events,
                           const DecisionOptions& o);

  std::unordered_map<int64_t, History> history_;
  std::unordered_map<int64_t, DelayFeed::Delta> pending_delays_;
  double fitted_delay_ = 0;  // seconds; 0 = not fitted
  std::atomic<double> fitted_published_{0};
  const size_t capacity_;
  std::unique_ptr<Slot[]> published_;
};

}  // namespace adserver::decision
