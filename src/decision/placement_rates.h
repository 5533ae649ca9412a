#pragma once

// Per-placement learning (issue 36 item 5): how a CPC or CPA campaign does on one publisher
// compared with how it does overall, as a factor of its value there.
//
// A campaign's rate (RateTracker, a draw from its posterior) is learned from every publisher at
// once; a publisher whose readers click a campaign three times as often as elsewhere (a DeFi
// site for a DeFi campaign, a placement above the fold) should see it valued three times as high,
// and one whose readers never click should see a CPM campaign instead. For each (campaign,
// publisher) the recompute keeps the publisher's events (clicks or conversions) and the events
// the campaign's rate would have given its impressions there, both forgotten as the campaign's
// counts are, and values the campaign there at
//
//   factor = (events + E) / (expected events + E)
//
// times its draw: the publisher's observed over expected events, shrunk toward 1 by E
// pseudo-events (DecisionOptions::placement_prior_events), a hierarchical Beta posterior's mean
// relative to the campaign's. A publisher the campaign has little record on is valued at the
// campaign's own rate; exploration stays the campaign's (one draw per campaign).
//
// Within a publisher, each of its placements (adUnitId; a publisher's ad unit has one image
// format, so formats and positions on the page are learned here) has a factor of its own
// relative to the campaign's on that publisher, the same way: its events against what the
// campaign's rate times its publisher factor would have given its impressions there, shrunk
// toward 1 by E. The campaign is valued on a placement at draw x publisher factor x unit
// factor; requests without an adUnitId at draw x publisher factor.
//
// Counts come in through PlacementFeed (the serving counters' flush, the click and conversion
// handlers; thread-safe, off the request path); the recompute folds them in (PlacementTracker,
// one thread) and publishes the factors (PlacementFactors, immutable; a request looks one up).
// Memory is bounded: at most `max_pairs` keys are tracked, further ones are valued at the
// campaign's own rate and counted as dropped. adUnitIds are the client's free-form strings, so
// units take at most half of the keys (kMaxUnitsPerPublisher per (campaign, publisher)); a
// unit beyond that is valued at its publisher's factor, and its counts still teach the
// publisher's.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "decision/catalog.h"
#include "decision/options.h"

namespace adserver::decision {

struct PlacementKey {
  int64_t campaign_id = 0;
  int64_t publisher_id = 0;
  // The placement within the publisher (AdUnitKey of its adUnitId); 0 = the publisher as a
  // whole (no adUnitId sent).
  uint64_t unit = 0;
  bool operator==(const PlacementKey&) const = default;
};
// The key of an adUnitId: a stable 64-bit hash (the same on every node and build; written to
// PostgreSQL in cluster mode), never 0; 0 for "" (none sent).
uint64_t AdUnitKey(std::string_view ad_unit_id);
struct PlacementKeyHash {
  size_t operator()(const PlacementKey& k) const noexcept;
};

// Impressions and events (clicks for CPC, conversions for CPA; other events are not counted)
// of one pair since the last PlacementFeed::Take.
struct PlacementDelta {
  PlacementKey key;
  int64_t impressions = 0;
  int64_t events = 0;
};

// Units a (campaign, publisher) pair tracks at most (PlacementTracker).
inline constexpr int kMaxUnitsPerPublisher = 32;

// Counts as they happen. Thread-safe (a mutex; never taken on the ad request path).
class PlacementFeed {
 public:
  // `max_keys`: distinct keys held between two Take()s; counts of further keys are dropped.
  // Unit keys take at most half of them: further units' counts go to their publisher's key.
  explicit PlacementFeed(size_t max_keys);
  void Add(const PlacementKey& key, int64_t impressions, int64_t events);
  // Everything added since the previous call.
  std::vector<PlacementDelta> Take();
  // Counts dropped because the feed was full (since start).
  int64_t dropped() const;

 private:
  const size_t max_keys_;
  mutable Mutex mu_;
  std::unordered_map<PlacementKey, PlacementDelta, PlacementKeyHash> pending_ ADS_GUARDED_BY(mu_);
  size_t units_ ADS_GUARDED_BY(mu_) = 0;  // keys of pending_ with a unit
  int64_t dropped_ ADS_GUARDED_BY(mu_) = 0;
};

// The factors requests read: immutable once built. Lookups are probes of flat tables (one per
// level: the publisher, the ad unit).
class PlacementFactors {
 public:
  struct Entry {
    PlacementKey key;
    double factor = 1;
  };
  // Builds the tables from `entries` (one per key, publisher and unit levels; factors > 0).
  explicit PlacementFactors(std::span<const Entry> entries);

  // The factor of the campaign on the publisher's placement `unit` (AdUnitKey; 0 = none):
  // its publisher factor times its unit factor, each 1 when not tracked.
  double Factor(int64_t campaign_id, int64_t publisher_id, uint64_t unit = 0) const;
  // The campaign's largest factor on any placement, at least 1 (a placement without a factor
  // gets 1): what its ceiling in the auction's walk is multiplied by.
  double Ceiling(int64_t campaign_id) const;
  size_t size() const { return pairs_; }
  bool empty() const { return pairs_ == 0; }

