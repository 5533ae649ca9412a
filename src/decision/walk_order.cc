#include "decision/walk_order.h"

#include <algorithm>

#include "common/check.h"

namespace adserver::decision {

std::shared_ptr<WalkOrder> WalkOrder::Build(const Catalog& catalog,
                                            std::span<const double> ceilings,
                                            double fallback_lift) {
  ADS_CHECK(ceilings.size() == catalog.campaigns.size()) << "one ceiling per catalog campaign";
  auto order = std::make_shared<WalkOrder>();
  order->catalog_generation_ = catalog.generation();
  order->fallback_lift_ = fallback_lift;
  order->ceilings_.assign(ceilings.begin(), ceilings.end());
  order->by_id_.reserve(catalog.campaigns.size());
  for (Index c = 0; c < catalog.campaigns.size(); ++c) {
    order->by_id_.emplace_back(catalog.campaigns[c].id, ceilings[c]);
  }
  std::sort(order->by_id_.begin(), order->by_id_.end());

  order->runs_.resize(catalog.project_id_limit);
  const auto by_bound = [](const Entry& a, const Entry& b) {
    if (a.bound != b.bound) return a.bound > b.bound;
    return a.walk.campaign < b.walk.campaign;
  };
  const auto append = [&](std::span<const Catalog::WalkEntry> run) {
    const size_t first = order->entries_.size();
    for (const Catalog::WalkEntry& e : run) {
      order->entries_.push_back({.walk = e, .bound = e.value * ceilings[e.campaign]});
    }
    std::sort(order->entries_.begin() + static_cast<ptrdiff_t>(first), order->entries_.end(),
              by_bound);
  };
  for (uint32_t project = 0; project < catalog.project_id_limit; ++project) {
    const Catalog::ProjectCampaigns list = catalog.FindProjectCampaigns(project);
    RunRange& runs = order->runs_[project];
    runs.begin = static_cast<uint32_t>(order->entries_.size());
    append(list.steady);
    runs.steady = static_cast<uint32_t>(order->entries_.size());
    append(list.boostable);
    runs.end = static_cast<uint32_t>(order->entries_.size());
    if (runs.steady > runs.begin) runs.steady_top = order->entries_[runs.begin].bound;
    if (runs.end > runs.steady) runs.boostable_top = order->entries_[runs.steady].bound;
  }
  return order;
}

WalkOrder::Runs WalkOrder::Find(uint32_t project_id) const {
  if (project_id >= runs_.size()) return {};
  return runs_[project_id].In(entries_);
}

void WalkOrder::Widen(double factor) const {
  if (!(factor > 1)) return;
  // A ratio of ceilings times the built ceiling can round below the current ceiling: a relative
  // margin far above double rounding keeps the bound an upper bound.
  factor *= 1 + 1e-12;
  double seen = slack_.load(std::memory_order_relaxed);
  while (factor > seen && !slack_.compare_exchange_weak(seen, factor, std::memory_order_acq_rel)) {
  }
}

double WalkOrder::BuiltCeiling(int64_t id) const {
  auto it =
      std::lower_bound(by_id_.begin(), by_id_.end(), id,
                       [](const std::pair<int64_t, double>& e, int64_t x) { return e.first < x; });
  if (it == by_id_.end() || it->first != id) return std::numeric_limits<double>::infinity();
  // Several catalog campaigns cannot share an id; take the smallest ceiling if they do.
  double ceiling = it->second;
  for (; it != by_id_.end() && it->first == id; ++it) ceiling = std::min(ceiling, it->second);
  return ceiling;
}

}  // namespace adserver::decision
