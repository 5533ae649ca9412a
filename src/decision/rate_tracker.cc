#include "decision/rate_tracker.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace adserver::decision {

RateTracker::RateTracker(size_t capacity)
    : capacity_(capacity), published_(std::make_unique<Slot[]>(capacity)) {}

double RateTracker::DelaySeconds(const Campaign& c, const DecisionOptions& o) {
  if (o.conversion_delay_days > 0) return o.conversion_delay_days * 86400;
  const int32_t window = c.conversion ? c.conversion->window_days : 14;
  return std::max(1, window) * 86400.0 / 4;
}

double RateTracker::MeanDelaySeconds(const Campaign& c, const DecisionOptions& o) const {
  if (o.conversion_delay_days > 0 || !(fitted_delay_ > 0)) return DelaySeconds(c, o);
  return fitted_delay_;
}

namespace {

double WindowSeconds(const Campaign& c) {
  return std::max(1, c.conversion ? c.conversion->window_days : 14) * 86400.0;
}

}  // namespace

void RateTracker::AddDelays(std::span<const DelayFeed::Delta> deltas) {
  for (const DelayFeed::Delta& d : deltas) {
    DelayFeed::Delta& p = pending_delays_[d.campaign_id];
    p.campaign_id = d.campaign_id;
    p.conversions += d.conversions;
    p.seconds += d.seconds;
  }
}

void RateTracker::FitDelay(const Catalog& catalog, int64_t now, const DecisionOptions& o) {
  if (o.conversion_delay_days > 0) {
    fitted_delay_ = 0;
    fitted_published_.store(0, std::memory_order_relaxed);
    return;
  }
  std::vector<DelaySample> samples;
  std::vector<History*> of;
  double prior = 0;
  for (const Campaign& c : catalog.campaigns) {
    if (c.pricing_model != PricingModel::kCpa || !c.explore) continue;
    auto it = history_.find(c.id);
    if (it == history_.end()) continue;
    History& h = it->second;
    const RatePosterior prior_only = PosteriorFrom(c, 0, 0, o);
    samples.push_back({.conversions = h.events,
                       .impressions = h.impressions,
                       .prior_rate = prior_only.prior_mean,
                       .prior_weight = prior_only.prior_weight,
                       .delayed = h.delayed,
                       .delay_seconds = h.delay_seconds,
                       .ages = h.ages.get(),
                       .window_seconds = WindowSeconds(c),
                       .rate = h.eventual_rate});
    of.push_back(&h);
    prior += DelaySeconds(c, o);
  }
  if (samples.empty()) return;
  prior /= static_cast<double>(samples.size());
  fitted_delay_ =
      FitMeanDelay(samples, now, prior, kDelayPriorConversions, fitted_delay_, kFitSteps);
  for (size_t i = 0; i < samples.size(); ++i) of[i]->eventual_rate = samples[i].rate;
  fitted_published_.store(fitted_delay_, std::memory_order_relaxed);
}

