#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/published.h"
#include "decision/catalog.h"
#include "events/events_service.h"
#include "events/traffic_checks.h"
#include "http/client_ip.h"
#include "http/message.h"
#include "http/router.h"
#include "serve/traffic_guard.h"

namespace adserver::serve {

// GET /v1/click/{token}: the click redirect (issue 15, docs/api-notes.md "Clicks").
//   - a token that does not open (forged, truncated, altered, unknown key): 400 in the error
//     shape, no redirect, nothing recorded;
//   - otherwise 302 to the ad's approved ctaUrl (never an edit under review, issue 39) with
//     spclid=<decision id> added, Cache-Control: no-store, Referrer-Policy: no-referrer,
//     after the click is durable: the first valid
//     click of a decision is billed (CPC) and counted, later ones are recorded as duplicates,
//     a token older than events.click_ttl_seconds as expired, a click failing an
//     invalid-traffic check (events/traffic_checks.h) as invalid with its reason: neither
//     bills nor counts, both still redirect;
//   - HEAD (link previews, prefetchers) redirects the same way but records nothing.
// GET runs on the event loop and answers once the click writer has committed it
// (Dispatch::kDeferred: no thread waits); HEAD runs on the worker pool. Thread-safe.

class ClickHandler {
 public:
  // The approved ctaUrl of an ad no longer in the serving catalog (paused, campaign ended),
  // read from the store; nullopt when the ad does not exist or no version was ever approved.
  using AdUrlLookup = std::function<std::optional<std::string>(int64_t ad_id)>;

  // Every argument must outlive the handler.
  ClickHandler(const Published<decision::Catalog>& catalogs, events::EventsService& events,
               const Clock& clock, AdUrlLookup lookup, TrafficGuard traffic = {});
  void RegisterRoutes(http::Router& router) const;
  // Answers through `respond` (possibly from the click writer's thread).
  void HandleDeferred(const http::Request& request, http::Responder respond) const;
  // The same, waiting for the answer (HEAD, tests).
  http::Response Handle(const http::Request& request) const;

 private:
  const Published<decision::Catalog>& catalogs_;
  events::EventsService& events_;
  const Clock& clock_;
  AdUrlLookup lookup_;
  TrafficGuard traffic_;
};

}  // namespace adserver::serve
