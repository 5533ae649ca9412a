#include "decision/placement_rates.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include "common/mutex.h"
#include "common/splitmix64.h"

namespace adserver::decision {
namespace {

uint64_t PairHash(int64_t campaign_id, int64_t publisher_id, uint64_t unit) {
  return Fmix64(static_cast<uint64_t>(campaign_id) * 0x9E3779B97F4A7C15ULL ^
                static_cast<uint64_t>(publisher_id) ^ unit * 0xC2B2AE3D27D4EB4FULL);
}

// A table size with at most half its slots used.
size_t SlotsFor(size_t n) { return std::bit_ceil(std::max<size_t>(2 * n, 4)); }

}  // namespace

size_t PlacementKeyHash::operator()(const PlacementKey& k) const noexcept {
  return static_cast<size_t>(PairHash(k.campaign_id, k.publisher_id, k.unit));
}

uint64_t AdUnitKey(std::string_view ad_unit_id) {
  if (ad_unit_id.empty()) return 0;
  // FNV-1a, mixed: fixed by definition, unlike std::hash.
  uint64_t h = 14695981039346656037ULL;
  for (char ch : ad_unit_id) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
  h = Fmix64(h);
  return h == 0 ? 1 : h;
}

PlacementFeed::PlacementFeed(size_t max_keys) : max_keys_(max_keys) {}

void PlacementFeed::Add(const PlacementKey& key, int64_t impressions, int64_t events) {
  MutexLock lock(mu_);
  auto it = pending_.find(key);
  if (it == pending_.end() && key.unit != 0 && units_ >= max_keys_ / 2) {
    // Units full: the counts teach the unit's publisher.
    const PlacementKey publisher{key.campaign_id, key.publisher_id, 0};
    it = pending_.find(publisher);
    if (it == pending_.end()) {
      if (pending_.size() >= max_keys_) {
        dropped_ += impressions + events;
        return;
      }
      it = pending_.emplace(publisher, PlacementDelta{.key = publisher}).first;
    }
  } else if (it == pending_.end()) {
    if (pending_.size() >= max_keys_) {
      dropped_ += impressions + events;
      return;
    }
    it = pending_.emplace(key, PlacementDelta{.key = key}).first;
    units_ += key.unit != 0;
  }
  it->second.impressions += impressions;
  it->second.events += events;
}

std::vector<PlacementDelta> PlacementFeed::Take() {
  std::unordered_map<PlacementKey, PlacementDelta, PlacementKeyHash> taken;
  {
    MutexLock lock(mu_);
    taken.swap(pending_);
    units_ = 0;
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
    size_t i = PairHash(e.key.campaign_id, e.key.publisher_id, e.key.unit) & pair_mask;
    while (pair_slots_[i].campaign_id != 0 && !(pair_slots_[i].campaign_id == e.key.campaign_id &&
                                                pair_slots_[i].publisher_id == e.key.publisher_id &&
                                                pair_slots_[i].unit == e.key.unit)) {
      i = (i + 1) & pair_mask;
    }
    if (pair_slots_[i].campaign_id == 0) {
      ++pairs_;
      ++campaigns;  // an upper bound of the distinct campaigns
    }
    pair_slots_[i] = {e.key.campaign_id, e.key.publisher_id, e.key.unit, e.factor};
  }
  campaign_slots_.resize(SlotsFor(campaigns));
  const size_t campaign_mask = campaign_slots_.size() - 1;
  for (const PairSlot& p : pair_slots_) {
    if (p.campaign_id == 0) continue;
    // A unit's value is its publisher's factor times its own; a publisher's (or a placement
    // of it without a factor) its publisher factor.
    const double factor =
        p.unit == 0 ? p.factor : p.factor * Lookup(p.campaign_id, p.publisher_id, 0);
    size_t i = Fmix64(static_cast<uint64_t>(p.campaign_id)) & campaign_mask;
    while (campaign_slots_[i].campaign_id != 0 && campaign_slots_[i].campaign_id != p.campaign_id) {
      i = (i + 1) & campaign_mask;
    }
    campaign_slots_[i].campaign_id = p.campaign_id;
    campaign_slots_[i].ceiling = std::max(campaign_slots_[i].ceiling, factor);
  }
}

double PlacementFactors::Lookup(int64_t campaign_id, int64_t publisher_id, uint64_t unit) const {
  if (pair_slots_.empty()) return 1;
  const size_t mask = pair_slots_.size() - 1;
  for (size_t i = PairHash(campaign_id, publisher_id, unit) & mask;; i = (i + 1) & mask) {
    const PairSlot& s = pair_slots_[i];
    if (s.campaign_id == 0) return 1;
    if (s.campaign_id == campaign_id && s.publisher_id == publisher_id && s.unit == unit) {
      return s.factor;
    }
  }
}

double PlacementFactors::Factor(int64_t campaign_id, int64_t publisher_id, uint64_t unit) const {
  const double publisher = Lookup(campaign_id, publisher_id, 0);
  return unit == 0 ? publisher : publisher * Lookup(campaign_id, publisher_id, unit);
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

PlacementTracker::Counts* PlacementTracker::Find(const PlacementKey& key) {
  auto it = pairs_.find(key);
  if (it != pairs_.end()) return &it->second;
  if (pairs_.size() >= max_pairs_) {
    ++dropped_;
    return nullptr;
  }
  return &pairs_.emplace(key, Counts{}).first->second;
}

void PlacementTracker::FoldPublisher(const PlacementDelta& d, const CampaignRate& r) {
  if (Counts* publisher = Find({d.key.campaign_id, d.key.publisher_id, 0})) {
    FoldInto(*publisher, static_cast<double>(std::max<int64_t>(d.impressions, 0)),
             static_cast<double>(d.events), r.rate, r.half_life);
  }
}

void PlacementTracker::FoldUnit(const PlacementDelta& d, const CampaignRate& r,
                                const DecisionOptions& options) {
  auto publisher = pairs_.find({d.key.campaign_id, d.key.publisher_id, 0});
  if (publisher == pairs_.end()) return;  // not tracked (the limit): neither is the unit
  // The unit's expectation: the campaign's rate on its publisher.
  const double unit_rate = r.rate * FactorOf(publisher->second, r, options);
  auto unit = pairs_.find(d.key);
  if (unit == pairs_.end()) {
    // A client's free-form string: units take at most half the keys, a few per publisher.
    if (units_ >= max_pairs_ / 2 || publisher->second.units >= kMaxUnitsPerPublisher ||
        pairs_.size() >= max_pairs_) {
      ++dropped_;
      return;
    }
    ++publisher->second.units;
    ++units_;
    unit = pairs_.emplace(d.key, Counts{}).first;
  }
  FoldInto(unit->second, static_cast<double>(std::max<int64_t>(d.impressions, 0)),
           static_cast<double>(d.events), unit_rate, r.half_life);
}

void PlacementTracker::FoldInto(Counts& c, double impressions, double events, double rate,
                                double half_life) {
  // A pair's first counts (a long record after a restart) scaled down to what forgetting
  // keeps of a record at its rate, half_life / ln 2 impressions' worth, as RateTracker does.
  if (c.impressions == 0 && half_life > 0 && impressions > half_life / std::numbers::ln2) {
    const double scale = half_life / std::numbers::ln2 / impressions;
    impressions *= scale;
    events *= scale;
  }
  const double kept = half_life > 0 ? std::exp2(-impressions / half_life) : 1;
  c.impressions = c.impressions * kept + impressions;
  c.events = std::max(0.0, c.events * kept + events);
  c.expected = c.expected * kept + impressions * rate;
}

}  // namespace adserver::decision
