#pragma once

// Budget pacing: how eagerly a campaign bids given what it has spent. Pure functions.

#include <cstdint>
#include <string_view>

#include "common/types.h"
#include "decision/options.h"

namespace adserver::decision {

enum class PacingMode : uint8_t { kEven, kAsap };
std::string_view PacingModeName(PacingMode mode);  // "even", "asap"
bool ParsePacingMode(std::string_view name, PacingMode& out);

// Even pacing factor for `spent` of `budget` when `elapsed` (0..1) of the period has passed:
//   target = budget * elapsed, ahead = spent - target, lead = lead_fraction * budget;
//   ahead >= lead      -> 0 (does not bid);
//   0 < ahead < lead   -> 1 - ahead / lead (bids with that probability);
//   ahead <= 0         -> 1 + max_boost * min(1, -ahead / (catchup_fraction * budget)).
double EvenPacingFactor(Micros spent, Micros budget, double elapsed,
                        const DecisionOptions& options);

// Everything pacing needs to know about one campaign at one moment.
struct PacingInput {
  PacingMode mode = PacingMode::kEven;
  int64_t now = 0;  // Unix seconds
  // Daily budget and today's / this hour's spend (UTC days).
  const Micros* daily_budget = nullptr;
  Micros day_spend = 0;
  Micros hour_spend = 0;
  // Total budget, total spend and the flight [starts_at, ends_at) when both ends are known.
  const Micros* total_budget = nullptr;
  Micros total_spend = 0;
  const int64_t* starts_at = nullptr;
  const int64_t* ends_at = nullptr;
};

// The pacing factor of a campaign: 1 for ASAP or without budgets; otherwise the smaller of
// the daily factor (even line over the UTC day, and 0 once this hour has spent
// max_hour_multiple * daily / 24) and the flight factor (even line over the flight, for a
// total budget with both schedule ends).
double PacingFactor(const PacingInput& in, const DecisionOptions& options);

}  // namespace adserver::decision
