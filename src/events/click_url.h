#pragma once

// Where a click lands: the ad's own ctaUrl with `spclid=<decision id>` added to its query.

#include <optional>
#include <string>
#include <string_view>

#include "events/decision_id.h"

namespace adserver::events {

// `cta_url` with spclid=<decision> in its query: existing parameters and the fragment are kept
// as they are (byte for byte); a spclid already in the URL is replaced, not repeated. nullopt
// unless the URL is absolute http or https (scheme in any case) with a host, and free of
// spaces and control characters (a Location header must not carry them).
std::optional<std::string> AddSpclid(std::string_view cta_url, const DecisionId& decision);

}  // namespace adserver::events
