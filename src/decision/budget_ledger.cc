#include "decision/budget_ledger.h"

#include <algorithm>

#include "common/clock.h"

namespace adserver::decision {
namespace {

// A period (day or hour index, low 20 bits) and the spend in it (44 bits, saturating), packed
// into one word so a period roll-over and an addition are one compare-and-swap.
constexpr int kSpendBits = 44;
constexpr uint64_t kSpendMask = (uint64_t{1} << kSpendBits) - 1;
constexpr uint64_t kPeriodMask = (uint64_t{1} << 20) - 1;

uint64_t Pack(int64_t period, Micros spend) {
  auto s = static_cast<uint64_t>(std::clamp<Micros>(spend, 0, static_cast<Micros>(kSpendMask)));
  return ((static_cast<uint64_t>(period) & kPeriodMask) << kSpendBits) | s;
}

// Spend of `packed` if it belongs to `period`, else 0.
Micros SpendIn(uint64_t packed, int64_t period) {
  if ((packed >> kSpendBits) != (static_cast<uint64_t>(period) & kPeriodMask)) return 0;
  return static_cast<Micros>(packed & kSpendMask);
}

void AddInPeriod(std::atomic<uint64_t>& word, int64_t period, Micros amount) {
  uint64_t old = word.load(std::memory_order_relaxed);
  while (!word.compare_exchange_weak(old, Pack(period, SpendIn(old, period) + amount),
                                     std::memory_order_relaxed)) {
  }
}

// Takes `amount` off the spend of `word` if it still holds `period` (an older period's spend is
// no longer read, so there is nothing to correct).
void SubtractInPeriod(std::atomic<uint64_t>& word, int64_t period, Micros amount) {
  uint64_t old = word.load(std::memory_order_relaxed);
  while ((old >> kSpendBits) == (static_cast<uint64_t>(period) & kPeriodMask)) {
    if (word.compare_exchange_weak(old, Pack(period, SpendIn(old, period) - amount),
                                   std::memory_order_relaxed)) {
      return;
    }
  }
}

size_t Mix(int64_t id) {
  auto x = static_cast<uint64_t>(id);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<size_t>(x);
}

enum Kind { kImpression, kClick, kConversion };

}  // namespace

struct BudgetLedger::Slot {
  std::atomic<int64_t> id{0};  // 0 = empty (store ids are positive)
  std::atomic<Micros> total_spend{0};
  std::atomic<int64_t> counts[3] = {0, 0, 0};
  std::atomic<uint64_t> day{0};
  std::atomic<uint64_t> hour{0};
  std::atomic<uint64_t> version{0};  // bumped after every change
  uint64_t flushed_version = 0;      // touched by TakeChanged() only
  std::atomic<int64_t> last_day{0};
  std::atomic<int64_t> last_hour{0};
};

BudgetLedger::BudgetLedger(size_t capacity) {
  size_t n = 16;
  while (n < capacity) n <<= 1;
  mask_ = n - 1;
  slots_ = std::make_unique<Slot[]>(n);
}

BudgetLedger::~BudgetLedger() = default;

BudgetLedger::Slot* BudgetLedger::Find(int64_t campaign_id) const {
  if (campaign_id <= 0) return nullptr;
  for (size_t i = 0, h = Mix(campaign_id); i <= mask_; ++i) {
    Slot& s = slots_[(h + i) & mask_];
    int64_t id = s.id.load(std::memory_order_acquire);
    if (id == campaign_id) return &s;
    if (id == 0) return nullptr;
  }
  return nullptr;
}

bool BudgetLedger::HasRoomFor(int64_t campaign_id) const {
  if (campaign_id <= 0) return false;
  for (size_t i = 0, h = Mix(campaign_id); i <= mask_; ++i) {
    if (slots_[(h + i) & mask_].id.load(std::memory_order_acquire) == 0) return true;
  }
  return false;
}

BudgetLedger::Slot* BudgetLedger::FindOrInsert(int64_t campaign_id) {
  if (campaign_id <= 0) return nullptr;
  for (size_t i = 0, h = Mix(campaign_id); i <= mask_; ++i) {
    Slot& s = slots_[(h + i) & mask_];
    int64_t id = s.id.load(std::memory_order_acquire);
    if (id == 0 && s.id.compare_exchange_strong(id, campaign_id, std::memory_order_acq_rel)) {
      return &s;
    }
    if (id == campaign_id) return &s;
  }
  return nullptr;
}

BudgetLedger::View BudgetLedger::Read(int64_t campaign_id, int64_t now) const {
  const Slot* s = Find(campaign_id);
  if (s == nullptr) {
    // Unknown campaigns read as zero; untracked when no slot is left for them (full table).
    View v;
    v.tracked = HasRoomFor(campaign_id);
    return v;
  }
  return View{.tracked = true,
              .total_spend = s->total_spend.load(std::memory_order_relaxed),
              .day_spend = SpendIn(s->day.load(std::memory_order_relaxed), DayOf(now)),
              .hour_spend = SpendIn(s->hour.load(std::memory_order_relaxed), now / 3600),
              .impressions = s->counts[kImpression].load(std::memory_order_relaxed),
              .clicks = s->counts[kClick].load(std::memory_order_relaxed),
              .conversions = s->counts[kConversion].load(std::memory_order_relaxed)};
}

bool BudgetLedger::Record(int64_t campaign_id, Micros price, int64_t now, int kind) {
  Slot* s = FindOrInsert(campaign_id);
  if (s == nullptr) return false;
  s->counts[kind].fetch_add(1, std::memory_order_relaxed);
  if (price > 0) {
    s->total_spend.fetch_add(price, std::memory_order_relaxed);
    AddInPeriod(s->day, DayOf(now), price);
    AddInPeriod(s->hour, now / 3600, price);
  }
  s->last_day.store(DayOf(now), std::memory_order_relaxed);
  s->last_hour.store(now / 3600, std::memory_order_relaxed);
  s->version.fetch_add(1, std::memory_order_release);
  return true;
}

bool BudgetLedger::RecordImpression(int64_t id, Micros price, int64_t now) {
  return Record(id, price, now, kImpression);
}
bool BudgetLedger::RecordClick(int64_t id, Micros price, int64_t now) {
  return Record(id, price, now, kClick);
}
bool BudgetLedger::RecordConversion(int64_t id, Micros price, int64_t now) {
  return Record(id, price, now, kConversion);
}

bool BudgetLedger::UndoConversion(int64_t campaign_id, Micros price, int64_t billed_at) {
  // A campaign without a slot still takes the undo: in a cluster the conversion may have been
  // billed by another node (or the CLI), and this node's counters going below zero keeps the
  // sum over nodes right.
  Slot* s = FindOrInsert(campaign_id);
  if (s == nullptr) return false;
  s->counts[kConversion].fetch_sub(1, std::memory_order_relaxed);
  if (price > 0) {
    s->total_spend.fetch_sub(price, std::memory_order_relaxed);
    SubtractInPeriod(s->day, DayOf(billed_at), price);
    SubtractInPeriod(s->hour, billed_at / 3600, price);
  }
  s->version.fetch_add(1, std::memory_order_release);
  return true;
}

void BudgetLedger::Restore(const CampaignCounters& c) {
  Slot* s = FindOrInsert(c.campaign_id);
  if (s == nullptr) return;
  s->total_spend.store(c.total_spend, std::memory_order_relaxed);
  s->counts[kImpression].store(c.impressions, std::memory_order_relaxed);
  s->counts[kClick].store(c.clicks, std::memory_order_relaxed);
  s->counts[kConversion].store(c.conversions, std::memory_order_relaxed);
  s->day.store(Pack(c.day, c.day_spend), std::memory_order_relaxed);
  s->hour.store(Pack(c.hour, c.hour_spend), std::memory_order_relaxed);
  s->last_day.store(c.day, std::memory_order_relaxed);
  s->last_hour.store(c.hour, std::memory_order_relaxed);
  s->flushed_version = s->version.load(std::memory_order_acquire);
}

CampaignCounters BudgetLedger::Load(const Slot& s) {
  int64_t day = s.last_day.load(std::memory_order_relaxed);
  int64_t hour = s.last_hour.load(std::memory_order_relaxed);
  return CampaignCounters{.campaign_id = s.id.load(std::memory_order_acquire),
                          .total_spend = s.total_spend.load(std::memory_order_relaxed),
                          .impressions = s.counts[kImpression].load(std::memory_order_relaxed),
                          .clicks = s.counts[kClick].load(std::memory_order_relaxed),
                          .conversions = s.counts[kConversion].load(std::memory_order_relaxed),
                          .day = day,
                          .day_spend = SpendIn(s.day.load(std::memory_order_relaxed), day),
                          .hour = hour,
                          .hour_spend = SpendIn(s.hour.load(std::memory_order_relaxed), hour)};
}

std::vector<CampaignCounters> BudgetLedger::TakeChanged() {
  std::vector<CampaignCounters> out;
  for (size_t i = 0; i <= mask_; ++i) {
    Slot& s = slots_[i];
    if (s.id.load(std::memory_order_acquire) == 0) continue;
    uint64_t version = s.version.load(std::memory_order_acquire);
    if (version == s.flushed_version) continue;
    s.flushed_version = version;
    out.push_back(Load(s));
  }
  return out;
}

std::vector<CampaignCounters> BudgetLedger::All() const {
  std::vector<CampaignCounters> out;
  for (size_t i = 0; i <= mask_; ++i) {
    if (slots_[i].id.load(std::memory_order_acquire) != 0) out.push_back(Load(slots_[i]));
  }
  return out;
}

}  // namespace adserver::decision
