#pragma once

// Events a node could not hand to its stores (cluster mode: PostgreSQL unreachable), kept on the
// node's own disk until they are delivered (events/buffered_click_sink.h): clicks
// (ClickOutbox) and advertiser events (AdvertiserEventOutbox). Bounded by their users.
// Thread-safe; every call may block on I/O.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "store/advertiser_events_store.h"
#include "store/events_store.h"

namespace adserver::store {

class ClickOutbox {
 public:
  virtual ~ClickOutbox() = default;
  // Appends `rows` in one durable transaction (a crash after this returns loses none) and
  // fills in their outbox ids. A row passed as kBilled whose decision already has a billed row
  // in the outbox (earlier or in this batch) is kept as kDuplicate, as EventsStore::InsertClicks
  // does: a node bills a decision once while it buffers.
  virtual Status Append(std::span<ClickRecord> rows) = 0;
  // The `limit` oldest rows, oldest first, with their outbox ids.
  virtual Result<std::vector<ClickRecord>> Oldest(size_t limit) = 0;
  // Deletes the rows with an outbox id up to `through` (they were delivered).
  virtual Status Remove(Id through) = 0;
  virtual Result<int64_t> Count() = 0;
};

class AdvertiserEventOutbox {
 public:
  virtual ~AdvertiserEventOutbox() = default;
  // Appends `event` durably and fills in its outbox id (its campaign is found on delivery).
  virtual Status AppendEvent(AdvertiserEventRecord& event) = 0;
  // The `limit` oldest events, oldest first, with their outbox ids.
  virtual Result<std::vector<AdvertiserEventRecord>> OldestEvents(size_t limit) = 0;
  // Deletes the event with outbox id `id` (it was delivered).
  virtual Status RemoveEvent(Id id) = 0;
  virtual Result<int64_t> EventCount() = 0;
};

}  // namespace adserver::store
