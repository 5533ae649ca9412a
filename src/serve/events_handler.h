#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/clock.h"
#include "common/metrics_text.h"
#include "common/published.h"
#include "common/status.h"
#include "common/thread_counters.h"
#include "decision/catalog.h"
#include "events/advertiser_event_log.h"
#include "events/traffic_checks.h"
#include "http/message.h"
#include "http/router.h"
#include "identity/identity_service.h"
#include "serve/click_handler.h"

namespace adserver::serve {

struct AdvertiserEventsOptions {
  // Longest `event.url` accepted, in bytes. (Retention: events::AdvertiserEventLogOptions.)
  size_t max_url_bytes = 2048;
  // Access-Control-Max-Age of preflight answers, seconds.
  int cors_max_age_seconds = 600;
};

// A parsed POST /v1/events body.
struct EventRequest {
  bool cookie_consent = false;
  std::string name;
  std::optional<std::string> url;
  std::vector<Address> wallets;  // distinct, in request order
};

// Parses and validates a POST /v1/events body: `event.name` must match ^[a-z0-9_]{1,64}$,
// `event.url` (optional, null = absent) a string of at most `max_url_bytes`, walletAddresses
// (optional) EVM addresses, at most 50 once deduplicated case-insensitively, cookieConsent
// (optional) a boolean. Unknown members are ignored. InvalidArgument with one detail per
// offending field otherwise.
Result<EventRequest> ParseEventRequest(std::string_view body, size_t max_url_bytes = 2048);

// The decision id (16 bytes) of the first `spclid=<uuid>` query parameter of `url`; nullopt
// when there is none or it is not a decision id.
std::optional<std::array<uint8_t, 16>> SpclidOf(std::string_view url);

// POST /v1/events (issue 15, docs/api-notes.md "Advertiser events"): the endpoint of the
// advertiser analytics SDK. `x-api-key` must be an active advertiser key (sak_...; publisher
// keys are 401). Answers 200 {"success":true} once the event is stored, or the status with
// {"success":false,"error":...,"details":[...]}. Test keys are validated and answered but
// write nothing. Credentialed CORS as /v1/ads. An event failing an invalid-traffic check
// (events/traffic_checks.h) is answered 200 the same, stored with its reason and counted apart.
// Runs on the worker pool (it waits for the insert). Thread-safe.
class EventsHandler {
 public:
  // Keyed digest of a person's wallet set (events::EventsService::PersonDigest).
  using PersonDigestFn = std::function<uint64_t(std::span<const Address>)>;

  // catalogs, log, clock and identity must outlive the handler; `identity` null disables
  // the identity cookie (wallets are then the only identity). Events are stored in `log`.
  EventsHandler(const Published<decision::Catalog>& catalogs, const events::AdvertiserEventLog& log,
                PersonDigestFn person_digest, const Clock& clock,
                const identity::IdentityService* identity, AdvertiserEventsOptions options = {},
                TrafficGuard traffic = {});

  // Registers POST and OPTIONS /v1/events.
  // Events stored so far by validity (Prometheus text, for /metrics).
  void AppendMetrics(MetricsText& m) const;
  void RegisterRoutes(http::Router& router) const;

  http::Response Handle(const http::Request& request) const;
  http::Response Preflight(const http::Request& request) const;
  // The core with the catalog given (null: not ready, 503).
  http::Response HandleWith(const http::Request& request, const decision::Catalog* catalog,
                            int64_t now_seconds) const;

 private:
  http::Response Record(const http::Request& request, const decision::AdvertiserKey& key,
                        const EventRequest& event, std::span<const Address> wallets,
                        int64_t now) const;

  const Published<decision::Catalog>& catalogs_;
  const events::AdvertiserEventLog& log_;
  PersonDigestFn person_digest_;
  const Clock& clock_;
  const identity::IdentityService* identity_;
  AdvertiserEventsOptions options_;
  TrafficGuard traffic_;
  // By InvalidReason (kNone = valid), then not stored.
  mutable ThreadCounters<events::kInvalidReasons + 1> counts_;
};

}  // namespace adserver::serve
