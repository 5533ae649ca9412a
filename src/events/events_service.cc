#include "events/events_service.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "common/crypto.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::events {
namespace {

constexpr std::string_view kClickKeyName = "click_key";
constexpr std::string_view kPersonKeyName = "person_key";
constexpr std::chrono::seconds kPruneEvery{3600};
constexpr int64_t kClickRollupSlice = 20'000;

std::string Hex(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace

// One click waiting for its commit, with whom to tell.
struct EventsService::PendingClick {
  store::ClickRecord row;
  ClickDone done;
};

Result<std::unique_ptr<EventsService>> EventsService::Create(store::EventWriter& store,
                                                             store::ClickSink& clicks,
                                                             const Clock& clock,
                                                             EventsOptions options) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  std::string ring_text = options.keys;
  if (ring_text.empty()) {
    std::array<uint8_t, 32> candidate;
    randombytes_buf(candidate.data(), candidate.size());
    ADS_ASSIGN_OR_RETURN(std::vector<uint8_t> key, store.Secret(kClickKeyName, candidate));
    if (key.size() != 32) return InternalError("events_meta.click_key is not 32 bytes");
    ring_text = "1:" + Hex(key);
  }
  ADS_ASSIGN_OR_RETURN(identity::KeyRing ring, identity::KeyRing::Parse(ring_text, "events.keys"));
  std::array<uint8_t, 16> person_candidate;
  randombytes_buf(person_candidate.data(), person_candidate.size());
  ADS_ASSIGN_OR_RETURN(std::vector<uint8_t> person, store.Secret(kPersonKeyName, person_candidate));
  if (person.size() != 16) return InternalError("events_meta.person_key is not 16 bytes");
  std::array<uint8_t, 16> person_key;
  std::copy(person.begin(), person.end(), person_key.begin());
  return std::unique_ptr<EventsService>(
      new EventsService(store, clicks, clock, std::move(options), std::move(ring), person_key));
}

EventsService::EventsService(store::EventWriter& store, store::ClickSink& clicks,
                             const Clock& clock, EventsOptions options,
                             identity::KeyRing click_keys, std::array<uint8_t, 16> person_key)
    : store_(store),
      clicks_(clicks),
      clock_(clock),
      options_(std::move(options)),
      person_key_(person_key),
      served_(options_.max_rollup_keys_per_thread) {
  ReplaceClickKeys(std::move(click_keys));
}

void EventsService::AppendMetrics(MetricsText& m) const {
  m.Family("adserver_clicks_total", "counter",
           "Clicks recorded by status (only billed ones bill), invalid ones also by reason.");
  for (size_t s = 0; s < kClickStatuses; ++s) {
    std::string_view status = store::ClickStatusName(static_cast<store::ClickStatus>(s));
    if (s == static_cast<size_t>(store::ClickStatus::kInvalid)) {
      uint64_t by_reason = 0;
      for (size_t r = 1; r < kInvalidReasons; ++r) {
        uint64_t n = click_counts_[kClickStatuses + r].load(std::memory_order_relaxed);
        by_reason += n;
        m.Sample("adserver_clicks_total",
                 {{"status", status}, {"reason", InvalidReasonName(static_cast<InvalidReason>(r))}},
                 n);
      }
      uint64_t total = click_counts_[s].load(std::memory_order_relaxed);
      m.Sample("adserver_clicks_total", {{"status", status}, {"reason", "other"}},
               total > by_reason ? total - by_reason : 0);
    } else {
      m.Sample("adserver_clicks_total", {{"status", status}, {"reason", ""}},
               click_counts_[s].load(std::memory_order_relaxed));
    }
  }
  m.Family("adserver_clicks_not_stored_total", "counter",
           "Clicks answered 503 because the store refused their batch.");
  m.Sample("adserver_clicks_not_stored_total", {},
           click_counts_[kClickStatuses + kInvalidReasons].load(std::memory_order_relaxed));
}

void EventsService::ReplaceClickKeys(identity::KeyRing ring) {
  MutexLock lock(rings_mu_);
  rings_.push_back(std::make_unique<const identity::KeyRing>(std::move(ring)));
  click_keys_.store(rings_.back().get(), std::memory_order_release);
}

EventsService::~EventsService() { Stop(); }

uint64_t EventsService::PersonDigest(std::span<const Address> wallets) const {
  uint64_t sum = 0;
  for (const Address& a : wallets) {
    uint64_t h = 0;
    crypto_shorthash(reinterpret_cast<unsigned char*>(&h), a.bytes.data(), a.bytes.size(),
                     person_key_.data());
    sum += h;
  }
  return sum;
}

void EventsService::RecordClickAsync(store::ClickRecord click, ClickDone done) {
  Status refused;
  {
    MutexLock lock(mu_);
    if (accepting_ && queue_.size() < options_.max_pending_clicks) {
      queue_.push_back(PendingClick{.row = std::move(click), .done = std::move(done)});
      work_cv_.NotifyOne();
      return;
    }
    refused = UnavailableError(accepting_ ? "too many clicks waiting to be written"
                                          : "click log is not running");
  }
  done(std::move(refused));
}

void EventsService::RecordClickAsync(Click click, std::function<void(Status)> done) {
  RecordClickAsync(ClickRecordOf(std::move(click)),
                   [done = std::move(done)](Result<store::ClickRecord> recorded) {
                     done(recorded.status());
                   });
}

Result<store::ClickRecord> EventsService::RecordClick(store::ClickRecord click) {
  Mutex mu;
  CondVar cv;
  std::optional<Result<store::ClickRecord>> result;  // guarded by mu
  RecordClickAsync(std::move(click), [&](Result<store::ClickRecord> r) {
    MutexLock lock(mu);  // held while notifying: this frame may then end
    result.emplace(std::move(r));
    cv.NotifyOne();
  });
  MutexLock lock(mu);
  cv.Wait(mu, [&]() ADS_REQUIRES(mu) { return result.has_value(); });
  return std::move(*result);
}

void EventsService::RunWriter() {
  std::vector<PendingClick> batch;
  std::vector<store::ClickRecord> rows;
  for (;;) {
    {
      MutexLock lock(mu_);
      work_cv_.Wait(mu_, [&]() ADS_REQUIRES(mu_) { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping with nothing left
      while (!queue_.empty() && batch.size() < options_.max_click_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    rows.clear();
    for (PendingClick& p : batch) rows.push_back(std::move(p.row));
    Status status = clicks_.InsertClicks(rows);
    if (!status.ok()) {
      ADS_LOG(error, "click batch not written", "clicks", batch.size(), "error", status.message());
    }
    auto bump = [](std::atomic<uint64_t>& c) {
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    };
    if (status.ok()) {
      // The billed clicks reach the counters and the mark moves past the batch together: a
      // counter flush (SnapshotClicks) sees both or neither.
      MutexLock billed(billed_mu_);
      for (const store::ClickRecord& r : rows) {
        if (r.status == store::ClickStatus::kBilled && on_billed_) on_billed_(r);
        if (!r.buffered) applied_click_id_ = std::max(applied_click_id_, r.id);
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!status.ok()) {
        bump(click_counts_[kClickStatuses + kInvalidReasons]);
        batch[i].done(status);
        continue;
      }
      bump(click_counts_[static_cast<size_t>(rows[i].status)]);
      if (rows[i].status == store::ClickStatus::kInvalid) {
        for (size_t r = 1; r < kInvalidReasons; ++r) {
          if (InvalidReasonName(static_cast<InvalidReason>(r)) == rows[i].reason) {
            bump(click_counts_[kClickStatuses + r]);
            break;
          }
        }
      }
      batch[i].done(std::move(rows[i]));
    }
    batch.clear();
  }
}

void EventsService::SnapshotClicks(const std::function<void(store::Id)>& take) {
  MutexLock billed(billed_mu_);
  take(applied_click_id_);
}

void EventsService::SetAppliedClickId(store::Id id) {
  MutexLock billed(billed_mu_);
  applied_click_id_ = id;
}

Status EventsService::FlushNow() {
  MutexLock lock(flush_mu_);
  std::vector<store::RollupRow> rows = served_.Take();
  if (on_served_ && !rows.empty()) on_served_(rows);
  unflushed_.insert(unflushed_.end(), std::make_move_iterator(rows.begin()),
                    std::make_move_iterator(rows.end()));
  if (!unflushed_.empty()) {
    ADS_RETURN_IF_ERROR(store_.AddRollups(unflushed_));
    unflushed_.clear();
  }
  // In slices, so that clicks waiting for their commit never wait behind a long backlog.
  for (;;) {
    ADS_ASSIGN_OR_RETURN(int64_t rolled, store_.RollUpClicks(kClickRollupSlice));
    if (rolled < kClickRollupSlice) return OkStatus();
  }
}

void EventsService::RunFlusher() {
  auto next_prune = std::chrono::steady_clock::now();
  MutexLock lock(flusher_mu_);
  while (!flusher_stop_) {
    flusher_cv_.WaitFor(flusher_mu_, options_.flush_interval,
                        [&]() ADS_REQUIRES(flusher_mu_) { return flusher_stop_; });
    if (flusher_stop_) break;
    lock.Unlock();
    Status flushed = FlushNow();
    if (!flushed.ok())
      ADS_LOG(warn, "serving counters not written; retrying", "error", flushed.message());
    Status checkpointed = clicks_.Checkpoint();
    if (!checkpointed.ok()) {
      ADS_LOG(warn, "event log checkpoint failed", "error", checkpointed.message());
    }
    if (std::chrono::steady_clock::now() >= next_prune) {
      next_prune = std::chrono::steady_clock::now() + kPruneEvery;
      store::EventRetention retention{
          .raw_seconds = options_.raw_retention_days * 86400,
          .minute_rollup_seconds = options_.minute_rollup_retention_hours * 3600,
          .hour_rollup_seconds = options_.hour_rollup_retention_days * 86400};
      Result<int64_t> pruned = store_.Prune(retention, clock_.NowSeconds());
      if (!pruned.ok()) ADS_LOG(warn, "event prune failed", "error", pruned.status().message());
    }
    lock.Lock();
  }
}

void EventsService::Start() {
  {
    MutexLock lock(mu_);
    if (accepting_ || stopped_) return;
    accepting_ = true;
  }
  writer_ = std::thread([this] {
    NameThisThread("click-writer");  // answers waiting clicks: normal priority
    RunWriter();
  });
  flusher_ = std::thread([this] {
    NameThisThread("event-rollups");
    // SCHED_IDLE, not nice: at nice 10 a flush that got the core held it for a scheduler slice
    // (EEVDF runs a task to its slice before a waking loop preempts it), which set the loops'
    // p99 (docs/BENCHMARKS.md, eleventh session). Idle, a waking loop takes the core at once.
    if (!MakeThisThreadIdle()) LowerThisThreadPriority();
    RunFlusher();
  });
}

void EventsService::Stop() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    accepting_ = false;
    stopping_ = true;
  }
  work_cv_.NotifyAll();
  if (writer_.joinable()) writer_.join();  // commits every click still queued
  {
    MutexLock lock(flusher_mu_);
    flusher_stop_ = true;
  }
  flusher_cv_.NotifyAll();
  if (flusher_.joinable()) flusher_.join();
  Status flushed = FlushNow();
  if (!flushed.ok())
    ADS_LOG(error, "last serving counters not written", "error", flushed.message());
}

}  // namespace adserver::events