 private:
  struct PairSlot {
    int64_t campaign_id = 0;  // 0 = empty (campaign ids are positive)
    int64_t publisher_id = 0;
    uint64_t unit = 0;
    double factor = 1;
  };
  // The factor stored for exactly this key; 1 when none.
  double Lookup(int64_t campaign_id, int64_t publisher_id, uint64_t unit) const;
  struct CampaignSlot {
    int64_t campaign_id = 0;  // 0 = empty
    double ceiling = 1;
  };
  size_t pairs_ = 0;
  std::vector<PairSlot> pair_slots_;  // power-of-two size, linear probing
  std::vector<CampaignSlot> campaign_slots_;
};

// The recompute's state: effective counts per pair. Not thread-safe (the recompute's thread).
class PlacementTracker {
 public:
  explicit PlacementTracker(size_t max_pairs) : max_pairs_(max_pairs) {}

  // What the recompute knows of a campaign when its pairs are folded in: its rate now (the
  // posterior mean of its effective counts), the share of its effective impressions whose
  // conversion opportunity has matured (CPA; 1 for CPC), and its half-life in impressions
  // (0 = never forget).
  struct CampaignRate {
    double rate = 0;
    double maturity = 1;
    double half_life = 0;
  };

  // Folds `deltas` in: each pair's counts decay by 2^(-impressions / half_life) of its new
  // impressions, then take the new events, and expected events of the new impressions at the
  // campaign's rate now. A pair's first counts are scaled down to what forgetting keeps
  // (half_life / ln 2 impressions' worth): a record restored at start-up. A delta of an ad unit
  // counts for its publisher, and then for the unit, with expected events at the campaign's
  // rate times its publisher factor after the publishers' folds (E =
  // options.placement_prior_events; a batch's order does not matter); with
  // options.placement_ad_units off for the publisher only. `rate_of` returns null for a
  // campaign that is not learned here (CPM, greedy, not in the catalog): its deltas are ignored.
  template <typename RateOf>
  void Add(std::span<const PlacementDelta> deltas, RateOf rate_of, const DecisionOptions& options) {
    for (const PlacementDelta& d : deltas) {
      if (const CampaignRate* r = rate_of(d.key.campaign_id)) FoldPublisher(d, *r);
    }
    if (!options.placement_ad_units) return;
    for (const PlacementDelta& d : deltas) {
      if (d.key.unit == 0) continue;
      if (const CampaignRate* r = rate_of(d.key.campaign_id)) FoldUnit(d, *r, options);
    }
  }

  // The factors of every pair whose campaign `rate_of` still knows (pairs of others are
  // forgotten), with E = options.placement_prior_events. A pair's expected events are scaled
  // by its campaign's maturity (CPA).
  template <typename RateOf>
  std::vector<PlacementFactors::Entry> Factors(RateOf rate_of, const DecisionOptions& options) {
    std::vector<PlacementFactors::Entry> out;
    out.reserve(pairs_.size());
    for (auto it = pairs_.begin(); it != pairs_.end();) {
      const CampaignRate* r = rate_of(it->first.campaign_id);
      if (r == nullptr) {  // its publishers and their units go together
        units_ -= it->first.unit != 0;
        it = pairs_.erase(it);
        continue;
      }
      out.push_back({it->first, FactorOf(it->second, *r, options)});
      ++it;
    }
    published_pairs_.store(static_cast<int64_t>(pairs_.size()), std::memory_order_relaxed);
    published_dropped_.store(dropped_, std::memory_order_relaxed);
    return out;
  }

  // The factor of a pair with these effective counts.
  static double FactorOf(double events, double expected, double maturity, double prior_events);

  size_t pairs() const { return pairs_.size(); }
  // Pair updates not tracked because max_pairs were (since start).
  int64_t dropped() const { return dropped_; }
  size_t max_pairs() const { return max_pairs_; }
  // pairs() and dropped() as of the last Factors(), for any thread (GET /metrics).
  int64_t published_pairs() const { return published_pairs_.load(std::memory_order_relaxed); }
  int64_t published_dropped() const { return published_dropped_.load(std::memory_order_relaxed); }

 private:
  struct Counts {
    double impressions = 0;  // forgotten
    double events = 0;       // forgotten
    double expected = 0;     // forgotten: events the campaign's rate gave these impressions
    int units = 0;           // a publisher's: its units tracked
  };
  void FoldPublisher(const PlacementDelta& d, const CampaignRate& r);
  void FoldUnit(const PlacementDelta& d, const CampaignRate& r, const DecisionOptions& options);
  // Folds `impressions` and `events` into `c` with expected events at `rate`.
  static void FoldInto(Counts& c, double impressions, double events, double rate, double half_life);
  // The counts of `key`, created when there is room; null when max_pairs are tracked.
  Counts* Find(const PlacementKey& key);
  double FactorOf(const Counts& c, const CampaignRate& r, const DecisionOptions& o) const {
    return FactorOf(c.events, c.expected, r.maturity, o.placement_prior_events);
  }

  const size_t max_pairs_;
  std::unordered_map<PlacementKey, Counts, PlacementKeyHash> pairs_;
  size_t units_ = 0;  // keys of pairs_ with a unit
  int64_t dropped_ = 0;
  std::atomic<int64_t> published_pairs_{0};
  std::atomic<int64_t> published_dropped_{0};
};

}  // namespace adserver::decision
