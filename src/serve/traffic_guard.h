#pragma once

#include "events/traffic_checks.h"
#include "http/client_ip.h"

namespace adserver::serve {

// The invalid-traffic checks a handler runs; a null `checks` runs none (every valid click,
// event and impression is billed, as before issue 18).
struct TrafficGuard {
  events::TrafficChecks* checks = nullptr;
  const http::TrustedProxies* proxies = nullptr;  // null: the socket peer is the client
};

}  // namespace adserver::serve
