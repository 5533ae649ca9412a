#pragma once

// A click on a sealed ad as the click redirect saw it (GET /v1/click/{token}, issue 15), and the
// row it is stored as. The redirect hands a Click to EventsService::RecordClickAsync; what a
// click is billed as is decided here and by the store, not by the handler.

#include <cstdint>
#include <optional>

#include "common/ip_address.h"
#include "events/click_token.h"
#include "events/traffic_checks.h"
#include "store/events_store.h"

namespace adserver::events {

struct Click {
  ClickClaims claims;      // what the token sealed
  int64_t clicked_at = 0;  // Unix seconds
  // Older than events.click_ttl_seconds: recorded as expired, neither billed nor counted.
  bool expired = false;
  // The failed invalid-traffic check (kNone: valid); not looked at when expired.
  InvalidReason invalid = InvalidReason::kNone;
  std::optional<IpAddress> ip;  // the client's address; unknown when not set
};

// The row `click` is stored as: billed unless it expired or failed a check (the store then
// turns a valid click on a decision that already has a billed one into a duplicate, and keeps
// the price of billed clicks only), the address truncated to /24 or /48.
store::ClickRecord ClickRecordOf(Click click);

}  // namespace adserver::events
