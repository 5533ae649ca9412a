#pragma once

// Persists the decision engine's in-memory counters (budget ledger) to the store off the
// request path, and recovers them at start-up. A background thread writes every changed
// campaign each interval; Stop() writes a last time, so a graceful shutdown loses nothing and
// a crash loses at most one interval. Thread-safe.

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "decision/budget_ledger.h"
#include "store/campaign_counter_store.h"

namespace adserver::ingest {

// A campaign's stored counters as the ledger restores them.
decision::CampaignCounters FromRecord(const store::CampaignCountersRecord& r);

class CounterFlusher {
 public:
  // store and ledger must outlive this object.
  CounterFlusher(store::CampaignCounterStore& store, decision::BudgetLedger& ledger,
                 std::chrono::milliseconds interval = std::chrono::seconds(1));
  ~CounterFlusher();

  // Loads every persisted counter into the ledger. Call before serving.
  Status Recover();
  // Start-up, after Recover and before serving: raises each campaign's counters to what the
  // recorded events make them (EventsStore::CountersFromEvents) where the flushed ones are
  // lower, and saves the raised ones. A kill -9 loses up to one flush interval of counters but
  // never a committed click or conversion, so after this, spend is the sum of the billed events.
  // Never lowers a counter (counters from before events were recorded; a conversion undone in
  // the last interval before a crash stays spent). Returns the campaigns raised.
  Result<size_t> Reconcile(std::span<const store::CampaignCountersRecord> from_events);
  // Starts the background thread.
  void Start();
  // Writes every counter changed since the last successful flush. A failed write is retried
  // by the next flush (nothing is lost while the process runs).
  Status FlushNow();
  // Stops the thread, then flushes a last time. Idempotent.
  Status Stop();
  // Runs `tick` on the background thread after every periodic flush (serving recomputes the
  // learned-rate lift ceilings there). Set before Start().
  void SetTick(std::function<void()> tick) { tick_ = std::move(tick); }
  // Embedded (issue 37): each flush reads the ledger inside `snapshot`, which runs its argument
  // while no conversion is billed or undone, with the marks of what the ledger holds
  // (events::ConversionAttributor::Snapshot), and saves them with the counters in one
  // transaction (store::CampaignCounterStore::SaveCampaignCountersAt). A failed snapshot saves
  // the counters with the marks cleared (unknown). With it, Reconcile saves through a flush.
  // Set before Reconcile and Start().
  using MarksSnapshot =
      std::function<Status(const std::function<void(const store::CounterMarks&)>& take)>;
  void SetMarks(MarksSnapshot snapshot) { marks_ = std::move(snapshot); }

 private:
  void Run();

  store::CampaignCounterStore& store_;
  decision::BudgetLedger& ledger_;
  const std::chrono::milliseconds interval_;
  std::function<void()> tick_;
  MarksSnapshot marks_;
  std::optional<store::CounterMarks> saved_marks_ ADS_GUARDED_BY(flush_mu_);
  static constexpr int kMarksHeartbeat = 5;             // flushes without a save, at most
  int idle_flushes_ ADS_GUARDED_BY(flush_mu_) = 0;
  Mutex flush_mu_;  // serialises flushes
  std::vector<store::CampaignCountersRecord> pending_ ADS_GUARDED_BY(flush_mu_);
  Mutex mu_;
  CondVar cv_;
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace adserver::ingest
