#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/published.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "decision/engine.h"
#include "events/events_service.h"
#include "events/exposure_recorder.h"
#include "http/message.h"
#include "http/router.h"
#include "identity/identity_service.h"
#include "serve/ad_metrics.h"
#include "serve/ad_pipeline.h"
#include "serve/ad_ports.h"
#include "serve/ad_request.h"
#include "serve/ad_response.h"
#include "serve/decision_hooks.h"
#include "serve/options.h"
#include "serve/traffic_guard.h"
#include "common/rate_limiter.h"

namespace adserver::serve {

// Serves POST /v1/ads (current) and POST /api/ads (earlier), and their CORS preflights.
// The HTTP around serve::AdPipeline: the key, Origin and rate-limit checks, Content-Type and
// parsing, CORS and the route metrics. Handling is a pure function of (request, catalog,
// activity, time, rng) and the pipeline's ports; Handle() only picks up the current snapshots.
// Never blocks, never touches a store. Thread-safe.
class AdHandler {
 public:
  // catalogs, activity, clock and identity must outlive the handler. `identity` null disables
  // the identity cookie and localId binding (every localId is then unknown).
  AdHandler(const Published<decision::Catalog>& catalogs,
            const Published<decision::ActivityIndex>& activity, const Clock& clock,
            const ServeOptions& options, const identity::IdentityService* identity = nullptr);

  // Budgets, caps, billing and explain (issue 4). `hooks` must outlive the handler; call before
  // serving. Without it decisions use no live state and nothing is billed.
  void SetDecisionHooks(const DecisionHooks* hooks);
  // Click redirect and serving counters (issue 15): a live key's ctaUrl becomes
  // {public_url}/v1/click/{token} and every live request is counted. `events` must outlive the
  // handler (null turns events off); call before serving, or once right after listening when
  // the port was chosen at start (SetPorts). `exposures` (may be null) records whom campaigns
  // with a conversion rule were shown to.
  void SetEvents(events::EventsService* events, std::string_view public_url,
                 events::ExposureRecorder* exposures = nullptr);
  // Invalid-traffic checks of live keys' served impressions (issue 18), taken by the next
  // SetEvents; `traffic.checks` must outlive the handler.
  void SetTraffic(TrafficGuard traffic) { traffic_ = traffic; }

  // Serves with `ports` from now on (what the setters above install one at a time). Ports
  // must outlive the handler. Thread-safe against Handle: requests already running finish with
  // the pipeline they started with.
  void SetPorts(AdPorts ports);

  // Answers, no-fills and impressions so far (Prometheus text, for /metrics).
  void AppendMetrics(MetricsText& m) const { metrics_.Append(m); }

  // Registers POST and OPTIONS for /v1/ads and /api/ads.
  void RegisterRoutes(http::Router& router) const;

  http::Response Handle(const http::Request& request, Variant variant) const;
  http::Response Preflight(const http::Request& request, Variant variant) const;

  // The pure core. `catalog`/`activity` null means serving is not ready: 503 (current) /
  // 500 (earlier).
  http::Response HandleWith(const http::Request& request, Variant variant,
                            const decision::Catalog* catalog,
                            const decision::ActivityIndex* activity, int64_t now_seconds,
                            decision::Rng& rng) const;
  // The same at a time in microseconds (decision ids carry milliseconds).
  http::Response HandleAt(const http::Request& request, Variant variant,
                          const decision::Catalog* catalog, const decision::ActivityIndex* activity,
                          int64_t now_micros, decision::Rng& rng) const;

 private:
  const Published<decision::Catalog>& catalogs_;
  const Published<decision::ActivityIndex>& activity_;
  const Clock& clock_;
  ServeOptions options_;
  mutable std::atomic<uint64_t> sample_counter_{0};
  mutable RateLimiter rate_limiter_;
  TrafficGuard traffic_;
  // The ports the setters made, and every pipeline published: a request may still run on a
  // pipeline replaced after start-up (SetEvents once the port is known), so none is freed
  // before the handler.
  std::unique_ptr<ServiceIdentity> identity_port_;
  std::vector<std::unique_ptr<LiveBudgets>> budget_ports_;
  std::vector<std::unique_ptr<EventsImpressions>> impression_ports_;
  std::vector<std::unique_ptr<AdPipeline>> pipelines_;
  std::atomic<const AdPipeline*> pipeline_{nullptr};  // release/acquire
  mutable AdMetrics metrics_;
};

}  // namespace adserver::serve
