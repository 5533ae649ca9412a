#pragma once

// The mutable state decisions read next to the immutable catalog: spend and event counters
// (budgets, pacing, predicted rates) and frequency caps. Owned by the serving process, shared
// by every request; lock-free and thread-safe. Pure (time is passed in).

#include <atomic>
#include <memory>
#include <span>

#include "common/address.h"
#include "common/published.h"
#include "decision/budget_leases.h"
#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "decision/frequency_caps.h"
#include "decision/options.h"
#include "decision/placement_rates.h"
#include "decision/rate_model.h"
#include "decision/rate_tracker.h"
#include "decision/shared_caps.h"
#include "decision/walk_order.h"

namespace adserver::decision {

struct LiveState {
  explicit LiveState(const LiveStateOptions& live_options = {},
                     const DecisionOptions& decision_options = {})
      : options(decision_options),
        ledger(live_options.ledger_capacity),
        caps(live_options.frequency_capacity),
        rates(live_options.lift_capacity),
        placement_feed(live_options.placement_pairs),
        placements(live_options.placement_pairs),
        delay_feed(live_options.ledger_capacity),
        lift_capacity_(live_options.lift_capacity),
        draws_(live_options.draw_seed),
        lifts_(std::make_unique<std::atomic<double>[]>(live_options.lift_capacity)) {}

  // The value model and pacing tuning of every decision made with this state.
  const DecisionOptions options;
  BudgetLedger ledger;
  FrequencyCaps caps;
  // Exploration's effective counts (forgotten, matured), kept by RecomputeRateLift.
  RateTracker rates;
  // Per-placement learning (issue 36 item 5, exploration only): impressions, clicks and
  // conversions per (campaign, publisher) as they are counted (the caller feeds them: the
  // serving counters' flush, the click and conversion handlers), and the recompute's effective
  // counts of each pair. The factors they give are published with the walk order
  // (WalkOrder::placements).
  PlacementFeed placement_feed;
  PlacementTracker placements;
  // Late conversions (issue 36 item 4, exploration only): the known delays of CPA conversions
  // as they are billed (the caller feeds them), which the recompute fits the mean conversion
  // delay to (RateTracker::FitDelay).
  DelayFeed delay_feed;

  // Cluster mode (issue 17), set before serving and never changed; null in the embedded
  // default. `leases`: this node's share of every total budget (an impression spends from it
  // before it is answered, so the nodes together never pass a total budget on impressions).
  // `shared_caps`: impressions queued for the cluster's frequency caps. `others`: the other
  // nodes' counters (refreshed in the background), added to this node's wherever a decision
  // reads counters (budgets, pacing, learned rates).
  BudgetLeases* leases = nullptr;
  SharedFrequencyCaps* shared_caps = nullptr;
  const BudgetLedger* others = nullptr;

  // The counters decisions use: this node's, plus the other nodes' in cluster mode.
  BudgetLedger::View Read(int64_t campaign_id, int64_t now) const {
    BudgetLedger::View v = ledger.Read(campaign_id, now);
    if (others != nullptr) {
      BudgetLedger::View o = others->Read(campaign_id, now);
      v.total_spend += o.total_spend;
      v.day_spend += o.day_spend;
      v.hour_spend += o.hour_spend;
      v.impressions += o.impressions;
      v.clicks += o.clicks;
      v.conversions += o.conversions;
    }
    return v;
  }

  // The largest factor by which a CPC/CPA value ceiling (the learned rate, or with exploration
  // the cap of its posterior: rate_model.h) has exceeded the catalog value (at least 1). Only
  // grows; lets the auction bound CPC/CPA values without reading counters.
  double MaxRateLift() const;
  void NoteRateLift(double lift);

