#include "decision/live_state.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace adserver::decision {
namespace {

bool Learned(const Campaign& c) {
  return c.pricing_model != PricingModel::kCpm && c.bid_micros > 0 && c.value_micros > 0;
}

// Greedy: the learned rate / prior mean of a CPC or CPA campaign (1 for CPM), an upper bound of
// its value / catalog value until its next event.
double RateLift(const Campaign& c, const BudgetLedger::View& v, const DecisionOptions& o) {
  if (!Learned(c)) return 1;
  return ExpectedValue(c, v, o) / c.value_micros;
}

// The peer groups of exploration's priors (PeerStats): per pricing model network-wide, and per
// (pricing model, community).
class PeerPriors {
 public:
  void Add(const Campaign& c, const RateCounts& counts) {
    const bool cpc = c.pricing_model == PricingModel::kCpc;
    network_[cpc].Add(counts.successes, counts.trials);
    community_[{cpc, c.community_id}].Add(counts.successes, counts.trials);
  }
  // The community's prior when it has enough peers, else the network's, else none.
  std::optional<RatePrior> PriorFor(const Campaign& c, const RateCounts& counts,
                                    const DecisionOptions& o) const {
    const bool cpc = c.pricing_model == PricingModel::kCpc;
    const double cap = cpc ? CtrPriorWeight(o) : CvrPriorWeight(o);
    if (auto it = community_.find({cpc, c.community_id}); it != community_.end()) {
      if (auto prior = it->second.PriorFor(counts.successes, counts.trials, cap)) return prior;
    }
    return network_[cpc].PriorFor(counts.successes, counts.trials, cap);
  }

 private:
  std::array<PeerStats, 2> network_;  // [cpc]
  std::map<std::pair<bool, int64_t>, PeerStats> community_;
};

// Exploration: a new draw from the posterior of the campaign's effective counts, as a lift of
// its catalog value.
double DrawnLift(LiveState& state, const Campaign& c, const RateCounts& counts) {
  const RatePosterior p =
      PosteriorFrom(c, counts.successes, counts.trials, state.options, counts.prior);
  const double rate = SampleBeta(p.alpha, p.beta, DrawSeed(state.NextDraw(), c.id));
  // Above 0: a lift of 0 means "none drawn".
  return std::max(rate * static_cast<double>(c.bid_micros) / c.value_micros, 1e-12);
}

// After a click or conversion, greedy: the learned rate rose, and the ceiling with it at once.
// Exploring, the campaign keeps its draw until the next recompute draws from counts that
// include the event.
void NoteLift(LiveState& state, const Campaign& campaign, int64_t now) {
  if (state.options.explore && campaign.explore && Learned(campaign) &&
      state.HoldsLift(campaign.id)) {
    return;
  }
  const double lift = RateLift(campaign, state.Read(campaign.id, now), state.options);
  state.RaiseLift(campaign.id, lift);
  state.NoteRateLift(lift);
}

}  // namespace

double LiveState::MaxRateLift() const { return max_rate_lift_.load(std::memory_order_acquire); }

// The raises below and PublishWalkOrder follow one protocol: store, seq_cst fence, load. A
// raise stores the ceiling, then loads the current order; a publish stores the order, then loads
// every ceiling. With the fences, at least one of the two loads sees the other side's store, so
// a new order is widened for every raise its build did not see.

void LiveState::NoteRateLift(double lift) {
  double seen = max_rate_lift_.load(std::memory_order_relaxed);
  bool raised = false;
  while (lift > seen &&
         !(raised = max_rate_lift_.compare_exchange_weak(seen, lift, std::memory_order_seq_cst))) {
  }
  if (!raised) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Campaigns without their own ceiling were ordered with the MaxRateLift of that time.
  if (auto order = walk_order_.Current(); order && order->fallback_lift() > 0) {
    order->Widen(lift / order->fallback_lift());
  }
}

