#include "events/buffered_click_sink.h"

#include <algorithm>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"

namespace adserver::events {
namespace {
// Clicks delivered per transaction of the primary.
constexpr size_t kDeliverBatch = 1000;
}  // namespace

BufferedClickSink::BufferedClickSink(store::ClickSink& primary, store::ClickOutbox& outbox,
                                     int64_t max_buffered)
    : primary_(primary), outbox_(outbox), max_buffered_(max_buffered) {
  Result<int64_t> count = outbox_.Count();
  buffered_.store(count.ok() ? *count : 0, std::memory_order_relaxed);
  if (count.ok() && *count > 0) {
    ADS_LOG(info, "clicks buffered by an earlier run are delivered when the store is reachable",
            "clicks", *count);
  }
}

Status BufferedClickSink::InsertClicks(std::span<store::ClickRecord> rows) {
  // Clicks buffered earlier go first, so the primary sees each decision's clicks in order.
  if (buffered() == 0) {
    Status inserted = primary_.InsertClicks(rows);
    if (inserted.ok() || inserted.code() != Code::kUnavailable) return inserted;
  }
  if (buffered() + static_cast<int64_t>(rows.size()) > max_buffered_) {
    return UnavailableError("the events store is unreachable and the click outbox is full");
  }
  // Billed now by this node's counters: no node mark covers them (issue 37 item 3).
  for (store::ClickRecord& r : rows) r.buffered = true;
  ADS_RETURN_IF_ERROR(outbox_.Append(rows));
  int64_t before = buffered_.fetch_add(static_cast<int64_t>(rows.size()));
  if (before == 0) {
    ADS_LOG(warn, "events store unreachable: clicks are buffered on local disk", "max",
            max_buffered_);
  }
  return OkStatus();
}

Result<int64_t> BufferedClickSink::Deliver(size_t max_rows) {
  MutexLock lock(deliver_mu_);
  int64_t delivered = 0;
  while (buffered() > 0 && static_cast<size_t>(delivered) < max_rows) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::ClickRecord> rows,
                         outbox_.Oldest(std::min(kDeliverBatch, max_rows - delivered)));
    if (rows.empty()) {
      buffered_.store(0, std::memory_order_relaxed);
      break;
    }
    const store::Id through = rows.back().id;
    for (store::ClickRecord& r : rows) r.buffered = true;
    ADS_RETURN_IF_ERROR(primary_.InsertClicks(rows));
    ADS_RETURN_IF_ERROR(outbox_.Remove(through));
    buffered_.fetch_sub(static_cast<int64_t>(rows.size()), std::memory_order_relaxed);
    delivered += static_cast<int64_t>(rows.size());
  }
  if (delivered > 0 && buffered() == 0) {
    ADS_LOG(info, "buffered clicks delivered to the events store", "clicks", delivered);
  }
  return delivered;
}

Status BufferedClickSink::Checkpoint() {
  if (buffered() > 0) {
    Result<int64_t> delivered = Deliver(100'000);
    if (!delivered.ok() && delivered.status().code() != Code::kUnavailable) {
      ADS_LOG(warn, "buffered clicks not delivered; retrying", "status", delivered.status());
    }
  }
  return primary_.Checkpoint();
}

BufferedAdvertiserEventSink::BufferedAdvertiserEventSink(store::AdvertiserEventSink& primary,
                                                         store::AdvertiserEventOutbox& outbox,
                                                         int64_t max_buffered)
    : primary_(primary), outbox_(outbox), max_buffered_(max_buffered) {
  Result<int64_t> count = outbox_.EventCount();
  buffered_.store(count.ok() ? *count : 0, std::memory_order_relaxed);
}

Status BufferedAdvertiserEventSink::Insert(store::AdvertiserEventRecord& event) {
  if (buffered() == 0) {
    Status inserted = primary_.Insert(event);
    if (inserted.ok() || inserted.code() != Code::kUnavailable) return inserted;
  }
  if (buffered() >= max_buffered_) {
    return UnavailableError("the events store is unreachable and the event outbox is full");
  }
  event.campaign_id.reset();  // found on delivery
  ADS_RETURN_IF_ERROR(outbox_.AppendEvent(event));
  if (buffered_.fetch_add(1) == 0) {
    ADS_LOG(warn, "events store unreachable: advertiser events are buffered on local disk", "max",
            max_buffered_);
  }
  return OkStatus();
}

Result<int64_t> BufferedAdvertiserEventSink::Deliver(size_t max_events) {
  MutexLock lock(deliver_mu_);
  int64_t delivered = 0;
  while (buffered() > 0 && static_cast<size_t>(delivered) < max_events) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::AdvertiserEventRecord> events,
                         outbox_.OldestEvents(std::min<size_t>(kDeliverBatch, max_events)));
    if (events.empty()) {
      buffered_.store(0, std::memory_order_relaxed);
      break;
    }
    for (store::AdvertiserEventRecord& e : events) {
      const store::Id outbox_id = e.id;
      e.id = 0;
      ADS_RETURN_IF_ERROR(primary_.Insert(e));
      ADS_RETURN_IF_ERROR(outbox_.RemoveEvent(outbox_id));
      buffered_.fetch_sub(1, std::memory_order_relaxed);
      ++delivered;
    }
  }
  if (delivered > 0 && buffered() == 0) {
    ADS_LOG(info, "buffered advertiser events delivered", "events", delivered);
  }
  return delivered;
}

}  // namespace adserver::events