RateCounts RateTracker::Update(const Campaign& c, const BudgetLedger::View& v, int64_t now,
                               const DecisionOptions& o) {
  const bool cpa = c.pricing_model == PricingModel::kCpa;
  const int64_t events = cpa ? v.conversions : v.clicks;
  auto [it, first] = history_.try_emplace(c.id);
  History& h = it->second;
  // At its rate so far: the cumulative counts at first (a restart), then the effective ones.
  const double half_life =
      first ? HalfLife(c, static_cast<double>(std::max<int64_t>(events, 0)),
                       static_cast<double>(std::max<int64_t>(v.impressions, 0)), o)
            : HalfLife(c, h.events, h.impressions, o);
  if (first) {
    // What forgetting keeps of a long record: half_life / ln 2 impressions' worth.
    const double kept = half_life > 0 ? half_life / std::numbers::ln2 : HUGE_VAL;
    const auto impressions = static_cast<double>(std::max<int64_t>(v.impressions, 0));
    const double scale = impressions > kept ? kept / impressions : 1;
    h.impressions = impressions * scale;
    h.events = static_cast<double>(std::max<int64_t>(events, 0)) * scale;
  } else {
    // Counters only grow, except a conversion undone by a reorg (events) and a ledger entry
    // evicted and started again (impressions): nothing new then.
    const double new_impressions =
        static_cast<double>(std::max<int64_t>(v.impressions - h.seen_impressions, 0));
    const auto new_events = static_cast<double>(events - h.seen_events);
    const double kept = half_life > 0 ? std::exp2(-new_impressions / half_life) : 1;
    h.impressions = h.impressions * kept + new_impressions;
    h.events = std::max(0.0, h.events * kept + new_events);
    if (cpa) {
      if (!h.ages) h.ages = std::make_unique<ImpressionAges>();
      h.ages->Add(new_impressions, now, WindowSeconds(c), kept);
      h.delayed *= kept;
      h.delay_seconds *= kept;
      h.immature = h.ages->Immature(now, WindowSeconds(c), MeanDelaySeconds(c, o));
    }
  }
  if (cpa) {
    if (auto d = pending_delays_.find(c.id); d != pending_delays_.end()) {
      h.delayed += d->second.conversions;
      h.delay_seconds += d->second.seconds;
      pending_delays_.erase(d);
    }
  }
  // The opening: the counts when the campaign's impressions first reach kOpeningImpressions,
  // if it was seen with fewer (CPC: clicks come at once; a CPA opening would need its
  // conversions to land first).
  if (first) h.opening_watchable = !cpa && v.impressions < kOpeningImpressions;
  if (h.opening_watchable && !h.opening && v.impressions >= kOpeningImpressions) {
    h.opening = RateCounts{.successes = static_cast<double>(std::max<int64_t>(events, 0)),
                           .trials = static_cast<double>(v.impressions)};
  }
  // Tested only when something new came in (no window changed otherwise).
  if (!cpa && o.change_threshold > 0 &&
      (first || v.impressions != h.seen_impressions || events != h.seen_events)) {
    DetectChange(c, h, v.impressions, events, o);
  }
  h.seen_impressions = v.impressions;
  h.seen_events = events;
  h.at = now;
  const RateCounts counts{.successes = h.events,
                          .trials = std::max(0.0, h.impressions - (cpa ? h.immature : 0)),
                          .impressions = h.impressions};
  if (c.id >= 0 && static_cast<uint64_t>(c.id) < capacity_) {
    Slot& slot = published_[c.id];
    slot.successes.store(counts.successes, std::memory_order_relaxed);
    slot.trials.store(counts.trials, std::memory_order_release);
  }
  return counts;
}

double RateTracker::HalfLife(const Campaign& c, double events, double impressions,
                             const DecisionOptions& o) {
  if (o.half_life_impressions <= 0) return 0;
  if (o.half_life_events <= 0 || c.bid_micros <= 0) return o.half_life_impressions;
  // The campaign's rate so far: its counts with one impression at the default rate.
  const double prior = std::clamp(c.value_micros / static_cast<double>(c.bid_micros), 1e-9, 1.0);
  const double rate = (events + prior) / (impressions + 1);
  return std::max(o.half_life_impressions, o.half_life_events / std::max(rate, 1e-9));
}

namespace {

// Kullback-Leibler divergence of Bernoulli(a) from Bernoulli(b), b in (0, 1).
double BernoulliKl(double a, double b) {
  double kl = 0;
  if (a > 0) kl += a * std::log(a / b);
  if (a < 1) kl += (1 - a) * std::log((1 - a) / (1 - b));
  return kl;
}

}  // namespace

double RateTracker::ChangeStatistic(double k, double n, double k0, double n0) {
  if (!(n > 0 && n0 > 0)) return 0;
  const double q = std::clamp(k / n, 0.0, 1.0);
  const double q0 = std::clamp(k0 / n0, 0.0, 1.0);
  const double pooled = std::clamp((k + k0) / (n + n0), 1e-12, 1 - 1e-12);
  return n * BernoulliKl(q, pooled) + n0 * BernoulliKl(q0, pooled);
}

double RateTracker::LogLikelihood(double k, double n) {
  if (!(n > 0)) return 0;
  const double q = std::clamp(k / n, 0.0, 1.0);
  double l = 0;
  if (k > 0) l += k * std::log(q);
  if (n - k > 0) l += (n - k) * std::log1p(-q);
  return l;
}

// The same as above with the second sample's maximized log-likelihood given (kept with its
// mark): n KL(q, p) + n0 KL(q0, p) = L(k, n) + L(k0, n0) - L_p(k + k0, n + n0), where L is the
// log-likelihood at the sample's own rate and L_p at the pooled one.
double RateTracker::ChangeStatistic(double k, double n, double k0, double n0,
                                    double log_likelihood0) {
  if (!(n > 0 && n0 > 0)) return 0;
  const double pooled = std::clamp((k + k0) / (n + n0), 1e-12, 1 - 1e-12);
  const double events = k + k0;
  const double pooled_l = events * std::log(pooled) + (n + n0 - events) * std::log1p(-pooled);
  return std::max(0.0, LogLikelihood(k, n) + log_likelihood0 - pooled_l);
}

