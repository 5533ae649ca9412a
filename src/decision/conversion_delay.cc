#include "decision/conversion_delay.h"

#include <algorithm>
#include <vector>

#include "common/mutex.h"

namespace adserver::decision {

void DelayFeed::Add(int64_t campaign_id, double delay_seconds) {
  MutexLock lock(mu_);
  auto it = pending_.find(campaign_id);
  if (it == pending_.end()) {
    if (pending_.size() >= max_campaigns_) {
      ++dropped_;
      return;
    }
    it = pending_.emplace(campaign_id, Delta{.campaign_id = campaign_id}).first;
  }
  it->second.conversions += 1;
  it->second.seconds += std::max(0.0, delay_seconds);
}

std::vector<DelayFeed::Delta> DelayFeed::Take() {
  std::unordered_map<int64_t, Delta> taken;
  {
    MutexLock lock(mu_);
    taken.swap(pending_);
  }
  std::vector<Delta> out;
  out.reserve(taken.size());
  for (const auto& [id, delta] : taken) out.push_back(delta);
  return out;
}

int64_t DelayFeed::dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

void ImpressionAges::Add(double impressions, int64_t now, double window_seconds, double kept) {
  if (kept != 1) {
    for (double& m : mass_) m *= kept;
  }
  if (!(impressions > 0) || !(window_seconds > 0)) return;
  const double width = window_seconds / kBuckets;
  const auto slot = static_cast<int64_t>(std::floor(static_cast<double>(now) / width));
  const auto k = static_cast<size_t>(((slot % static_cast<int64_t>(kBuckets)) +
                                      static_cast<int64_t>(kBuckets)) %
                                     static_cast<int64_t>(kBuckets));
  if (slot_[k] != slot) {  // a slot a window old: its impressions matured
    slot_[k] = slot;
    mass_[k] = 0;
    arrival_[k] = 0;
  }
  const double mass = mass_[k] + impressions;
  arrival_[k] = (arrival_[k] * mass_[k] + static_cast<double>(now) * impressions) / mass;
  mass_[k] = mass;
}

double ImpressionAges::Immature(int64_t now, double window_seconds,
                                double mean_delay_seconds) const {
  double immature = 0;
  ForEach(now, window_seconds, [&](double age, double mass) {
    immature += mass * std::exp(-age / mean_delay_seconds);
  });
  return immature;
}

double FitMeanDelay(std::span<DelaySample> samples, int64_t now, double prior_seconds,
                    double prior_conversions, double start_seconds, int iterations) {
  // Eventual rates: the last fit's, or the counts as if every impression had matured (low for
  // a young campaign), raised by each step's expected late conversions.
  for (DelaySample& s : samples) {
    if (s.rate < 0) {
      s.rate = (s.conversions + s.prior_rate * s.prior_weight) / (s.impressions + s.prior_weight);
    }
  }
  double tau = start_seconds > 0 ? start_seconds : prior_seconds;
  for (int step = 0; step < iterations; ++step) {
    double conversions = prior_conversions;
    double seconds = prior_conversions * prior_seconds;
    for (DelaySample& s : samples) {
      const double p = std::clamp(s.rate, 0.0, 1.0);
      double late = 0;  // expected conversions still to land
      if (s.ages != nullptr && p > 0) {
        s.ages->ForEach(now, s.window_seconds, [&](double age, double mass) {
          const double survive = p * std::exp(-age / tau);
          const double w = survive / (1 - p + survive);
          late += w * mass;
          seconds += w * mass * (age + tau);
        });
      }
      conversions += s.delayed + late;
      seconds += s.delay_seconds;
      s.rate = (s.conversions + late + s.prior_rate * s.prior_weight) /
               (s.impressions + s.prior_weight);
    }
    if (!(conversions > 0) || !(seconds > 0)) break;
    tau = seconds / conversions;
  }
  return tau;
}

}  // namespace adserver::decision