void LiveState::RaiseLift(int64_t id, double lift) {
  if (id < 0 || static_cast<uint64_t>(id) >= lift_capacity_) return;
  double seen = lifts_[id].load(std::memory_order_relaxed);
  bool raised = false;
  while (lift > seen &&
         !(raised = lifts_[id].compare_exchange_weak(seen, lift, std::memory_order_seq_cst))) {
  }
  if (!raised) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // A campaign without its own ceiling before (seen == 0) was ordered with MaxRateLift; the
  // ratio to its built ceiling covers both cases.
  if (auto order = walk_order_.Current()) order->Widen(lift / order->BuiltCeiling(id));
}

void LiveState::PublishWalkOrder(std::shared_ptr<const WalkOrder> order) {
  walk_order_.Publish(order);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (order->fallback_lift() > 0) order->Widen(MaxRateLift() / order->fallback_lift());
  for (const auto& [id, built] : order->built_ceilings()) {
    const double now = LiftCeiling(id);
    if (now > built) order->Widen(now / built);
  }
}

void LiveState::ResetLift(int64_t id, double before, double lift) {
  if (id < 0 || static_cast<uint64_t>(id) >= lift_capacity_) return;
  lifts_[id].compare_exchange_strong(before, lift, std::memory_order_acq_rel);
}

