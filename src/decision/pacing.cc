#include "decision/pacing.h"

#include <algorithm>

#include "common/clock.h"

namespace adserver::decision {

std::string_view PacingModeName(PacingMode mode) {
  return mode == PacingMode::kAsap ? "asap" : "even";
}

bool ParsePacingMode(std::string_view name, PacingMode& out) {
  if (name == "even") {
    out = PacingMode::kEven;
  } else if (name == "asap") {
    out = PacingMode::kAsap;
  } else {
    return false;
  }
  return true;
}

double EvenPacingFactor(Micros spent, Micros budget, double elapsed,
                        const DecisionOptions& options) {
  if (budget <= 0) return 0;
  auto b = static_cast<double>(budget);
  double ahead = static_cast<double>(spent) - b * std::clamp(elapsed, 0.0, 1.0);
  double lead = std::max(options.pacing_lead_fraction * b, 1.0);
  if (ahead >= lead) return 0;
  if (ahead > 0) return 1 - ahead / lead;
  double catchup = std::max(options.pacing_catchup_fraction * b, 1.0);
  return 1 + options.pacing_max_boost * std::min(1.0, -ahead / catchup);
}

double PacingFactor(const PacingInput& in, const DecisionOptions& options) {
  if (in.mode == PacingMode::kAsap) return 1;
  double factor = 1;
  bool paced = false;
  if (in.daily_budget != nullptr) {
    double elapsed = static_cast<double>(in.now - DayOf(in.now) * 86400) / 86400.0;
    factor = EvenPacingFactor(in.day_spend, *in.daily_budget, elapsed, options);
    paced = true;
    double hour_cap = options.pacing_max_hour_multiple * static_cast<double>(*in.daily_budget) / 24;
    if (static_cast<double>(in.hour_spend) >= hour_cap) return 0;
  }
  if (in.total_budget != nullptr && in.starts_at != nullptr && in.ends_at != nullptr &&
      *in.ends_at > *in.starts_at) {
    double elapsed = static_cast<double>(in.now - *in.starts_at) /
                     static_cast<double>(*in.ends_at - *in.starts_at);
    double flight = EvenPacingFactor(in.total_spend, *in.total_budget, elapsed, options);
    factor = paced ? std::min(factor, flight) : flight;
  }
  return factor;
}

}  // namespace adserver::decision