void RateTracker::DetectChange(const Campaign& c, History& h, int64_t impressions, int64_t events,
                               const DecisionOptions& o) {
  auto mark_at = [&h](size_t k) -> Mark& { return h.marks[(h.mark_first + k) % kMarks]; };
  // The window from each mark to now against the forgotten counts before it.
  double best = o.change_threshold;
  size_t chosen = kMarks;
  for (size_t k = 0; k < h.mark_count; ++k) {
    const Mark& m = mark_at(k);
    const auto n = static_cast<double>(std::max<int64_t>(impressions - m.impressions, 0));
    const auto x = static_cast<double>(std::max<int64_t>(events - m.events, 0));
    const double n0 = m.before_impressions;
    const double x0 = m.before_events;
    if (n <= 0 || n0 < kMinStep) continue;
    const double g = ChangeStatistic(x, n, x0, n0, m.before_log_likelihood);
    if (g > best) {
      best = g;
      chosen = k;
    }
  }
  if (chosen < kMarks) {
    const Mark m = mark_at(chosen);
    h.impressions = static_cast<double>(std::max<int64_t>(impressions - m.impressions, 0));
    h.events = static_cast<double>(std::max<int64_t>(events - m.events, 0));
    // The marks after the chosen one stay, tested from now on against the new record's counts
    // before them.
    h.mark_first = (h.mark_first + chosen + 1) % kMarks;
    h.mark_count -= chosen + 1;
    for (size_t k = 0; k < h.mark_count; ++k) {
      Mark& later = mark_at(k);
      later.before_impressions = static_cast<double>(later.impressions - m.impressions);
      later.before_events = static_cast<double>(std::max<int64_t>(later.events - m.events, 0));
      later.before_log_likelihood = LogLikelihood(later.before_events, later.before_impressions);
    }
    ++h.changes;
  }
  // A new step every kStepEvents expected events at the campaign's rate so far.
  const double prior =
      c.bid_micros > 0 ? std::clamp(c.value_micros / static_cast<double>(c.bid_micros), 1e-9, 1.0)
                       : 0.01;
  const double rate = (h.events + prior) / (h.impressions + 1);
  const double step = std::max(kMinStep, kStepEvents / std::max(rate, 1e-9));
  if (h.mark_count > 0 &&
      static_cast<double>(impressions - mark_at(h.mark_count - 1).impressions) < step) {
    return;
  }
  if (h.mark_count == kMarks) {
    h.mark_first = (h.mark_first + 1) % kMarks;
    --h.mark_count;
  }
  // h's counts already hold the impressions up to `impressions`: the window starts after them.
  mark_at(h.mark_count) = Mark{.impressions = impressions,
                               .events = events,
                               .before_impressions = h.impressions,
                               .before_events = h.events,
                               .before_log_likelihood = LogLikelihood(h.events, h.impressions)};
  ++h.mark_count;
}

int64_t RateTracker::Changes(int64_t campaign_id) const {
  auto it = history_.find(campaign_id);
  return it == history_.end() ? 0 : it->second.changes;
}

std::optional<RateCounts> RateTracker::Opening(int64_t campaign_id) const {
  auto it = history_.find(campaign_id);
  if (it == history_.end()) return std::nullopt;
  return it->second.opening;
}

void RateTracker::PublishPrior(int64_t id, const std::optional<RatePrior>& prior) {
  if (id < 0 || static_cast<uint64_t>(id) >= capacity_) return;
  Slot& slot = published_[id];
  slot.prior_mean.store(prior ? prior->mean : 0, std::memory_order_relaxed);
  slot.prior_weight.store(prior ? prior->weight : 0, std::memory_order_relaxed);
}

std::optional<RateCounts> RateTracker::Published(int64_t id) const {
  if (id < 0 || static_cast<uint64_t>(id) >= capacity_) return std::nullopt;
  const Slot& slot = published_[id];
  const double trials = slot.trials.load(std::memory_order_acquire);
  if (trials < 0) return std::nullopt;
  RateCounts counts{.successes = slot.successes.load(std::memory_order_relaxed), .trials = trials};
  const double weight = slot.prior_weight.load(std::memory_order_relaxed);
  if (weight > 0) {
    counts.prior =
        RatePrior{.mean = slot.prior_mean.load(std::memory_order_relaxed), .weight = weight};
  }
  return counts;
}

}  // namespace adserver::decision
