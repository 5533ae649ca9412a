#pragma once

// Where POST /v1/events puts an advertiser's event (issue 15, docs/api-notes.md "Advertiser
// events"): stored durably through a store::AdvertiserEventSink, and the raw rows kept for
// a retention period (the insert path prunes, so the table stays bounded by its own traffic).

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "events/traffic_checks.h"
#include "store/advertiser_events_store.h"

namespace adserver::events {

// An event an advertiser key sent, as the handler accepted it.
struct AdvertiserEvent {
  int64_t community_id = 0;  // the key's community
  int64_t key_id = 0;        // the advertiser key that sent it
  std::string name;
  std::optional<std::string> url;  // event.url as sent
  // The decision of the `spclid` in `url` (nullopt: none).
  std::optional<std::array<uint8_t, 16>> decision_id;
  uint64_t person = 0;  // keyed digest of the person's wallet set (EventsService::PersonDigest)
  int64_t created_at = 0;
  // The invalid-traffic check it failed (kNone: valid): stored, counted apart, never in Counts.
  InvalidReason invalid = InvalidReason::kNone;
};

struct AdvertiserEventLogOptions {
  // Raw event rows older than this are deleted (counts per name are kept).
  int64_t retention_seconds = 90 * 86400;
  // How often the insert path prunes (the first insert after this long runs Prune on its
  // thread): rows only arrive through inserts, so this bounds the table.
  int64_t prune_interval_seconds = 3600;
};

class AdvertiserEventLog {
 public:
  // Inserts go to `sink`, pruning to `store` (the same store, or the sink's over it); both must
  // outlive the log.
  AdvertiserEventLog(store::AdvertiserEventsStore& store, store::AdvertiserEventSink& sink,
                     AdvertiserEventLogOptions options = {})
      : store_(store), sink_(sink), options_(options) {}

  // Stores `event` durably (the store links it to its decision's campaign); Unavailable when the
  // store cannot. Then, at most once per prune interval, deletes rows past retention (a failed
  // prune is logged, not returned: the event is stored). Blocks on the store: call from a
  // worker thread. Thread-safe.
  Status Record(const AdvertiserEvent& event) const;

 private:
  void MaybePrune(int64_t now) const;

  store::AdvertiserEventsStore& store_;
  store::AdvertiserEventSink& sink_;
  const AdvertiserEventLogOptions options_;
  // Unix seconds after which the next insert prunes.
  mutable std::atomic<int64_t> next_prune_{0};
};

}  // namespace adserver::events