namespace {

// Per-placement learning (placement_rates.h): folds the pairs' new counts in with each drawn
// campaign's rate now, and returns the factors of every pair; null when it is off or no pair
// has counts.
std::shared_ptr<const PlacementFactors> RecomputePlacements(
    LiveState& state, const Catalog& catalog, std::span<const std::optional<RateCounts>> counts) {
  std::vector<PlacementDelta> deltas = state.placement_feed.Take();
  if (!(state.options.placement_prior_events > 0)) return nullptr;
  if (deltas.empty() && state.placements.pairs() == 0) return nullptr;
  std::vector<PlacementTracker::CampaignRate> rates(counts.size());
  for (Index i = 0; i < counts.size(); ++i) {
    if (!counts[i]) continue;
    const Campaign& c = catalog.campaigns[i];
    const RateCounts& k = *counts[i];
    rates[i] = {.rate = PosteriorFrom(c, k.successes, k.trials, state.options, k.prior).mean,
                .maturity = k.impressions > 0 ? std::min(1.0, k.trials / k.impressions) : 1,
                .half_life = RateTracker::HalfLife(c, k.successes, k.impressions, state.options)};
  }
  const auto rate_of = [&](int64_t id) -> const PlacementTracker::CampaignRate* {
    const Campaign* c = catalog.FindCampaign(id);
    if (c == nullptr) return nullptr;
    const auto i = static_cast<Index>(c - catalog.campaigns.data());
    return counts[i] ? &rates[i] : nullptr;
  };
  state.placements.Add(deltas, rate_of, state.options);
  std::vector<PlacementFactors::Entry> factors = state.placements.Factors(rate_of, state.options);
  if (factors.empty()) return nullptr;
  return std::make_shared<const PlacementFactors>(factors);
}

// Exploration's recompute: every CPC/CPA campaign gets a new draw (its value and its exact
// ceiling until the next recompute). Storing 10,000 draws one by one while the current walk order
// is in use would widen its slack by each raise (a draw may be many times the last one) and let
// requests walk unpruned for the length of the loop. So the draws are made first, then a walk
// order covering both the current and the new values is published, then the new values are
// stored, then the order built on them exactly.
void RecomputeDraws(LiveState& state, const Catalog& catalog, int64_t now) {
  const size_t n = catalog.campaigns.size();
  std::vector<double> next(n);
  std::vector<double> cover(n);
  // The effective counts first, then the peers' priors from their openings, then the draws.
  std::vector<std::optional<RateCounts>> counts(n);
  PeerPriors peers;
  // The mean conversion delay first (from the state the last recompute left), which the CPA
  // campaigns' Updates mature their impressions with.
  const std::vector<DelayFeed::Delta> delays = state.delay_feed.Take();
  state.rates.AddDelays(delays);
  state.rates.FitDelay(catalog, now, state.options);
  for (Index i = 0; i < n; ++i) {
    const Campaign& c = catalog.campaigns[i];
    // Not drawn: CPM, an id without a ceiling slot, or a campaign valued greedily.
    if (!Learned(c) || !c.explore || !state.HoldsLift(c.id)) continue;
    counts[i] = state.rates.Update(c, state.Read(c.id, now), now, state.options);
    if (!state.options.peer_priors) continue;
    if (const std::optional<RateCounts> opening = state.rates.Opening(c.id)) peers.Add(c, *opening);
  }
  for (Index i = 0; i < n; ++i) {
    if (!counts[i] || !state.options.peer_priors) continue;
    const Campaign& c = catalog.campaigns[i];
    counts[i]->prior =
        peers.PriorFor(c, state.rates.Opening(c.id).value_or(RateCounts{}), state.options);
  }
  std::shared_ptr<const PlacementFactors> placements = RecomputePlacements(state, catalog, counts);
  bool fallback = false;
  for (Index i = 0; i < n; ++i) {
    const Campaign& c = catalog.campaigns[i];
    if (counts[i]) {
      state.rates.PublishPrior(c.id, counts[i]->prior);
      next[i] = DrawnLift(state, c, *counts[i]);
      // Its ceiling: the draw on the publisher it does best on (the value on each is the
      // ceiling x Factor / Ceiling).
      if (placements) next[i] *= placements->Ceiling(c.id);
    } else {
      next[i] = RateLift(c, state.Read(c.id, now), state.options);  // CPM, or at its mean
    }
    fallback |= !state.HoldsLift(c.id);
    state.NoteRateLift(next[i]);
  }
  // Read after NoteRateLift: the fallback ceiling of ids without their own covers every value.
  const double max_lift = state.MaxRateLift();
  for (Index i = 0; i < n; ++i) {
    cover[i] = std::max(next[i], state.LiftCeiling(catalog.campaigns[i].id));
  }
  std::shared_ptr<WalkOrder> covering = WalkOrder::Build(catalog, cover, fallback ? max_lift : 0);
  covering->set_placements(placements);
  state.PublishWalkOrder(std::move(covering));
  for (Index i = 0; i < n; ++i) {
    const int64_t id = catalog.campaigns[i].id;
    const double before = state.LoadLift(id);
    if (next[i] > before) {
      state.RaiseLift(id, next[i]);  // within the covering order's ceilings: no widening
    } else {
      state.ResetLift(id, before, next[i]);
    }
  }
  std::shared_ptr<WalkOrder> exact = WalkOrder::Build(catalog, next, fallback ? max_lift : 0);
  exact->set_placements(std::move(placements));
  state.PublishWalkOrder(std::move(exact));
}

}  // namespace

void RecomputeRateLift(LiveState& state, const Catalog& catalog, int64_t now) {
  if (state.options.explore) return RecomputeDraws(state, catalog, now);
  // Greedy: per-placement learning and the delay fit are off; what the feeds received is
  // dropped, not kept.
  state.placement_feed.Take();
  state.delay_feed.Take();
  for (const Campaign& c : catalog.campaigns) {
    // A click or conversion racing with this either raised the ceiling after `before` was
    // loaded (the compare-and-swap fails, the raise stays) or is in the counters read after
    // the swap (the second read raises the ceiling again); either way the ceiling ends at or
    // above the campaign's current lift.
    const double before = state.LoadLift(c.id);
    const double lift = RateLift(c, state.Read(c.id, now), state.options);
    state.ResetLift(c.id, before, lift);
    const double after = RateLift(c, state.Read(c.id, now), state.options);
    state.RaiseLift(c.id, after);
    state.NoteRateLift(std::max(lift, after));
  }
  RefreshWalkOrder(state, catalog);
}

