#pragma once

// Spend authorised in leases (cluster mode, issue 17 item 5). Nodes of a cluster share each
// campaign's remaining budget through a BudgetAuthority (Redis in cluster mode; one process can
// use LocalBudgetAuthority). A node takes a slice of it at a time, in the background, and spends
// from what it holds on the serving path without a round trip: TrySpend is a lock-free
// compare-and-swap on the campaign's slot. What a node holds is given back on shutdown.
//
// Bounds: spend authorised this way never exceeds the budget (the authority hands out at most
// what remains, atomically), so impressions (CPM) cannot overspend. A crashed node's held
// slices are lost to its campaigns until the authority is seeded again: at most one slice per
// campaign and node of underspend. Slice = max(slice_share x budget, the campaign's maximum
// price), so one slice always pays for one event.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "common/mutex.h"
#include "common/status.h"
#include "common/types.h"

namespace adserver::decision {

// The shared remaining budget of each campaign. Implementations are thread-safe; calls may
// block on I/O (Unavailable when the authority cannot be reached), so they run off the event
// loops.
class BudgetAuthority {
 public:
  virtual ~BudgetAuthority() = default;
  // Takes min(want, remaining) of `campaign_id`'s remaining budget, atomically, and returns it
  // (0 when nothing remains). NotFound when the authority has no remaining budget for the
  // campaign (never seeded, or lost): Seed it, then take again.
  virtual Result<Micros> Take(int64_t campaign_id, Micros want) = 0;
  // Puts `amount` back. A campaign the authority does not know (lost meanwhile) is left
  // unknown: its next seed counts from the persisted spend.
  virtual Status Give(int64_t campaign_id, Micros amount) = 0;
  // Sets the campaign's remaining budget unless the authority has one; true when this call set
  // it (the first of several nodes wins).
  virtual Result<bool> Seed(int64_t campaign_id, Micros remaining) = 0;
  // Forgets a campaign (its budget changed: the next refill seeds it again).
  virtual Status Forget(int64_t campaign_id) = 0;
};

// An in-process authority: the leases of one process (tests, a single node).
class LocalBudgetAuthority final : public BudgetAuthority {
 public:
  Result<Micros> Take(int64_t campaign_id, Micros want) override;
  Status Give(int64_t campaign_id, Micros amount) override;
  Result<bool> Seed(int64_t campaign_id, Micros remaining) override;
  Status Forget(int64_t campaign_id) override;

 private:
  Mutex mu_;
  std::unordered_map<int64_t, Micros> remaining_ ADS_GUARDED_BY(mu_);
};

struct LeaseOptions {
  // Share of the budget one lease takes (0.5 %), at least the campaign's maximum price.
  double slice_share = 0.005;
};

// A campaign with a total budget, as the refill needs it.
struct LeasedCampaign {
  int64_t campaign_id = 0;  // > 0
  Micros budget = 0;        // total budget
  Micros max_price = 0;     // the most one billable event costs
  Micros spent = 0;         // spend persisted so far (seeds the authority)
};

class BudgetLeases {
 public:
  // `capacity`: campaigns tracked at most (rounded up to a power of two).
  explicit BudgetLeases(BudgetAuthority& authority, LeaseOptions options = {},
                        size_t capacity = size_t{1} << 14);
  ~BudgetLeases();
  BudgetLeases(const BudgetLeases&) = delete;
  BudgetLeases& operator=(const BudgetLeases&) = delete;

  static Micros SliceOf(const LeasedCampaign& c, const LeaseOptions& options);

  // Serving path: spends `price` from the campaign's lease; false (nothing spent) when the
  // lease holds less. Lock-free, no I/O, no allocation.
  bool TrySpend(int64_t campaign_id, Micros price);
  // A click or conversion billed after its impression was served (its price was not known
  // then): taken from the lease even when that leaves it negative; the next Refill takes the
  // debt from the authority first. So CPC/CPA spend passes a total budget by at most the
  // clicks and conversions billed after the authority ran dry (bounded by the click tokens in
  // flight and the conversion window). Lock-free.
  void Charge(int64_t campaign_id, Micros price);
  // A charge taken back (a conversion whose block a reorg abandoned): `amount` returns to the
  // campaign's lease. Lock-free.
  void Credit(int64_t campaign_id, Micros amount);
  // What the node holds for the campaign (negative: billed beyond what it held).
  Micros Held(int64_t campaign_id) const;

  // Background: tops up every campaign holding less than half a slice to a full slice, seeding
  // the authority from `spent` where it does not know a campaign. Every campaign is tried; the
  // first error is returned (Unavailable while the authority is down: the node keeps spending
  // what it holds, then stops, failing closed).
  Status Refill(std::span<const LeasedCampaign> campaigns);
  // Shutdown: gives back everything held. The first error is returned; what could not be given
  // back stays held.
  Status ReturnAll();

 private:
  struct Slot;
  Slot* Find(int64_t campaign_id) const;
  Slot* FindOrInsert(int64_t campaign_id);

  BudgetAuthority& authority_;
  const LeaseOptions options_;
  size_t mask_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace adserver::decision
