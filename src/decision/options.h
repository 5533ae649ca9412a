#pragma once

#include <cstddef>

namespace adserver::decision {

// Tuning of the value model and of even pacing (docs/decision.md has the formulas).
struct DecisionOptions {
  // Strength, in pseudo-impressions, of the Beta prior of the predicted click rate (clicks per
  // impression). The prior mean is the catalog's default rate (CatalogOptions::default_ctr,
  // config snapshots.default_ctr): a new campaign is valued at it until real events outweigh it.
  double ctr_prior_weight = 1000;
  // The same for the conversion rate (conversions per impression; mean default_cvr).
  double cvr_prior_weight = 10000;
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
};

}  // namespace adserver::decision
