#include "serve/click_handler.h"

#include <exception>
#include <utility>

#include "common/log.h"
#include "events/click_token.h"
#include "events/click_url.h"

namespace adserver::serve {
namespace {

http::Response Redirect(const std::string& location) {
  http::Response response;
  response.status = 302;
  response.SetHeader("Location", location);
  response.SetHeader("Cache-Control", "no-store");
  // The advertiser learns the click from spclid; our URL (and its token) stays ours.
  response.SetHeader("Referrer-Policy", "no-referrer");
  return response;
}

http::Response BadToken() {
  return http::ErrorResponse(
      400, "Invalid click token",
      {{"token", "not a click token issued by this server (forged, truncated or altered)"}});
}

}  // namespace

ClickHandler::ClickHandler(const Published<decision::Catalog>& catalogs,
                           events::EventsService& events, const Clock& clock, AdUrlLookup lookup)
    : catalogs_(catalogs), events_(events), clock_(clock), lookup_(std::move(lookup)) {}

void ClickHandler::RegisterRoutes(http::Router& router) const {
  http::RouteOptions route{.dispatch = http::Dispatch::kWorker, .max_body_bytes = 0};
  for (http::Method method : {http::Method::kGet, http::Method::kHead}) {
    router.Add(
        method, "/v1/click/{token}",
        [this](const http::Request& request) {
          try {
            return Handle(request);
          } catch (const std::exception& e) {
            ADS_LOG(error, "click failed", "error", e.what());
            return http::ErrorResponse(500, "Internal server error");
          }
        },
        route);
  }
}

http::Response ClickHandler::Handle(const http::Request& request) const {
  std::optional<events::ClickClaims> claims =
      events::OpenClick(events_.click_keys(), request.Param("token"));
  if (!claims) return BadToken();
  std::optional<std::string> cta_url;
  if (auto catalog = catalogs_.Current()) {
    if (const decision::Ad* ad = catalog->FindAd(claims->ad_id)) cta_url = ad->cta_url;
  }
  if (!cta_url && lookup_) cta_url = lookup_(claims->ad_id);
  if (!cta_url) {
    return http::ErrorResponse(404, "Ad not found",
                               {{"token", "the ad this click is for no longer exists"}});
  }
  std::optional<std::string> location = events::AddSpclid(*cta_url, claims->decision);
  if (!location) {
    return http::ErrorResponse(404, "Ad has no http(s) destination",
                               {{"ctaUrl", "the ad's ctaUrl is not an absolute http(s) URL"}});
  }
  // Only GET is a click: HEAD comes from previews and prefetchers.
  if (request.method != http::Method::kGet) return Redirect(*location);

  int64_t now = clock_.NowSeconds();
  bool expired = now - claims->served_at > events_.options().click_ttl_seconds;
  store::ClickRecord click{
      .decision_id = claims->decision.bytes,
      .publisher_id = claims->publisher_id,
      .ad_unit_id = std::move(claims->ad_unit_id),
      .campaign_id = claims->campaign_id,
      .ad_id = claims->ad_id,
      .arm = std::move(claims->arm),
      .served_at = claims->served_at,
      .clicked_at = now,
      .price = claims->price,
      .person = claims->person,
      .earlier_variant = claims->earlier_variant,
      .status = expired ? store::ClickStatus::kExpired : store::ClickStatus::kBilled,
  };
  Result<store::ClickRecord> recorded = events_.RecordClick(std::move(click));
  if (!recorded.ok()) {
    http::Response response = http::ErrorResponse(503, "Click not recorded, try again",
                                                   {{"token", recorded.status().message()}});
    response.SetHeader("Retry-After", "1");
    return response;
  }
  return Redirect(*location);
}

}  // namespace adserver::serve
