#pragma once

// In-memory spend and event counters per campaign. Lock-free: a fixed-capacity open-addressing
// table of atomics keyed by campaign store id (so counters survive catalog rebuilds). Every
// method is thread-safe; TakeChanged() must be called by one thread at a time (the flusher).
// Pure: time is passed in (Unix seconds).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/types.h"

namespace adserver::decision {

// The persisted form of one campaign's counters (absolute values).
struct CampaignCounters {
  int64_t campaign_id = 0;
  Micros total_spend = 0;
  int64_t impressions = 0;
  int64_t clicks = 0;
  int64_t conversions = 0;
  int64_t day = 0;  // days since the epoch that day_spend belongs to
  Micros day_spend = 0;
  int64_t hour = 0;  // hours since the epoch that hour_spend belongs to
  Micros hour_spend = 0;
  bool operator==(const CampaignCounters&) const = default;
};

class BudgetLedger {
 public:
  // `capacity` is rounded up to a power of two.
  explicit BudgetLedger(size_t capacity = 1 << 16);
  ~BudgetLedger();
  BudgetLedger(const BudgetLedger&) = delete;
  BudgetLedger& operator=(const BudgetLedger&) = delete;

  struct View {
    bool tracked = false;  // false when the table is full and the campaign has no slot
    Micros total_spend = 0;
    Micros day_spend = 0;   // of the day of `now`
    Micros hour_spend = 0;  // of the hour of `now`
    int64_t impressions = 0;
    int64_t clicks = 0;
    int64_t conversions = 0;
  };
  // Counters of `campaign_id` as of `now` (zeros for a campaign never seen).
  View Read(int64_t campaign_id, int64_t now) const;

  // Billable events. Each adds `price` to the total, day and hour spend and bumps its count.
  // Return false only when the table is full.
  bool RecordImpression(int64_t campaign_id, Micros price, int64_t now);
  bool RecordClick(int64_t campaign_id, Micros price, int64_t now);
  bool RecordConversion(int64_t campaign_id, Micros price, int64_t now);
  // Takes back a conversion billed at `billed_at` for `price` (its block was reorged away):
  // one conversion less, the price off the total, and off the day / hour spend when they are
  // still those of `billed_at`. A campaign without a slot gets one (its counters go below
  // zero: in cluster mode another node billed it). False only when the table is full.
  bool UndoConversion(int64_t campaign_id, Micros price, int64_t billed_at);

  // Sets a campaign's counters (recovery at start-up, before serving).
  void Restore(const CampaignCounters& counters);
  // Counters of every campaign changed since the previous call (absolute values).
  std::vector<CampaignCounters> TakeChanged();
  // Counters of every tracked campaign.
  std::vector<CampaignCounters> All() const;

 private:
  struct Slot;
  Slot* Find(int64_t campaign_id) const;
  Slot* FindOrInsert(int64_t campaign_id);
  // True when an empty slot remains on `campaign_id`'s probe path.
  bool HasRoomFor(int64_t campaign_id) const;
  bool Record(int64_t campaign_id, Micros price, int64_t now, int kind);
  static CampaignCounters Load(const Slot& slot);

  size_t mask_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace adserver::decision
