#include "ingest/counter_flusher.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::ingest {
namespace {

store::CampaignCountersRecord ToRecord(const decision::CampaignCounters& c) {
  return {.campaign_id = c.campaign_id,
          .total_spend = c.total_spend,
          .impressions = c.impressions,
          .clicks = c.clicks,
          .conversions = c.conversions,
          .day = c.day,
          .day_spend = c.day_spend,
          .hour = c.hour,
          .hour_spend = c.hour_spend};
}

}  // namespace

decision::CampaignCounters FromRecord(const store::CampaignCountersRecord& r) {
  return {.campaign_id = r.campaign_id,
          .total_spend = r.total_spend,
          .impressions = r.impressions,
          .clicks = r.clicks,
          .conversions = r.conversions,
          .day = r.day,
          .day_spend = r.day_spend,
          .hour = r.hour,
          .hour_spend = r.hour_spend};
}

CounterFlusher::CounterFlusher(store::CampaignCounterStore& store, decision::BudgetLedger& ledger,
                               std::chrono::milliseconds interval)
    : store_(store), ledger_(ledger), interval_(interval) {}

CounterFlusher::~CounterFlusher() { Stop(); }

Status CounterFlusher::Recover() {
  ADS_ASSIGN_OR_RETURN(std::vector<store::CampaignCountersRecord> rows,
                       store_.LoadCampaignCounters());
  for (const store::CampaignCountersRecord& r : rows) ledger_.Restore(FromRecord(r));
  ADS_LOG(info, "campaign counters recovered", "campaigns", rows.size());
  return OkStatus();
}

Result<size_t> CounterFlusher::Reconcile(
    std::span<const store::CampaignCountersRecord> from_events) {
  std::unordered_map<int64_t, decision::CampaignCounters> flushed;
  for (decision::CampaignCounters& c : ledger_.All()) flushed.emplace(c.campaign_id, c);
  std::vector<store::CampaignCountersRecord> raised;
  Micros added = 0;
  for (const store::CampaignCountersRecord& events : from_events) {
    decision::CampaignCounters merged{.campaign_id = events.campaign_id};
    if (auto it = flushed.find(events.campaign_id); it != flushed.end()) merged = it->second;
    const decision::CampaignCounters before = merged;
    added += std::max<Micros>(0, events.total_spend - merged.total_spend);
    merged.total_spend = std::max(merged.total_spend, events.total_spend);
    merged.impressions = std::max(merged.impressions, events.impressions);
    merged.clicks = std::max(merged.clicks, events.clicks);
    merged.conversions = std::max(merged.conversions, events.conversions);
    // A day or hour counter of an earlier period is replaced by the current one.
    if (events.day > merged.day) merged.day_spend = 0, merged.day = events.day;
    if (events.day == merged.day) merged.day_spend = std::max(merged.day_spend, events.day_spend);
    if (events.hour > merged.hour) merged.hour_spend = 0, merged.hour = events.hour;
    if (events.hour == merged.hour) {
      merged.hour_spend = std::max(merged.hour_spend, events.hour_spend);
    }
    if (merged == before) continue;
    ledger_.Restore(merged);
    raised.push_back(ToRecord(merged));
  }
  if (raised.empty()) {
    if (marks_) ADS_RETURN_IF_ERROR(FlushNow());  // what the start-up follow changed
    return size_t{0};
  }
  if (marks_) {
    // Saved with everything else the ledger holds and its marks (a save of these rows alone
    // would pair them with older marks).
    {
      MutexLock lock(flush_mu_);
      pending_.insert(pending_.end(), raised.begin(), raised.end());
    }
    ADS_RETURN_IF_ERROR(FlushNow());
  } else {
    ADS_RETURN_IF_ERROR(store_.SaveCampaignCounters(raised));
  }
  // Either the last flush before a crash was lost, or events were recorded without counters
  // (an import of history, the demo's seeded week).
  ADS_LOG(warn,
          "campaign counters raised to the recorded events (a flush lost in a crash, or events "
          "recorded without their counters)",
          "campaigns", raised.size(), "spend_micros_added", added);
  return raised.size();
}

void CounterFlusher::Start() {
  MutexLock lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] {
    NameThisThread("counters");
    Run();
  });
}

Status CounterFlusher::FlushNow() {
  MutexLock lock(flush_mu_);
  std::vector<decision::CampaignCounters> changed;
  std::optional<store::CounterMarks> marks;
  bool taken = false;
  if (marks_) {
    Status snapped = marks_([&](const store::CounterMarks& m) {
      marks = m;
      changed = ledger_.TakeChanged();
      taken = true;
    });
    if (!snapped.ok()) {
      ADS_LOG(warn, "conversion marks unknown; counters saved without them", "status", snapped);
      marks.reset();
    }
  }
  if (!taken) changed = ledger_.TakeChanged();
  // With marks, an idle process still saves them every kMarksHeartbeat flushes: a cluster node
  // whose marks stop moving is taken for dead (PostgresStore::ReconcileDeadNodes).
  const bool idle = changed.empty() && pending_.empty();
  if (idle && !marks_) return OkStatus();
  if (idle && marks == saved_marks_ && ++idle_flushes_ < kMarksHeartbeat) return OkStatus();
  idle_flushes_ = 0;
  // Values are absolute, so a newer row of a campaign replaces a pending older one.
  std::unordered_map<int64_t, size_t> position;
  for (size_t i = 0; i < pending_.size(); ++i) position[pending_[i].campaign_id] = i;
  for (const decision::CampaignCounters& c : changed) {
    auto [it, inserted] = position.emplace(c.campaign_id, pending_.size());
    if (inserted) {
      pending_.push_back(ToRecord(c));
    } else {
      pending_[it->second] = ToRecord(c);
    }
  }
  Status saved = marks_ ? store_.SaveCampaignCountersAt(pending_, marks)
                        : store_.SaveCampaignCounters(pending_);
  if (saved.ok()) {
    pending_.clear();
    saved_marks_ = marks;
  }
  return saved;
}

Status CounterFlusher::Stop() {
  {
    MutexLock lock(mu_);
    if (stop_) return OkStatus();
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  Status flushed = FlushNow();
  if (!flushed.ok()) ADS_LOG(error, "final counter flush failed", "status", flushed);
  return flushed;
}

void CounterFlusher::Run() {
  MutexLock lock(mu_);
  while (!stop_) {
    cv_.WaitFor(mu_, interval_, [this]() ADS_REQUIRES(mu_) { return stop_; });
    if (stop_) break;
    lock.Unlock();
    Status flushed = FlushNow();
    if (!flushed.ok()) ADS_LOG(warn, "counter flush failed; retrying", "status", flushed);
    if (tick_) tick_();
    lock.Lock();
  }
}

}  // namespace adserver::ingest
