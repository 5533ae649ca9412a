#include "decision/budget_leases.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "common/mutex.h"

namespace adserver::decision {

// ---- LocalBudgetAuthority

Result<Micros> LocalBudgetAuthority::Take(int64_t campaign_id, Micros want) {
  MutexLock lock(mu_);
  auto it = remaining_.find(campaign_id);
  if (it == remaining_.end()) {
    return NotFoundError("no remaining budget for campaign " + std::to_string(campaign_id));
  }
  Micros take = std::clamp<Micros>(want, 0, std::max<Micros>(it->second, 0));
  it->second -= take;
  return take;
}

Status LocalBudgetAuthority::Give(int64_t campaign_id, Micros amount) {
  MutexLock lock(mu_);
  auto it = remaining_.find(campaign_id);
  if (it != remaining_.end()) it->second += amount;
  return OkStatus();
}

Result<bool> LocalBudgetAuthority::Seed(int64_t campaign_id, Micros remaining) {
  MutexLock lock(mu_);
  return remaining_.emplace(campaign_id, remaining).second;
}

Status LocalBudgetAuthority::Forget(int64_t campaign_id) {
  MutexLock lock(mu_);
  remaining_.erase(campaign_id);
  return OkStatus();
}

// ---- BudgetLeases

struct alignas(64) BudgetLeases::Slot {
  std::atomic<int64_t> campaign_id{0};  // 0 = free
  std::atomic<Micros> held{0};
};

BudgetLeases::BudgetLeases(BudgetAuthority& authority, LeaseOptions options, size_t capacity)
    : authority_(authority),
      options_(options),
      mask_(std::bit_ceil(std::max<size_t>(capacity, 2)) - 1),
      slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

BudgetLeases::~BudgetLeases() = default;

Micros BudgetLeases::SliceOf(const LeasedCampaign& c, const LeaseOptions& options) {
  auto share = static_cast<Micros>(std::ceil(static_cast<double>(c.budget) * options.slice_share));
  return std::max<Micros>({share, c.max_price, 1});
}

BudgetLeases::Slot* BudgetLeases::Find(int64_t campaign_id) const {
  size_t i = static_cast<size_t>(campaign_id * 0x9e3779b97f4a7c15ULL) & mask_;
  for (size_t probes = 0; probes <= mask_; ++probes, i = (i + 1) & mask_) {
    int64_t id = slots_[i].campaign_id.load(std::memory_order_acquire);
    if (id == campaign_id) return &slots_[i];
    if (id == 0) return nullptr;
  }
  return nullptr;
}

BudgetLeases::Slot* BudgetLeases::FindOrInsert(int64_t campaign_id) {
  size_t i = static_cast<size_t>(campaign_id * 0x9e3779b97f4a7c15ULL) & mask_;
  for (size_t probes = 0; probes <= mask_; ++probes, i = (i + 1) & mask_) {
    int64_t id = slots_[i].campaign_id.load(std::memory_order_acquire);
    if (id == campaign_id) return &slots_[i];
    if (id == 0) {
      int64_t expected = 0;
      if (slots_[i].campaign_id.compare_exchange_strong(expected, campaign_id,
                                                        std::memory_order_acq_rel) ||
          expected == campaign_id) {
        return &slots_[i];
      }
    }
  }
  return nullptr;
}

bool BudgetLeases::TrySpend(int64_t campaign_id, Micros price) {
  Slot* slot = Find(campaign_id);
  if (slot == nullptr) return false;
  Micros held = slot->held.load(std::memory_order_relaxed);
  while (held >= price) {
    if (slot->held.compare_exchange_weak(held, held - price, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void BudgetLeases::Charge(int64_t campaign_id, Micros price) {
  if (price <= 0) return;
  Slot* slot = FindOrInsert(campaign_id);
  if (slot != nullptr) slot->held.fetch_sub(price, std::memory_order_relaxed);
}

void BudgetLeases::Credit(int64_t campaign_id, Micros amount) {
  if (amount <= 0) return;
  Slot* slot = FindOrInsert(campaign_id);
  if (slot != nullptr) slot->held.fetch_add(amount, std::memory_order_relaxed);
}

Micros BudgetLeases::Held(int64_t campaign_id) const {
  const Slot* slot = Find(campaign_id);
  return slot == nullptr ? 0 : slot->held.load(std::memory_order_relaxed);
}

Status BudgetLeases::Refill(std::span<const LeasedCampaign> campaigns) {
  Status first = OkStatus();
  auto note = [&first](const Status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  for (const LeasedCampaign& c : campaigns) {
    if (c.campaign_id <= 0) continue;
    Slot* slot = FindOrInsert(c.campaign_id);
    if (slot == nullptr) {
      note(UnavailableError("budget lease table full"));
      continue;
    }
    const Micros slice = SliceOf(c, options_);
    const Micros held = slot->held.load(std::memory_order_relaxed);
    if (held >= slice / 2) continue;
    // A debt (held < 0) is taken too, so what the node spent comes off the shared remainder.
    Result<Micros> taken = authority_.Take(c.campaign_id, slice - held);
    if (!taken.ok() && taken.status().code() == Code::kNotFound) {
      Result<bool> seeded = authority_.Seed(c.campaign_id, std::max<Micros>(c.budget - c.spent, 0));
      if (!seeded.ok()) {
        note(seeded.status());
        continue;
      }
      taken = authority_.Take(c.campaign_id, slice - held);
    }
    if (!taken.ok()) {
      note(taken.status());
      continue;
    }
    slot->held.fetch_add(*taken, std::memory_order_relaxed);
  }
  return first;
}

Status BudgetLeases::ReturnAll() {
  Status first = OkStatus();
  for (size_t i = 0; i <= mask_; ++i) {
    Slot& slot = slots_[i];
    int64_t id = slot.campaign_id.load(std::memory_order_acquire);
    if (id == 0) continue;
    Micros held = slot.held.exchange(0, std::memory_order_relaxed);
    if (held == 0) continue;
    Status given = authority_.Give(id, held);
    if (!given.ok()) {
      slot.held.fetch_add(held, std::memory_order_relaxed);
      if (first.ok()) first = given;
    }
  }
  return first;
}

}  // namespace adserver::decision
