#pragma once

// The decision-quality simulator of issue 36: scenario files (campaigns with true click and
// conversion rates the server is never told, conversion delays, rates that change during the
// run) played through the real decision code in-process — decision::Decide on a catalog, live
// counters fed by the simulated clicks and conversions, lift ceilings recomputed every simulated
// second as `serve` does — and compared with an oracle that knows the true rates.
//
// Revenue is counted in expectation: each impression earns its campaign's true value at that
// moment (CPM bid / 1000, CPC bid x true CTR, CPA bid x true CVR), the oracle the largest true
// value of any campaign for the same request. Clicks and conversions are drawn from the true
// rates and are what the engine learns from. Every campaign targets the one project every
// visitor used, without budgets or caps: the scenarios measure the choice, not the rules.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace adserver::sim {

enum class Model : uint8_t { kCpm, kCpc, kCpa };

struct RateChange {
  double at = 0;    // fraction of the run's requests after which it applies, in [0, 1]
  double rate = 0;  // the new true CTR (CPC) or CVR (CPA)
};

struct SimCampaign {
  int64_t id = 0;
  Model model = Model::kCpm;
  double bid = 0;   // currency units: per 1000 impressions (CPM), per click, per conversion
  double rate = 0;  // true CTR (CPC) or CVR (CPA); unused for CPM
  std::vector<RateChange> changes;  // in `at` order
  // CPA: a conversion lands uniformly between these delays after its impression (days).
  double delay_min_days = 0;
  double delay_max_days = 0;
  // The fraction of the run's requests after which the campaign starts (its schedule's start):
  // a campaign that joins a running network. The oracle only counts it from then.
  double start = 0;
  // The advertiser (community) it belongs to: peers' priors group by it.
  int64_t community = 1;
  // Its true rate on each publisher is `rate` x this factor (by publisher id; 1 when not
  // listed): readers of one site click a campaign more than another's. CPM: unused.
  std::vector<std::pair<int64_t, double>> publisher_factors;
  // And x this factor in a placement of each image format (1 when not listed): a campaign's
  // creative does better as a hero image than as a banner. CPM: unused.
  std::vector<std::pair<ImageFormat, double>> format_factors;
};

// A placement of a publisher: its adUnitId, the image format it asks for, and `share` of the
// publisher's requests (normalized).
struct SimUnit {
  std::string id;
  ImageFormat format = ImageFormat::kLandscape;
  double share = 1;
};

// A site the requests come from: `share` of them (the shares are normalized).
struct SimPublisher {
  int64_t id = 1;
  double share = 1;
  // Its placements; none = requests without an adUnitId, in LANDSCAPE.
  std::vector<SimUnit> units;
};

struct Scenario {
  std::string name;
  std::string description;
  int64_t requests = 20'000;
  double days = 1;            // the requests are spread evenly over this span
  double default_ctr = 0.01;  // the catalog's prior rates (config snapshots.default_*)
  double default_cvr = 0.001;
  // The prior weights (pseudo-impressions) the server is configured with; unset = its default
  // (decision::DecisionOptions).
  std::optional<double> ctr_prior_weight;
  std::optional<double> cvr_prior_weight;
  // Forgetting and the conversion delay the server is configured with; unset = its defaults.
  std::optional<double> half_life_impressions;
  std::optional<double> conversion_delay_days;
  std::optional<double> change_threshold;
  std::vector<SimCampaign> campaigns;
  // Where the requests come from; one publisher when the scenario names none.
  std::vector<SimPublisher> publishers{SimPublisher{}};
  // The regression guard of `adserver-simulate --check` (CI): exploration's median share of the
  // oracle must reach it. Below the targets of docs/BENCHMARKS.md; 0 = none.
  double guard = 0;
};

// Parses a scenario file's JSON; InvalidArgument naming the field on bad input.
Result<Scenario> ParseScenario(const std::string& json);
Result<Scenario> LoadScenario(const std::string& path);

struct Policy {
  std::string name;  // "explore", "greedy"
  bool explore = true;
  // Exploration's priors fitted from peers (decision::DecisionOptions::peer_priors).
  bool peer_priors = false;
  // Per-placement learning's pseudo-events (DecisionOptions::placement_prior_events; 0 = off);
  // unset = the server's default.
  std::optional<double> placement_prior_events;
  // Per-placement learning within a publisher (DecisionOptions::placement_ad_units); unset =
  // the server's default.
  std::optional<bool> placement_ad_units;
};

struct RunResult {
  double revenue = 0;  // expected revenue earned, currency units
  double oracle = 0;   // what the oracle earns from the same requests
  double share() const { return oracle > 0 ? revenue / oracle : 0; }
  // Revenue / oracle in each tenth of the run (regret over time).
  std::vector<double> decile_share;
  // Impressions per campaign (scenario order) and requests left without an ad.
  std::vector<int64_t> impressions;
  int64_t unfilled = 0;
  int64_t decisions = 0;
  double seconds = 0;  // wall time of the run
};

// Plays `scenario` once with `policy` and `seed` (the engine's generator and the simulated
// visitors' clicks and conversions).
RunResult Run(const Scenario& scenario, const Policy& policy, uint64_t seed);

}  // namespace adserver::sim
