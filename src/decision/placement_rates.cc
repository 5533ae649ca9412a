#include "decision/placement_rates.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include "common/mutex.h"
#include "common/splitmix64.h"

namespace adserver::decision {
namespace {

uint64_t PairHash(int64_t campaign_id, int64_t publisher_id) {
  return Fmix64(static_cast<uint64_t>(campaign_id) * 0x9E3779B97F4A7C15ULL ^
                static_cast<uint64_t>(publisher_id));
}

// A table size with at most half its slots used.
size_t SlotsFor(size_t n) { return std::bit_ceil(std::max<size_t>(2 * n, 4)); }

}  // namespace

size_t PlacementKeyHash::operator()(const PlacementKey& k) const noexcept {
  return static_cast<size_t>(PairHash(k.campaign_id, k.publisher_id));
}

PlacementFeed::PlacementFeed(size_t max_keys) : max_keys_(max_keys) {}

void PlacementFeed::Add(const PlacementKey& key, int64_t impressions, int64_t events) {
  MutexLock lock(mu_);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    if (pending_.size() >= max_keys_) {
      dropped_ += impressions + events;
      return;
    }
    it = pending_.emplace(key, PlacementDelta{.key = key}).first;
  }
  it->second.impressions += impressions;
  it->second.events += events;
}

std::vector<PlacementDelta> PlacementFeed::Take() {
  std::unordered_map<PlacementKey, PlacementDelta, PlacementKeyHash> taken;
  {
    MutexLock lock(mu_);
    taken.swap(pending_);
  }
  std::vector<PlacementDelta> out;
  out.reserve(taken.size());
  for (auto& [key, delta] : taken) out.push_back(delta);
  return out;
}

int64_t PlacementFeed::dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

PlacementFactors::PlacementFactors(std::span<const Entry> entries) {
  if (entries.empty()) return;
  pair_slots_.resize(SlotsFor(entries.size()));
  size_t campaigns = 0;
  const size_t pair_mask = pair_slots_.size() - 1;
  for (const Entry& e : entries) {
    if (e.key.campaign_id <= 0) continue;
    size_t i = PairHash(e.key.campaign_id, e.key.publisher_id) & pair_mask;
    while (pair_slots_[i].campaign_id != 0 &&
           !(pair_slots_[i].campaign_id == e.key.campaign_id &&
             pair_slots_[i].publisher_id == e.key.publisher_id)) {
      i = (i + 1) & pair_mask;
    }
    if (pair_slots_[i].campaign_id == 0) {
      ++pairs_;
      ++campaigns;  // an upper bound of the distinct campaigns
    }
    pair_slots_[i] = {e.key.campaign_id, e.key.publisher_id, e.factor};
  }
  campaign_slots_.resize(SlotsFor(campaigns));
  const size_t campaign_mask = campaign_slots_.size() - 1;
  for (const PairSlot& p : pair_slots_) {
    if (p.campaign_id == 0) continue;
    size_t i = Fmix64(static_cast<uint64_t>(p.campaign_id)) & campaign_mask;
    while (campaign_slots_[i].campaign_id != 0 && campaign_slots_[i].campaign_id != p.campaign_id) {
      i = (i + 1) & campaign_mask;
    }
    campaign_slots_[i].campaign_id = p.campaign_id;
    campaign_slots_[i].ceiling = std::max(campaign_slots_[i].ceiling, p.factor);
  }
}

double PlacementFactors::Factor(int64_t campaign_id, int64_t publisher_id) const {
  if (pair_slots_.empty()) return 1;
  const size_t mask = pair_slots_.size() - 1;
  for (size_t i = PairHash(campaign_id, publisher_id) & mask;; i = (i + 1) & mask) {
    const PairSlot& s = pair_slots_[i];
    if (s.campaign_id == 0) return 1;
    if (s.campaign_id == campaign_id && s.publisher_id == publisher_id) return s.factor;
  }
}

double PlacementFactors::Ceiling(int64_t campaign_id) const {
  if (campaign_slots_.empty()) return 1;
  const size_t mask = campaign_slots_.size() - 1;
  for (size_t i = Fmix64(static_cast<uint64_t>(campaign_id)) & mask;; i = (i + 1) & mask) {
    const CampaignSlot& s = campaign_slots_[i];
    if (s.campaign_id == 0) return 1;
    if (s.campaign_id == campaign_id) return s.ceiling;
  }
}

double PlacementTracker::FactorOf(double events, double expected, double maturity,
                                  double prior_events) {
  if (!(prior_events > 0)) return 1;
  const double e = std::max(0.0, events) + prior_events;
  const double x = std::max(0.0, expected) * std::clamp(maturity, 0.0, 1.0) + prior_events;
  return e / x;
}

void PlacementTracker::Fold(const PlacementDelta& d, const CampaignRate& r) {
  auto it = pairs_.find(d.key);
  if (it == pairs_.end()) {
    if (pairs_.size() >= max_pairs_) {
      ++dropped_;
      return;
    }
    it = pairs_.emplace(d.key, Counts{}).first;
  }
  Counts& c = it->second;
  auto impressions = static_cast<double>(std::max<int64_t>(d.impressions, 0));
  auto events = static_cast<double>(d.events);
  // A pair's first counts (a long record after a restart) scaled down to what forgetting
  // keeps of a record at its rate, half_life / ln 2 impressions' worth, as RateTracker does.
  if (c.impressions == 0 && r.half_life > 0 && impressions > r.half_life / std::numbers::ln2) {
    const double scale = r.half_life / std::numbers::ln2 / impressions;
    impressions *= scale;
    events *= scale;
  }
  const double kept = r.half_life > 0 ? std::exp2(-impressions / r.half_life) : 1;
  c.impressions = c.impressions * kept + impressions;
  c.events = std::max(0.0, c.events * kept + events);
  c.expected = c.expected * kept + impressions * r.rate;
}

}  // namespace adserver::decision
