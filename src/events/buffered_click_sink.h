#pragma once

// Clicks buffered on the node's disk while the events store cannot take them (cluster mode,
// issue 17 item 8: PostgreSQL down): the events service's writer (store::ClickSink) over the
// store's. InsertClicks goes to the primary store; when that answers
// Unavailable, the clicks are appended to the outbox instead (durable there, so their redirect is
// answered and nothing acknowledged is lost), up to `max_buffered` clicks; beyond that the
// click is refused as before (503, try again). Checkpoint() (the events service calls it every
// flush interval) delivers the outbox to the primary, oldest first, and removes what was
// delivered. Everything else the service writes or reads goes to the store itself.
//
// While buffering, a node decides a click's billing against its own outbox (a decision is billed
// once per node); the primary decides again on delivery, so a decision clicked through two nodes
// during one outage is stored billed once, but both nodes' counters billed it (docs/deploy.md).
// A crash between a delivery's commit and the outbox's removal delivers those clicks again: the
// primary stores them as duplicates of themselves, billed once.

#include <atomic>
#include <cstdint>

#include "common/mutex.h"
#include "store/advertiser_events_store.h"
#include "store/event_outbox.h"
#include "store/events_store.h"

namespace adserver::events {

class BufferedClickSink final : public store::ClickSink {
 public:
  // `primary` and `outbox` must outlive this.
  BufferedClickSink(store::ClickSink& primary, store::ClickOutbox& outbox, int64_t max_buffered);

  // Clicks in the outbox (read at construction, then kept).
  int64_t buffered() const { return buffered_.load(std::memory_order_relaxed); }
  // Delivers up to `max_rows` buffered clicks; how many were delivered.
  Result<int64_t> Deliver(size_t max_rows);

  Status InsertClicks(std::span<store::ClickRecord> rows) override;
  // Delivers the outbox first (a failure is logged and left for the next call).
  Status Checkpoint() override;

 private:
  store::ClickSink& primary_;
  store::ClickOutbox& outbox_;
  const int64_t max_buffered_;
  Mutex deliver_mu_;  // one delivery at a time
  std::atomic<int64_t> buffered_{0};
};

// Advertiser events (POST /v1/events) buffered the same way: Insert goes to the primary store and,
// when that answers Unavailable, to the outbox (up to `max_buffered` events; the campaign of an
// event's spclid is found on delivery). Deliver() (the cluster node's sync thread calls it)
// moves them to the primary, oldest first, each removed once stored (a crash in between
// delivers that one event twice: events never bill). Pruning and reads go to the store itself.
class BufferedAdvertiserEventSink final : public store::AdvertiserEventSink {
 public:
  // `primary` and `outbox` must outlive this.
  BufferedAdvertiserEventSink(store::AdvertiserEventSink& primary,
                              store::AdvertiserEventOutbox& outbox, int64_t max_buffered);

  int64_t buffered() const { return buffered_.load(std::memory_order_relaxed); }
  // Delivers up to `max_events` buffered events; how many were delivered.
  Result<int64_t> Deliver(size_t max_events);

  Status Insert(store::AdvertiserEventRecord& event) override;

 private:
  store::AdvertiserEventSink& primary_;
  store::AdvertiserEventOutbox& outbox_;
  const int64_t max_buffered_;
  Mutex deliver_mu_;  // one delivery at a time
  std::atomic<int64_t> buffered_{0};
};

}  // namespace adserver::events
