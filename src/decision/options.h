#pragma once

#include <cstddef>

namespace adserver::decision {

// Default prior weights (pseudo-impressions). Exploring, a weak prior (half a click or
// conversion at the default rate) lets a new campaign be tried soon and its own events decide
// (measured with bench/scenarios, docs/BENCHMARKS.md); the greedy rule needs a strong one, or
// a few lucky early events decide for good.
inline constexpr double kExploreCtrPriorWeight = 50;
inline constexpr double kExploreCvrPriorWeight = 500;
inline constexpr double kGreedyCtrPriorWeight = 1000;
inline constexpr double kGreedyCvrPriorWeight = 10000;

// Tuning of the value model and of even pacing (docs/decision.md has the formulas).
struct DecisionOptions {
  // Strength, in pseudo-impressions, of the Beta prior of the predicted click rate (clicks per
  // impression). The prior mean is the catalog's default rate (CatalogOptions::default_ctr,
  // config snapshots.default_ctr): a new campaign is valued at it until real events outweigh it.
  // 0 = the rule's default (CtrPriorWeight): kExploreCtrPriorWeight when exploring, else
  // kGreedyCtrPriorWeight (the weight of the greedy rule before issue 36).
  double ctr_prior_weight = 0;
  // The same for the conversion rate (conversions per impression; mean default_cvr).
  double cvr_prior_weight = 0;
  // Exploration (issue 36): CPC and CPA campaigns are valued at a draw from the Beta posterior
  // of their rate (Thompson sampling), so a campaign is tried in proportion to the chance that
  // it is the best. Each campaign is redrawn at every recompute of the rate ceilings (after each
  // counter flush, every second) and after each of its clicks or conversions. false = the greedy
  // rule: every campaign at its posterior mean. CPM campaigns keep their known value either way.
  // Only with live state (learned rates).
  bool explore = true;
  // Forgetting (issue 36, exploration only): the clicks, conversions and impressions a CPC/CPA
  // campaign's draw comes from decay by half over this many of its impressions, so a campaign
  // whose rate falls (or recovers) is re-learned within a few of them. 0 = never forget.
  double half_life_impressions = 1500;
  // ... and at least this many of its clicks or conversions at its rate so far: a campaign's
  // half-life in impressions is max(half_life_impressions, half_life_events / rate). A count of
  // impressions alone holds too little evidence at display rates (1,500 impressions at a 0.3 %
  // CTR are 4.5 clicks) and exploration never settles. 0 = impressions only.
  double half_life_events = 50;
  // Change detection (issue 36 item 3, exploration only, CPC): after each recompute the clicks
  // of a campaign's recent impressions (windows of up to 16 steps of ~2 expected clicks) are
  // tested against its forgotten rate before them with a generalized likelihood ratio (two
  // Bernoulli samples); past this threshold (log-likelihood) the rate is taken to have changed
  // and the campaign's counts restart from the window, so a collapse is seen within a few
  // expected clicks' worth of impressions instead of a half-life. 0 = off.
  double change_threshold = 15;
  // Late conversions (issue 36, exploration only): a CPA impression counts towards the
  // conversion rate as its conversion opportunity matures, 1 - e^(-age / this delay), and wholly
  // once its window has passed. 0 = fitted to the network's conversions (RateTracker::FitDelay,
  // conversion_delay.h), starting from a quarter of the conversion windows (3.5 days for the
  // default 14).
  double conversion_delay_days = 0;
  // Priors from the network's own data (issue 36 item 2, exploration only): a CPC campaign's
  // prior is fitted from its peers' openings (RateTracker::Opening, their first 100
  // impressions, which every campaign gets whatever its rate) with decision::PeerStats: peers in
  // its community when kMinPeers others there have an opening, else network-wide; the mean is
  // their average rate, the weight how much they agree, at most the configured prior weight.
  // With too few peers, and for CPA (whose openings' conversions land late), the catalog's
  // default rate. Off by default: in bench/scenarios it earned more only where campaigns join
  // a running network (docs/BENCHMARKS.md, sixteenth session). false = the default rate and
  // weight, as pinned by the operator (snapshots.default_ctr, ctr_prior_weight).
  bool peer_priors = false;
  // Per-placement learning (issue 36 item 5, exploration only): a CPC/CPA campaign is valued on
  // each publisher at its draw times (events + E) / (expected events + E), the publisher's
  // clicks or conversions against what the campaign's rate would have given its impressions
  // there (forgotten as the campaign's counts are), shrunk toward 1 by E = this many
  // pseudo-events (decision/placement_rates.h). 0 = off: one rate per campaign everywhere.
  // 3 earned the most of 1, 2, 3, 5, 10, 20 and 40 in bench/scenarios (docs/BENCHMARKS.md).
  double placement_prior_events = 3;
  // Per-placement learning within a publisher: each adUnitId (a placement, with one image
  // format) gets a factor relative to the campaign's on its publisher, the same way
  // (decision/placement_rates.h). false = per publisher only.
  bool placement_ad_units = true;
  // Relevance multiplier = 1 + recency_weight * recency + projects_weight * (matched - 1);
  // both 0 (default) = neutral.
  double recency_weight = 0;
  double projects_weight = 0;
  // Even pacing: how far ahead of the even line (fraction of the budget) a campaign may run
  // before it stops bidding; the throttle ramps from 1 to 0 across this lead.
  double pacing_lead_fraction = 0.01;
  // Even pacing: deficit (fraction of the budget) at which the catch-up boost is at its maximum.
  double pacing_catchup_fraction = 0.1;
  // Even pacing: largest catch-up multiplier above 1 (factor at most 1 + pacing_max_boost).
  double pacing_max_boost = 1.0;
  // Even pacing of a daily budget: an hour may spend at most this multiple of budget / 24.
  double pacing_max_hour_multiple = 1.8;
};

// The prior weights in effect (the settings, or the rule's defaults when 0).
inline double CtrPriorWeight(const DecisionOptions& o) {
  return o.ctr_prior_weight > 0 ? o.ctr_prior_weight
         : o.explore            ? kExploreCtrPriorWeight
                                : kGreedyCtrPriorWeight;
}
inline double CvrPriorWeight(const DecisionOptions& o) {
  return o.cvr_prior_weight > 0 ? o.cvr_prior_weight
         : o.explore            ? kExploreCvrPriorWeight
                                : kGreedyCvrPriorWeight;
}

// Sizes of the in-memory live state (fixed at start; nothing rehashes on the request path).
struct LiveStateOptions {
  // Campaigns tracked by the budget ledger (power of two). Campaigns beyond it cannot be
  // billed; a campaign with a budget that finds no slot does not serve.
  size_t ledger_capacity = 1 << 16;
  // (wallet, campaign) frequency-cap entries kept (power of two, 16 bytes each). When a probe
  // window is full the entry with the oldest window is evicted (that pair's count restarts).
  size_t frequency_capacity = 1 << 20;
  // Campaign ids below this get their own learned-rate lift ceiling (8 bytes each), which lets
  // the auction pass over CPC/CPA campaigns whose learned rate fell below the default without
  // reading them; larger ids use the largest lift of any campaign.
  size_t lift_capacity = 1 << 18;
  // First seed of exploration's draws (each draw takes the next one): the same seed and the
  // same events give the same draws. Campaign ids at or beyond lift_capacity are not explored
  // (valued at their posterior mean).
  uint64_t draw_seed = 0x5EEDULL;
  // Per-placement learning: (campaign, publisher) pairs tracked (about 100 bytes each), and
  // pairs the feed holds between two recomputes; pairs beyond it are valued at their campaign's
  // own rate ([decision] placement_pairs).
  size_t placement_pairs = 1 << 16;
  // (lift_capacity also sizes the effective counts exploration publishes for explain: 16 more
  // bytes per id.)
};

}  // namespace adserver::decision