  // An upper bound of campaign `id`'s current lift (value ceiling / catalog value; 1 for CPM):
  // its own ceiling once one was recorded, else MaxRateLift. Lock-free.
  // With exploration, a CPC/CPA campaign's ceiling is its current draw (its value / catalog
  // value): RecomputeRateLift redraws it, a click or conversion may raise it.
  double LiftCeiling(int64_t id) const {
    if (!HoldsLift(id)) return MaxRateLift();
    double lift = lifts_[id].load(std::memory_order_relaxed);
    return lift > 0 ? lift : MaxRateLift();
  }
  // True when campaign `id` has its own ceiling slot (id < LiveStateOptions::lift_capacity).
  bool HoldsLift(int64_t id) const { return id >= 0 && static_cast<uint64_t>(id) < lift_capacity_; }
  // A fresh draw counter (exploration's seeds: DrawSeed(NextDraw(), campaign id)).
  uint64_t NextDraw() { return draws_.fetch_add(1, std::memory_order_relaxed); }
  // A click or conversion raised the campaign's lift to `lift` (atomic max: a concurrent
  // recompute cannot lower it below this). Widens the current walk order's slack when the
  // ceiling rises above the one the order was built with.
  void RaiseLift(int64_t id, double lift);
  // Sets the ceiling to `lift` computed from counters read after `before` was loaded, unless a
  // RaiseLift happened since (then the raised value stays). `before` = LoadLift(id).
  void ResetLift(int64_t id, double before, double lift);
  // The walk order the auction uses (null before the first PublishWalkOrder). Lock-free on the
  // common path (see Published).
  std::shared_ptr<const WalkOrder> CurrentWalkOrder() const { return walk_order_.Current(); }
  // Publishes `order`, then widens its slack for every ceiling raised since its ceilings were
  // read: a raise either sees the new order or is seen by that second read.
  void PublishWalkOrder(std::shared_ptr<const WalkOrder> order);
  double LoadLift(int64_t id) const {
    return id >= 0 && static_cast<uint64_t>(id) < lift_capacity_
               ? lifts_[id].load(std::memory_order_acquire)
               : 0;
  }

 private:
  std::atomic<double> max_rate_lift_{1.0};
  const uint64_t lift_capacity_;
  std::atomic<uint64_t> draws_;
  std::unique_ptr<std::atomic<double>[]> lifts_;  // 0 = none recorded
  Published<WalkOrder> walk_order_;
};

// Recomputes MaxRateLift and every campaign's lift ceiling from the counters of `catalog`'s
// campaigns (after counters were restored at start-up, then periodically: impressions without
// clicks or conversions lower a learned rate, and only this lowers a ceiling), then
// RefreshWalkOrder.
void RecomputeRateLift(LiveState& state, const Catalog& catalog, int64_t now);

// Builds and publishes a new walk order for `catalog` when there is none for it, when a raise
// widened the current one's slack, or when some ceiling fell below kWalkOrderTighten x the one
// the order was built with. Returns true when it published one.
inline constexpr double kWalkOrderTighten = 0.9;
bool RefreshWalkOrder(LiveState& state, const Catalog& catalog);

// What one impression of `campaign` costs: CPM bid / 1000 (rounded down), 0 for CPC and CPA.
Micros ImpressionPrice(const Campaign& campaign);
// What a node must hold of a total budget to serve the campaign in cluster mode: one billable
// event (an impression's price, or one click or conversion bid), at least 1.
Micros LeaseNeed(const Campaign& campaign);

// Cluster mode: spends one impression of `campaign` from this node's lease before the impression
// is answered; false (nothing spent: answer no ad) when the lease holds less than its price
// (another request took the rest). Always true without leases, without a total budget, or at
// price 0. Lock-free.
bool AuthorizeImpression(LiveState& state, const Campaign& campaign);

// Billable events. An impression (a 200 served by a live key) is charged to CPM campaigns and
// counted against the frequency cap of every wallet of the request; a click is charged to CPC
// campaigns, a conversion to CPA campaigns. All of them feed the predicted rates.
void RecordImpression(LiveState& state, const Campaign& campaign, std::span<const Address> wallets,
                      int64_t now);
void RecordClick(LiveState& state, const Campaign& campaign, int64_t now);
// A click billed at `price` (the CPC bid when the ad was served, carried by the click token).
void RecordClick(LiveState& state, const Campaign& campaign, Micros price, int64_t now);
void RecordConversion(LiveState& state, const Campaign& campaign, int64_t now);
// A conversion billed at `price` (the CPA bid when it was attributed; 0 for other models).
void RecordConversion(LiveState& state, const Campaign& campaign, Micros price, int64_t now);
// A conversion billed at `price` at `billed_at` whose block a reorg abandoned: its count and
// spend come off the ledger and, for a campaign with a total budget under leases, its price
// goes back to this node's lease (spent again or given back to the authority on shutdown), so
// that a reorg does not leave the shared budget short. `campaign` null: the campaign is no
// longer in the catalog (only the ledger).
void UndoConversion(LiveState& state, int64_t campaign_id, const Campaign* campaign, Micros price,
                    int64_t billed_at);

}  // namespace adserver::decision
