#include "serve/click_handler.h"

#include <exception>
#include <future>
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

// The invalid-traffic verdict of a click that is neither expired nor (yet known as) a duplicate.
events::InvalidReason CheckTraffic(const TrafficGuard& traffic, const http::Request& request,
                                   const events::ClickClaims& claims,
                                   const std::optional<IpAddress>& ip, int64_t now_ms,
                                   const decision::Catalog* catalog) {
  if (traffic.checks == nullptr) return events::InvalidReason::kNone;
  events::ClickFacts facts{.user_agent = request.Header("User-Agent"),
                           .ip = ip,
                           .person = claims.person,
                           .clicked_at_ms = now_ms,
                           .referer = request.Header("Referer")};
  // The publisher's origins matter only when the click names its page; publishers are few,
  // so a scan (no index by id in the catalog) is cheap next to the click's commit.
  if (catalog != nullptr && !facts.referer.empty()) {
    for (const decision::Publisher& p : catalog->publishers) {
      if (p.id == claims.publisher_id) facts.allowed_origins = p.allowed_origins;
    }
  }
  if (claims.serve_context) {
    facts.served_at_ms = claims.served_at * 1000 + claims.served_at_millis;
    facts.serve_user_agent_hash = claims.user_agent_hash;
    facts.invalid_impression = claims.serve_invalid != 0;
  }
  return traffic.checks->CheckClick(facts);
}

}  // namespace

ClickHandler::ClickHandler(const Published<decision::Catalog>& catalogs,
                           events::EventsService& events, const Clock& clock, AdUrlLookup lookup,
                           TrafficGuard traffic)
    : catalogs_(catalogs),
      events_(events),
      clock_(clock),
      lookup_(std::move(lookup)),
      traffic_(traffic) {}

void ClickHandler::RegisterRoutes(http::Router& router) const {
  router.AddDeferred(http::Method::kGet, "/v1/click/{token}",
                     [this](const http::Request& request, http::Responder respond) {
                       try {
                         HandleDeferred(request, std::move(respond));
                       } catch (const std::exception& e) {
                         // Nothing was queued when this throws (RecordClickAsync does not).
                         ADS_LOG(error, "click failed", "error", e.what());
                       }
                     },
                     {.max_body_bytes = 0});
  router.Add(http::Method::kHead, "/v1/click/{token}",
             [this](const http::Request& request) {
               try {
                 return Handle(request);
               } catch (const std::exception& e) {
                 ADS_LOG(error, "click failed", "error", e.what());
                 return http::ErrorResponse(500, "Internal server error");
               }
             },
             {.dispatch = http::Dispatch::kWorker, .max_body_bytes = 0});
}

http::Response ClickHandler::Handle(const http::Request& request) const {
  std::promise<http::Response> answer;
  std::future<http::Response> future = answer.get_future();
  HandleDeferred(request, [&answer](http::Response r) { answer.set_value(std::move(r)); });
  return future.get();
}

void ClickHandler::HandleDeferred(const http::Request& request, http::Responder respond) const {
  std::optional<events::ClickClaims> claims =
      events::OpenClick(events_.click_keys(), request.Param("token"));
  if (!claims) return respond(BadToken());
  // The catalog has every active ad; an ad paused since is read from the store, off the event
  // loop: on the click writer's thread once the click is committed (or here for HEAD, which
  // runs on a worker).
  std::optional<std::string> cta_url;
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (catalog != nullptr) {
    if (const decision::Ad* ad = catalog->FindAd(claims->ad_id)) cta_url = ad->cta_url;
  }
  int64_t ad_id = claims->ad_id;
  events::DecisionId decision = claims->decision;
  auto finish = [this, ad_id, decision, respond](std::optional<std::string> url) {
    if (!url && lookup_) url = lookup_(ad_id);
    if (!url) {
      return respond(http::ErrorResponse(404, "Ad not found",
                                         {{"token", "the ad this click is for no longer exists"}}));
    }
    std::optional<std::string> location = events::AddSpclid(*url, decision);
    if (!location) {
      return respond(
          http::ErrorResponse(404, "Ad has no http(s) destination",
                              {{"ctaUrl", "the ad's ctaUrl is not an absolute http(s) URL"}}));
    }
    respond(Redirect(*location));
  };
  // Only GET is a click: HEAD comes from previews and prefetchers.
  if (request.method != http::Method::kGet) return finish(std::move(cta_url));

  const int64_t now_ms = clock_.NowMicros() / 1000;
  const int64_t now = now_ms / 1000;
  bool expired = now - claims->served_at > events_.options().click_ttl_seconds;
  std::optional<IpAddress> ip = ParseIp(request.remote_ip);
  if (traffic_.proxies != nullptr) ip = http::ClientIp(request, *traffic_.proxies);
  events::InvalidReason reason =
      expired ? events::InvalidReason::kNone
              : CheckTraffic(traffic_, request, *claims, ip, now_ms, catalog.get());
  events::Click click{.claims = std::move(*claims),
                      .clicked_at = now,
                      .expired = expired,
                      .invalid = reason,
                      .ip = ip};
  // Answered once the click is durable (on the writer's thread).
  events_.RecordClickAsync(std::move(click), [respond, finish, cta_url = std::move(cta_url)](
                                                 Status recorded) mutable {
    if (!recorded.ok()) {
      http::Response response = http::ErrorResponse(503, "Click not recorded, try again",
                                                    {{"token", recorded.message()}});
      response.SetHeader("Retry-After", "1");
      return respond(std::move(response));
    }
    finish(std::move(cta_url));
  });
}

}  // namespace adserver::serve
