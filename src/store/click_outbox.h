#pragma once

// Clicks a node could not hand to its events store (cluster mode: PostgreSQL unreachable), kept
// on the node's own disk until they are delivered (events/buffered_events_store.h). Bounded by
// its user. Thread-safe; every call may block on I/O.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
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

}  // namespace adserver::store
