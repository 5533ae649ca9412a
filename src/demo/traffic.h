#pragma once

// Generated history for the demo's campaigns (issue 16 item 7): a few days of serving counts,
// clicks and onchain conversions, so the console's charts have data on first sign-in.
// Deterministic: the same campaigns, time and seed give the same rows.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "store/events_store.h"

namespace adserver::demo {

// One demo campaign (with its one ad) and how its audience behaves.
struct DemoTrafficCampaign {
  store::Id campaign_id = 0;
  store::Id ad_id = 0;
  PricingModel model = PricingModel::kCpm;
  Micros bid_micros = 0;
  // Mean impressions per day.
  double daily_impressions = 4000;
  // Billed clicks per impression (0.005..0.03 looks real).
  double ctr = 0.015;
  // Click-through conversions per billed click.
  double conversions_per_click = 0.05;
  // View-through conversions per impression.
  double view_conversions_per_impression = 0.0002;
  // Chain the campaign's conversions happen on.
  int64_t chain_id = 1;
};

struct DemoTrafficOptions {
  // Whole UTC days of history before the day of `now` (today itself stays empty, so today's
  // pacing and budgets start from zero).
  int days = 7;
  // Same seed, same rows.
  uint64_t seed = 7;
};

// The rows to write: hourly serving counts per ad unit (filled requests per campaign, and one
// no-fill row per ad unit), clicks (a few as duplicates of a billed one) and conversions.
struct DemoTraffic {
  std::vector<store::RollupRow> serving;
  std::vector<store::ClickRecord> clicks;
  std::vector<store::ConversionCandidate> conversions;
};

// The ad units of the demo publisher's page, one per image format (LANDSCAPE, LONG_BANNER,
// SHORT_BANNER, NO_IMAGE), and the share of the page's requests each gets.
struct DemoAdUnit {
  const char* id;
  double share;
  double ctr_factor;  // hero placements are clicked more than sidebars
};
std::span<const DemoAdUnit> DemoAdUnits();

// Pure: generates the history of `campaigns` served by `publisher_id` for the
// `options.days` UTC days before the day of `now` (Unix seconds). Spend follows each campaign's
// pricing model: CPM bills bid/1000 per impression, CPC the bid per billed click, CPA the bid
// per conversion. Every row lies before `now`.
DemoTraffic GenerateDemoTraffic(std::span<const DemoTrafficCampaign> campaigns,
                                store::Id publisher_id, int64_t now,
                                const DemoTrafficOptions& options = {});

// Writes `traffic` through the events store's ordinary writes (AddRollups, InsertClicks,
// InsertConversions), so reports and campaign stats read it like served traffic.
Status WriteDemoTraffic(store::EventsStore& events, DemoTraffic& traffic, int64_t now);

}  // namespace adserver::demo