bool RefreshWalkOrder(LiveState& state, const Catalog& catalog) {
  const std::shared_ptr<const WalkOrder> current = state.CurrentWalkOrder();
  bool rebuild = current == nullptr || current->catalog_generation() != catalog.generation() ||
                 current->slack() > 1;
  // Read before the ceilings: a fallback ceiling read below is at least this.
  const double max_lift = state.MaxRateLift();
  bool fallback = false;
  std::vector<double> ceilings(catalog.campaigns.size());
  for (Index c = 0; c < catalog.campaigns.size(); ++c) {
    const int64_t id = catalog.campaigns[c].id;
    fallback |= !(state.LoadLift(id) > 0);
    ceilings[c] = state.LiftCeiling(id);
    if (!rebuild && ceilings[c] < current->ceilings()[c] * kWalkOrderTighten) rebuild = true;
  }
  if (!rebuild) return false;
  state.PublishWalkOrder(WalkOrder::Build(catalog, ceilings, fallback ? max_lift : 0));
  return true;
}

Micros ImpressionPrice(const Campaign& campaign) {
  return campaign.pricing_model == PricingModel::kCpm ? campaign.bid_micros / 1000 : 0;
}

Micros LeaseNeed(const Campaign& campaign) {
  Micros need = campaign.pricing_model == PricingModel::kCpm ? ImpressionPrice(campaign)
                                                             : campaign.bid_micros;
  return std::max<Micros>(need, 1);
}

bool AuthorizeImpression(LiveState& state, const Campaign& campaign) {
  if (state.leases == nullptr || !campaign.total_budget_micros) return true;
  Micros price = ImpressionPrice(campaign);
  return price <= 0 || state.leases->TrySpend(campaign.id, price);
}

void RecordImpression(LiveState& state, const Campaign& campaign, std::span<const Address> wallets,
                      int64_t now) {
  state.ledger.RecordImpression(campaign.id, ImpressionPrice(campaign), now);
  if (campaign.frequency_cap_count > 0) {
    state.caps.Record(wallets, campaign.id, campaign.frequency_cap_hours, now);
    if (state.shared_caps != nullptr) {
      state.shared_caps->Queue(wallets, campaign.id, campaign.frequency_cap_hours);
    }
  }
}

void RecordClick(LiveState& state, const Campaign& campaign, int64_t now) {
  RecordClick(state, campaign,
              campaign.pricing_model == PricingModel::kCpc ? campaign.bid_micros : 0, now);
}

void RecordClick(LiveState& state, const Campaign& campaign, Micros price, int64_t now) {
  state.ledger.RecordClick(campaign.id, price, now);
  if (state.leases != nullptr && campaign.total_budget_micros) {
    state.leases->Charge(campaign.id, price);
  }
  NoteLift(state, campaign, now);
}

void RecordConversion(LiveState& state, const Campaign& campaign, int64_t now) {
  RecordConversion(state, campaign,
                   campaign.pricing_model == PricingModel::kCpa ? campaign.bid_micros : 0, now);
}

void RecordConversion(LiveState& state, const Campaign& campaign, Micros price, int64_t now) {
  state.ledger.RecordConversion(campaign.id, price, now);
  if (state.leases != nullptr && campaign.total_budget_micros) {
    state.leases->Charge(campaign.id, price);
  }
  NoteLift(state, campaign, now);
}

void UndoConversion(LiveState& state, int64_t campaign_id, const Campaign* campaign, Micros price,
                    int64_t billed_at) {
  state.ledger.UndoConversion(campaign_id, price, billed_at);
  if (state.leases != nullptr && campaign != nullptr && campaign->total_budget_micros) {
    state.leases->Credit(campaign_id, price);
  }
}

}  // namespace adserver::decision
