#include "serve/ad_metrics.h"

#include <string_view>

namespace adserver::serve {

namespace {
constexpr std::string_view kVariants[] = {"current", "earlier"};
constexpr std::string_view kOutcomeNames[] = {"fill", "no_fill", "client_error", "server_error"};
constexpr std::string_view kReasonNames[] = {"other", "no_identity", "no_eligible_ad"};
}  // namespace

void AdMetrics::CountAnswer(Variant variant, int status, NoFillReason reason) {
  const bool earlier = variant == Variant::kEarlier;
  size_t outcome = status == 200                                  ? 0
                   : status == 204 || (earlier && status == 404)  ? 1
                   : status < 500                                 ? 2
                                                                  : 3;
  const size_t v = earlier ? 1 : 0;
  counters_.Add(v * kOutcomes + outcome);
  if (outcome == 1) counters_.Add(kReasonBase + v * kReasons + static_cast<size_t>(reason));
}

void AdMetrics::Append(MetricsText& m) const {
  m.Family("adserver_ad_requests_total", "counter",
           "Ad requests by variant (current /v1/ads, earlier /api/ads) and outcome.");
  for (size_t v = 0; v < 2; ++v) {
    for (size_t o = 0; o < kOutcomes; ++o) {
      m.Sample("adserver_ad_requests_total", {{"variant", kVariants[v]}, {"outcome", kOutcomeNames[o]}},
               counters_.Sum(v * kOutcomes + o));
    }
  }
  m.Family("adserver_ad_no_fills_total", "counter", "Ad requests answered without an ad, by reason.");
  for (size_t v = 0; v < 2; ++v) {
    for (size_t r = 0; r < kReasons; ++r) {
      m.Sample("adserver_ad_no_fills_total", {{"variant", kVariants[v]}, {"reason", kReasonNames[r]}},
               counters_.Sum(kReasonBase + v * kReasons + r));
    }
  }
  m.Family("adserver_impressions_total", "counter",
           "Live keys' served impressions by validity: valid, or invalid with the reason "
           "(invalid ones bill nothing).");
  for (size_t i = 0; i < events::kInvalidReasons; ++i) {
    using events::InvalidReason;
    auto reason = static_cast<InvalidReason>(i);
    // The checks an impression gets (serve/ad_handler.cc CheckImpression).
    if (reason != InvalidReason::kNone && reason != InvalidReason::kMissingUserAgent &&
        reason != InvalidReason::kCrawler && reason != InvalidReason::kBlockedIp &&
        reason != InvalidReason::kWalletRate && reason != InvalidReason::kWalletPublishers) {
      continue;
    }
    m.Sample("adserver_impressions_total",
             {{"validity", i == 0 ? "valid" : "invalid"},
              {"reason", i == 0 ? std::string_view("") : events::InvalidReasonName(reason)}},
             counters_.Sum(kImpressionBase + i));
  }
}

}  // namespace adserver::serve
