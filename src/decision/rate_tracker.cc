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

RateCounts RateTracker::Update(const Campaign& c, const BudgetLedger::View& v, int64_t now,
                               const DecisionOptions& o) {
  const bool cpa = c.pricing_model == PricingModel::kCpa;
  const int64_t events = cpa ? v.conversions : v.clicks;
  const double half_life = o.half_life_impressions;
  auto [it, first] = history_.try_emplace(c.id);
  History& h = it->second;
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
      const double elapsed = static_cast<double>(std::max<int64_t>(now - h.at, 0));
      h.immature = h.immature * kept * std::exp(-elapsed / DelaySeconds(c, o)) + new_impressions;
    }
  }
  h.seen_impressions = v.impressions;
  h.seen_events = events;
  h.at = now;
  const RateCounts counts{.successes = h.events,
                          .trials = std::max(0.0, h.impressions - (cpa ? h.immature : 0))};
  if (c.id >= 0 && static_cast<uint64_t>(c.id) < capacity_) {
    Slot& slot = published_[c.id];
    slot.successes.store(counts.successes, std::memory_order_relaxed);
    slot.trials.store(counts.trials, std::memory_order_release);
  }
  return counts;
}

std::optional<RateCounts> RateTracker::Published(int64_t id) const {
  if (id < 0 || static_cast<uint64_t>(id) >= capacity_) return std::nullopt;
  const Slot& slot = published_[id];
  const double trials = slot.trials.load(std::memory_order_acquire);
  if (trials < 0) return std::nullopt;
  return RateCounts{.successes = slot.successes.load(std::memory_order_relaxed), .trials = trials};
}

}  // namespace adserver::decision
