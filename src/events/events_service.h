#pragma once

// The event side of serving (issue 15): click-token keys, the person digest, serving counters
// and their flusher, and the click log that makes a click durable before its redirect leaves.
//
// Clicks: RecordClick queues a row and waits until the writer thread has committed it (group
// commit: every click waiting when a transaction starts goes into it). The store decides
// whether a valid click is its decision's first (billed) or a duplicate. Then `on_billed` runs
// for billed clicks (the decision engine's counters) before RecordClick returns.
//
// Serving counters are kept per thread (ServedCounters) and written every flush_interval by a
// background thread, which also adds the clicks committed since to the rollups (the click's
// own commit writes only its row: reports and stats see it within one flush interval, and a
// crash only delays it), checkpoints the log, and prunes old rows once an hour. Stop() writes
// the last counters and rolls up the last clicks.

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "common/address.h"
#include "common/clock.h"
#include "common/metrics_text.h"
#include "common/mutex.h"
#include "common/status.h"
#include "events/click.h"
#include "events/options.h"
#include "events/served_counters.h"
#include "events/traffic_checks.h"
#include "identity/key_ring.h"
#include "store/events_store.h"

namespace adserver::events {

class EventsService {
 public:
  // Loads (or creates, first run) the installation's secrets from `store`. Click batches and
  // checkpoints go to `clicks` (the store itself, or a store::ClickSink over it); the rest to
  // `store`. `store`, `clicks` and `clock` must outlive the service.
  static Result<std::unique_ptr<EventsService>> Create(store::EventWriter& store,
                                                       store::ClickSink& clicks, const Clock& clock,
                                                       EventsOptions options);
  ~EventsService();
  EventsService(const EventsService&) = delete;
  EventsService& operator=(const EventsService&) = delete;

  const EventsOptions& options() const { return options_; }
  // The click-token key ring in use: its first key seals, every key opens. One atomic load, no
  // reference count (rings are kept until the service goes, so a reference stays valid).
  const identity::KeyRing& click_keys() const {
    return *click_keys_.load(std::memory_order_acquire);
  }
  // Makes `ring` the one in use (SIGHUP with events.keys configured). The previous rings stay
  // allocated: a reload is an operator's action, a few hundred bytes each.
  void ReplaceClickKeys(identity::KeyRing ring);
  // Keyed digest (SipHash-2-4 under the installation's person key, summed over the wallets so
  // order does not matter) of a person's wallet set. Thread-safe, allocation-free.
  uint64_t PersonDigest(std::span<const Address> wallets) const;
  ServedCounters& served() { return served_; }

  // Clicks recorded so far by status, invalid ones also by reason, and batches the store
  // refused (Prometheus text, for /metrics).
  void AppendMetrics(MetricsText& m) const;

  // Called with each flush's serving counters (once per row, before they are written; on the
  // flusher's thread): what per-placement learning counts impressions from.
  void SetOnServed(std::function<void(std::span<const store::RollupRow>)> on_served) {
    on_served_ = std::move(on_served);
  }

  // Called once per billed click after it is durable (on the calling worker thread).
  void SetOnBilled(std::function<void(const store::ClickRecord&)> on_billed) {
    on_billed_ = std::move(on_billed);
  }

  // Stores one click durably; `done` gets it with its id and final status once committed (on
  // the click writer's thread, after on_billed), or Unavailable when the queue is full, the
  // service stopped (both called at once, on the calling thread) or the store failed (nothing
  // was billed then). Never blocks.
  using ClickDone = std::function<void(Result<store::ClickRecord>)>;
  void RecordClickAsync(store::ClickRecord click, ClickDone done);
  // Stores the click redirect's `click` as ClickRecordOf makes it; `done` gets OkStatus once
  // it is committed, or the error as above.
  void RecordClickAsync(Click click, std::function<void(Status)> done);
  // The same, waiting for the commit (for callers that may block).
  Result<store::ClickRecord> RecordClick(store::ClickRecord click);

  // Cluster mode (issue 37 item 3): runs `take` with the highest id of the clicks this node
  // wrote to the store itself (not buffered) whose billing reached on_billed, while no click
  // is being billed: every such click up to it is in the counters on_billed feeds, none after
  // it. The counter flusher reads the ledger in `take`.
  void SnapshotClicks(const std::function<void(store::Id)>& take);
  // Where that mark starts (start-up, after the counters were reconciled up to it).
  void SetAppliedClickId(store::Id id);

  // Starts the click writer and the counter flusher.
  void Start();
  // Writes serving counters and rolls up the clicks committed so far, now.
  Status FlushNow();
  // Stops accepting clicks, commits those queued, writes the last counters. Idempotent.
  void Stop();

 private:
  EventsService(store::EventWriter& store, store::ClickSink& clicks, const Clock& clock,
                EventsOptions options, identity::KeyRing click_keys,
                std::array<uint8_t, 16> person_key);
  struct PendingClick;
  void RunWriter();
  void RunFlusher();

  store::EventWriter& store_;
  store::ClickSink& clicks_;
  const Clock& clock_;
  const EventsOptions options_;
  std::atomic<const identity::KeyRing*> click_keys_;
  // Written by the click writer only: by ClickStatus, then invalid clicks by InvalidReason,
  // then clicks whose batch the store refused.
  static constexpr size_t kClickStatuses = 4;
  std::array<std::atomic<uint64_t>, kClickStatuses + kInvalidReasons + 1> click_counts_{};
  Mutex rings_mu_;
  std::vector<std::unique_ptr<const identity::KeyRing>> rings_ ADS_GUARDED_BY(rings_mu_);
  const std::array<uint8_t, 16> person_key_;
  ServedCounters served_;
  std::function<void(const store::ClickRecord&)> on_billed_;
  std::function<void(std::span<const store::RollupRow>)> on_served_;
  Mutex billed_mu_;  // the click writer's billing vs SnapshotClicks
  store::Id applied_click_id_ ADS_GUARDED_BY(billed_mu_) = 0;

  Mutex mu_;
  CondVar work_cv_;  // writer: queue non-empty or stopping
  std::deque<PendingClick> queue_ ADS_GUARDED_BY(mu_);
  bool accepting_ ADS_GUARDED_BY(mu_) = false;
  bool stopping_ ADS_GUARDED_BY(mu_) = false;
  std::thread writer_;

  Mutex flush_mu_;                                                     // serialises counter flushes
  std::vector<store::RollupRow> unflushed_ ADS_GUARDED_BY(flush_mu_);  // retried by the next flush
  Mutex flusher_mu_;
  CondVar flusher_cv_;
  bool flusher_stop_ ADS_GUARDED_BY(flusher_mu_) = false;
  std::thread flusher_;
  bool stopped_ = false;
};

}  // namespace adserver::events
