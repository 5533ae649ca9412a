#pragma once

// Persistence of advertiser events (issue 15, POST /v1/events): what an advertiser's site
// reports (a sign-up, a purchase), linked to the click that brought the visitor when its URL
// carries `spclid`. Events never bill. The embedded adapter is SQLite
// (store/sqlite/sqlite_advertiser_events_store.h); a PostgreSQL adapter implements the same
// interface. Thread-safe; every call may block on I/O (never call it on an event loop).
// Error contract as in store/stores.h (Unavailable when the backend is busy or gone, Internal
// else).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store {

struct AdvertiserEventRecord {
  Id id = 0;                       // assigned by Insert; increases with insertion order
  Id community_id = 0;             // the key's community
  Id key_id = 0;                   // the advertiser key that sent it
  std::string name;                // ^[a-z0-9_]{1,64}$
  std::optional<std::string> url;  // event.url as sent
  // The decision of the `spclid` in `url` (16 bytes, UUIDv7).
  std::optional<std::array<uint8_t, 16>> decision_id;
  // The campaign of that decision's click; set by Insert (nullopt: no spclid or no click).
  std::optional<Id> campaign_id;
  uint64_t person = 0;  // keyed digest of the person's wallet set, never a wallet
  int64_t created_at = 0;
  // The invalid-traffic check it failed ("crawler", ...; docs/api-notes.md "Invalid traffic"),
  // "" when valid. An invalid event is stored but counted apart (InvalidCounts), never in
  // Counts.
  std::string invalid_reason;
};

// Filters of the read-back listing; newest first.
struct AdvertiserEventQuery {
  std::optional<Id> campaign_id;
  std::optional<Id> community_id;
  std::optional<int64_t> from;  // inclusive, Unix seconds
  std::optional<int64_t> to;    // exclusive
  std::optional<Id> before_id;  // cursor: rows with a smaller id
  int limit = 100;
};

// Events of one name, counted since the first one (counts outlive the raw rows' retention).
struct AdvertiserEventCount {
  std::string name;
  int64_t count = 0;
  bool operator==(const AdvertiserEventCount&) const = default;
};

// Where the events API (serve/events_handler.h) stores events: every AdvertiserEventsStore, or
// events::BufferedAdvertiserEventSink over one, which keeps events on the node's disk while the
// store is away (cluster mode).
class AdvertiserEventSink {
 public:
  virtual ~AdvertiserEventSink() = default;

  // Stores `event` durably (a process crash cannot lose it once this returns) and counts it
  // under its community, campaign and name, in one transaction. When `decision_id` is set,
  // `campaign_id` becomes the campaign of that decision's click (any click status), else
  // nullopt; fills in `id`. An invalid event (`invalid_reason` set) is counted under its reason
  // instead of its name.
  virtual Status Insert(AdvertiserEventRecord& event) = 0;
};

class AdvertiserEventsStore : public AdvertiserEventSink {
 public:
  // Deletes raw events created before `before` (counts are kept). Returns rows deleted.
  virtual Result<int64_t> Prune(int64_t before) = 0;
  virtual Result<std::vector<AdvertiserEventRecord>> List(const AdvertiserEventQuery& query) = 0;
  // Counts per name (sorted by name) of the events matching both filters (nullopt: any);
  // `campaign_id` 0 means events linked to no campaign.
  virtual Result<std::vector<AdvertiserEventCount>> Counts(std::optional<Id> campaign_id,
                                                           std::optional<Id> community_id) = 0;
  // Invalid events per reason (sorted by reason), with the same filters as Counts.
  virtual Result<std::vector<AdvertiserEventCount>> InvalidCounts(
      std::optional<Id> campaign_id, std::optional<Id> community_id) = 0;
};

}  // namespace adserver::store
