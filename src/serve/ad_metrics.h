#pragma once

// Counters of the ad routes for /metrics (issue 19): answers by variant and outcome, no-fills by
// reason, live keys' served impressions by validity. Per thread (common/thread_counters.h): the
// ad path adds with a relaxed load and store on its own cache line; a scrape sums.

#include <cstddef>
#include <cstdint>

#include "common/metrics_text.h"
#include "common/thread_counters.h"
#include "serve/ad_request.h"
#include "events/traffic_checks.h"

namespace adserver::serve {

enum class NoFillReason : uint8_t {
  kNone,
  kNoIdentity,    // no wallet in the request and none from the cookie or localId
  kNoEligibleAd,  // the decision found no ad (targeting, budgets, caps, blocks, formats)
};

class AdMetrics {
 public:
  // One answer of /v1/ads (kCurrent) or /api/ads: 200 fill; 204 (or the earlier variant's 404)
  // no fill with `reason`; other 4xx client error; 5xx server error.
  void CountAnswer(Variant variant, int status, NoFillReason reason);
  // A live key's served impression (a fill) and its validity (kNone = valid).
  void CountImpression(events::InvalidReason invalid) {
    counters_.Add(kImpressionBase + static_cast<size_t>(invalid));
  }
  void Append(MetricsText& m) const;

 private:
  static constexpr size_t kOutcomes = 4;  // fill, no_fill, client_error, server_error
  static constexpr size_t kReasons = 3;   // NoFillReason
  static constexpr size_t kReasonBase = 2 * kOutcomes;
  static constexpr size_t kImpressionBase = kReasonBase + 2 * kReasons;
  static constexpr size_t kCounters = kImpressionBase + events::kInvalidReasons;
  ThreadCounters<kCounters> counters_;
};

}  // namespace adserver::serve
