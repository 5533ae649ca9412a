#include "admin/advertiser_events_admin.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/detail/event_text.h"
#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/records_json.h"
#include "common/check.h"
#include "ingest/activity_import.h"

namespace adserver::admin {
namespace {

using detail::DecisionIdText;
using detail::Json;
using detail::JsonResponse;
using detail::ParsePositiveInt;
using detail::ParseTimeOrDate;
using detail::PercentDecode;
using detail::PersonText;

using detail::kDefaultEventLimit;
using detail::kMaxEventLimit;

// The query string of both listings (`counts`: the counts route, which takes only the ids).
Result<store::AdvertiserEventQuery> ParseQuery(std::string_view query, bool counts) {
  store::AdvertiserEventQuery q;
  q.limit = kDefaultEventLimit;
  std::vector<FieldError> errors;
  const std::string allowed =
      counts ? "campaignId, communityId" : "campaignId, communityId, from, to, cursor, limit";
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq));
    std::string value = PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    bool id_param = name == "campaignId" || name == "communityId" || (!counts && name == "cursor");
    if (id_param) {
      std::optional<int64_t> id = ParsePositiveInt(value);
      if (!id) {
        errors.push_back({name, "must be a positive integer"});
      } else {
        (name == "campaignId"    ? q.campaign_id
         : name == "communityId" ? q.community_id
                                 : q.before_id) = id;
      }
    } else if (!counts && (name == "from" || name == "to")) {
      std::optional<int64_t> t = ParseTimeOrDate(value);
      if (!t) {
        errors.push_back({name,
                          "must be an RFC 3339 timestamp or a date, e.g. "
                          "2026-11-01T12:00:00Z or 2026-11-01"});
      } else {
        (name == "from" ? q.from : q.to) = t;
      }
    } else if (!counts && name == "limit") {
      std::optional<int64_t> limit = ParsePositiveInt(value);
      if (!limit || *limit > kMaxEventLimit) {
        errors.push_back({"limit", "must be 1 to " + std::to_string(kMaxEventLimit)});
      } else {
        q.limit = static_cast<int>(*limit);
      }
    } else {
      errors.push_back({name.substr(0, 64), "unknown query parameter (" + allowed + ")"});
    }
  }
  if (!errors.empty()) return InvalidArgumentError("invalid query", std::move(errors));
  return q;
}

Json EventToJson(const store::AdvertiserEventRecord& e) {
  return Json{{"id", std::to_string(e.id)},
              {"name", e.name},
              {"url", e.url ? Json(*e.url) : Json(nullptr)},
              {"communityId", std::to_string(e.community_id)},
              {"keyId", std::to_string(e.key_id)},
              {"decisionId", e.decision_id ? Json(DecisionIdText(*e.decision_id)) : Json(nullptr)},
              {"campaignId", e.campaign_id ? Json(std::to_string(*e.campaign_id)) : Json(nullptr)},
              {"person", PersonText(e.person)},
              {"createdAt", detail::TimeToJson(e.created_at)},
              {"status", e.invalid_reason.empty() ? "valid" : "invalid"},
              {"reason", e.invalid_reason.empty() ? Json(nullptr) : Json(e.invalid_reason)}};
}

}  // namespace

AdvertiserEventsAdminApi::AdvertiserEventsAdminApi(store::AdvertiserEventsStore& events,
                                                   store::InventoryStore& inventory,
                                                   const Authenticator& auth)
    : events_(events), inventory_(inventory), auth_(auth) {}

namespace {

// An advertiser user's listing is its community's; another community's campaignId (or an
// unknown one) is NotFound (issue 39: was 200 with no rows).
Status Scope(const Principal& caller, store::InventoryStore& inventory,
             store::AdvertiserEventQuery& query) {
  if (caller.IsOperator()) return OkStatus();
  if (query.campaign_id) {
    ADS_RETURN_IF_ERROR(CheckCampaignFilter(caller, inventory, *query.campaign_id));
  }
  if (query.community_id) {
    ADS_RETURN_IF_ERROR(CheckCommunity(caller, *query.community_id,
                                       "community " + std::to_string(*query.community_id)));
  }
  query.community_id = caller.community_id;
  return OkStatus();
}

}  // namespace

http::Response AdvertiserEventsAdminApi::Events(const Principal& caller,
                                                const http::Request& request) {
  Result<store::AdvertiserEventQuery> query = ParseQuery(request.query, /*counts=*/false);
  if (!query.ok()) return http::ErrorResponse(query.status());
  Status scoped = Scope(caller, inventory_, *query);
  if (!scoped.ok()) return http::ErrorResponse(scoped);
  // One more row than asked tells whether a next page exists.
  store::AdvertiserEventQuery probe = *query;
  probe.limit = query->limit + 1;
  Result<std::vector<store::AdvertiserEventRecord>> rows = events_.List(probe);
  if (!rows.ok()) return http::ErrorResponse(rows.status());
  bool more = rows->size() > static_cast<size_t>(query->limit);
  if (more) rows->pop_back();
  Json events = Json::array();
  for (const store::AdvertiserEventRecord& e : *rows) events.push_back(EventToJson(e));
  Json next = more ? Json(std::to_string(rows->back().id)) : Json(nullptr);
  return JsonResponse(200, Json{{"events", std::move(events)}, {"nextCursor", std::move(next)}});
}

http::Response AdvertiserEventsAdminApi::Counts(const Principal& caller,
                                                const http::Request& request) {
  Result<store::AdvertiserEventQuery> query = ParseQuery(request.query, /*counts=*/true);
  if (!query.ok()) return http::ErrorResponse(query.status());
  Status scoped = Scope(caller, inventory_, *query);
  if (!scoped.ok()) return http::ErrorResponse(scoped);
  Result<std::vector<store::AdvertiserEventCount>> counts =
      events_.Counts(query->campaign_id, query->community_id);
  if (!counts.ok()) return http::ErrorResponse(counts.status());
  Result<std::vector<store::AdvertiserEventCount>> invalid =
      events_.InvalidCounts(query->campaign_id, query->community_id);
  if (!invalid.ok()) return http::ErrorResponse(invalid.status());
  Json out = Json::array();
  for (const store::AdvertiserEventCount& c : *counts) {
    out.push_back(Json{{"name", c.name}, {"count", c.count}});
  }
  Json by_reason = Json::object();
  for (const store::AdvertiserEventCount& c : *invalid) by_reason[c.name] = c.count;
  return JsonResponse(200, Json{{"counts", std::move(out)}, {"invalidByReason", by_reason}});
}

void AdvertiserEventsAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route = detail::GuardedRoute(auth_, 0);
  router.Add(
      http::Method::kGet, "/admin/v1/events",
      [this](const http::Request& request) {
        return detail::Guarded(auth_, Audience::kAdvertiser, request,
                               [&](const Principal& caller) { return Events(caller, request); });
      },
      route);
  router.Add(
      http::Method::kGet, "/admin/v1/events/counts",
      [this](const http::Request& request) {
        return detail::Guarded(auth_, Audience::kAdvertiser, request,
                               [&](const Principal& caller) { return Counts(caller, request); });
      },
      route);
}

}  // namespace adserver::admin
