#pragma once

// Late conversions (issue 36 item 4): how long a CPA campaign's conversions take to land, fitted
// from the network's own conversions instead of assumed.
//
// A CPA impression counts towards its campaign's conversion rate only as its chance to convert
// matures: of an impression of age a, the share 1 - e^(-a / tau), tau the mean delay of an
// exponential delay distribution (Chapelle 2014, "Modeling delayed feedback in display
// advertising"), and wholly once its conversion window has passed. tau is fitted by
// expectation-maximization over every explored CPA campaign at once:
//   - a conversion whose delay d is known (the time between the serve or click it is attributed
//     to and its block) counts as an observed delay;
//   - an impression of age a without a conversion yet is censored: it will still convert with
//     probability w = p e^(-a / tau) / (1 - p + p e^(-a / tau)), p its campaign's eventual rate,
//     and if it does its delay is a + tau (the exponential has no memory);
//   - tau = (observed delays + Σ w (a + tau)) / (observed conversions + Σ w), each campaign's p =
//     (conversions + Σ w) / impressions, starting from the last fit; with kPriorConversions
//     conversions at a quarter of the conversion window as the prior, so a network without
//     conversions keeps that guess.
// Impressions are kept by age in ImpressionAges (per campaign: kBuckets slots over its window),
// conversions' delays come in through DelayFeed (the conversion handler; thread-safe, off the
// request path). Everything is forgotten as the campaign's own counts are (RateTracker).

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"

namespace adserver::decision {

// Known conversion delays as they are billed. Thread-safe (a mutex; never on the ad path).
class DelayFeed {
 public:
  struct Delta {
    int64_t campaign_id = 0;
    double conversions = 0;  // with a known delay
    double seconds = 0;      // their delays' sum
  };
  // `max_campaigns`: distinct campaigns held between two Take()s; further ones are dropped.
  explicit DelayFeed(size_t max_campaigns) : max_campaigns_(max_campaigns) {}
  void Add(int64_t campaign_id, double delay_seconds);
  std::vector<Delta> Take();
  int64_t dropped() const;

 private:
  const size_t max_campaigns_;
  mutable Mutex mu_;
  std::unordered_map<int64_t, Delta> pending_ ADS_GUARDED_BY(mu_);
  int64_t dropped_ ADS_GUARDED_BY(mu_) = 0;
};

// A CPA campaign's (forgotten) impressions by age within its conversion window: kBuckets slots of
// window / kBuckets seconds, each with its impressions' mean arrival time. Impressions older
// than the window have matured and are dropped.
class ImpressionAges {
 public:
  static constexpr size_t kBuckets = 32;

  // Decays every slot by `kept`, then adds `impressions` arriving at `now`.
  void Add(double impressions, int64_t now, double window_seconds, double kept);
  // fn(age_seconds, impressions) for each slot still within the window at `now`.
  template <typename Fn>
  void ForEach(int64_t now, double window_seconds, Fn fn) const {
    const double width = window_seconds / kBuckets;
    const auto current = static_cast<int64_t>(std::floor(static_cast<double>(now) / width));
    for (size_t k = 0; k < kBuckets; ++k) {
      if (mass_[k] <= 0 || slot_[k] <= current - static_cast<int64_t>(kBuckets)) continue;
      const double age = std::max(0.0, static_cast<double>(now) - arrival_[k]);
      if (age < window_seconds) fn(age, mass_[k]);
    }
  }
  // The impressions whose conversion opportunity has not matured: Σ impressions e^(-age / tau).
  double Immature(int64_t now, double window_seconds, double mean_delay_seconds) const;

 private:
  std::array<double, kBuckets> mass_{};
  std::array<double, kBuckets> arrival_{};  // the slot's mean arrival time (seconds)
  std::array<int64_t, kBuckets> slot_{};    // the slot's number (time / width)
};

// One CPA campaign's part of the fit.
struct DelaySample {
  double conversions = 0;   // forgotten, all of them
  double impressions = 0;   // forgotten, matured or not
  double prior_rate = 0;    // its prior's mean conversion rate and weight (pseudo-impressions)
  double prior_weight = 0;
  double delayed = 0;        // forgotten conversions with a known delay
  double delay_seconds = 0;  // their delays' sum
  const ImpressionAges* ages = nullptr;
  double window_seconds = 0;
  // Its eventual conversion rate as the last fit left it (< 0: none yet, start from its
  // counts); FitMeanDelay leaves its own here, so a fit a few steps at a time goes on where the
  // last one stopped.
  double rate = -1;
};

// The pooled mean delay (seconds) by `iterations` EM steps from `start_seconds` (0: from the
// prior), with `prior_conversions` conversions at `prior_seconds` as the prior.
double FitMeanDelay(std::span<DelaySample> samples, int64_t now, double prior_seconds,
                    double prior_conversions, double start_seconds, int iterations);

}  // namespace adserver::decision
