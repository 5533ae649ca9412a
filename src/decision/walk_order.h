#pragma once

// The auction's project walks re-ordered by live value. The catalog orders each project's
// campaigns by their catalog value (a CPC/CPA bid valued at the default rate), but a learned
// rate far below the default makes that order loose: the walk then reads many campaigns only to
// pass over them on their lift ceiling. A WalkOrder sorts each run by bound = catalog value x
// the campaign's lift ceiling when the order was built, so the walk can stop at the first entry
// whose bound cannot win.
//
// Ceilings move after the build: a recompute lowers them (bounds stay upper bounds) and a click
// or conversion raises one at once. Every raise above a ceiling the order was built with widens
// the order's `slack` (the largest factor by which any current ceiling exceeds its built one),
// and the walk multiplies bounds by it, so the walk stays exact. LiveState widens the slack of
// the order it publishes (see LiveState::RaiseLift); RecomputeRateLift builds a new order when the
// catalog changed, a raise widened the slack, or ceilings fell well below the built ones.
//
// Immutable once published, except `slack`, which only grows. Thread-safe.

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "decision/catalog.h"
#include "decision/placement_rates.h"

namespace adserver::decision {

class WalkOrder {
 public:
  struct Entry {
    Catalog::WalkEntry walk;
    // walk.value x the campaign's lift ceiling at build time: with slack() an upper bound of
    // the campaign's value times its current learned-rate lift.
    double bound = 0;
  };
  // A project's campaigns in the catalog's two runs, each sorted by bound (then catalog order).
  using Runs = WalkRuns<Entry>;

  // Orders `catalog`'s walks with `ceilings[i]` = the lift ceiling of catalog campaign i (> 0).
  // `fallback_lift` is the MaxRateLift the ceilings of campaigns without their own ceiling came
  // from (0 when every campaign had its own): a later MaxRateLift above it widens the slack.
  static std::shared_ptr<WalkOrder> Build(const Catalog& catalog, std::span<const double> ceilings,
                                          double fallback_lift);

  // The Catalog::generation() this order was built for; the auction ignores an order built for
  // another catalog.
  uint64_t catalog_generation() const { return catalog_generation_; }
  Runs Find(uint32_t project_id) const;

  // The factor bounds are multiplied by (at least 1).
  double slack() const { return slack_.load(std::memory_order_relaxed); }
  // Grows the slack to at least `factor` (a hair more, for rounding) when `factor` > 1.
  // Thread-safe (atomic max).
  void Widen(double factor) const;
  // The ceiling campaign `id` was ordered with; +infinity when it is not in the order (nothing
  // to widen for it).
  double BuiltCeiling(int64_t id) const;
  double fallback_lift() const { return fallback_lift_; }
  // The ceilings by catalog index, as given to Build.
  const std::vector<double>& ceilings() const { return ceilings_; }
  // (campaign id, ceiling) of every campaign in the order, sorted by id.
  const std::vector<std::pair<int64_t, double>>& built_ceilings() const { return by_id_; }

  // Per-placement factors (decision/placement_rates.h) drawn with the ceilings of this order:
  // a campaign's ceiling holds its draw times its PlacementFactors::Ceiling, and its value on a
  // publisher is the ceiling x Factor / Ceiling. Null: none (one rate per campaign). Set
  // before the order is published.
  const PlacementFactors* placements() const { return placements_.get(); }
  void set_placements(std::shared_ptr<const PlacementFactors> placements) {
    placements_ = std::move(placements);
  }

 private:
  uint64_t catalog_generation_ = 0;
  std::vector<RunRange> runs_;  // by project id, like the catalog's
  std::vector<Entry> entries_;
  std::vector<double> ceilings_;                   // by catalog index
  std::vector<std::pair<int64_t, double>> by_id_;  // (campaign id, ceiling), sorted by id
  double fallback_lift_ = 0;
  std::shared_ptr<const PlacementFactors> placements_;
  mutable std::atomic<double> slack_{1.0};
};

}  // namespace adserver::decision
