#include "admin/events_admin.h"

#include <charconv>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admin/detail/event_text.h"
#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/payouts.h"
#include "admin/detail/records_json.h"
#include "common/address.h"
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

// The listing's query string; errors name the parameter.
Result<store::EventQuery> ParseEventQuery(std::string_view query) {
  store::EventQuery q;
  q.limit = kDefaultEventLimit;
  std::vector<FieldError> errors;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string value = PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (name == "campaignId" || name == "publisherId" || name == "cursor") {
      std::optional<int64_t> id = ParsePositiveInt(value);
      if (!id) {
        errors.push_back({std::string(name), "must be a positive integer"});
      } else if (name == "campaignId") {
        q.campaign_id = id;
      } else if (name == "publisherId") {
        q.publisher_id = id;
      } else {
        q.before_id = id;
      }
    } else if (name == "from" || name == "to") {
      std::optional<int64_t> t = ParseTimeOrDate(value);
      if (!t) {
        errors.push_back({std::string(name),
                          "must be an RFC 3339 timestamp or a date, e.g. 2026-11-01T12:00:00Z or "
                          "2026-11-01"});
      } else {
        (name == "from" ? q.from : q.to) = t;
      }
    } else if (name == "limit") {
      std::optional<int64_t> limit = ParsePositiveInt(value);
      if (!limit || *limit > kMaxEventLimit) {
        errors.push_back({"limit", "must be 1 to " + std::to_string(kMaxEventLimit)});
      } else {
        q.limit = static_cast<int>(*limit);
      }
    } else {
      errors.push_back({std::string(name.substr(0, 64)),
                        "unknown query parameter (campaignId, publisherId, from, to, cursor, "
                        "limit)"});
    }
  }
  if (!errors.empty()) return InvalidArgumentError("invalid query", std::move(errors));
  return q;
}

// What a caller sees of billed events (issue 39): advertisers the prices they paid, publishers
// what they earned, operators both and the raw wallet (others get the person digest).
struct EventView {
  bool price = true;
  bool wallet = true;
  bool earnings = true;
  std::unordered_map<store::Id, reports::Payout> payouts;  // by publisher, for `earnings`

  Json Price(Micros price) const {
    return this->price ? detail::MoneyToJson(price) : Json(nullptr);
  }
  // The publisher's share of one click's or conversion's price (a CPM payout earns per
  // impression, so nothing here).
  Json Earnings(store::Id publisher, Micros price) const {
    if (!earnings) return nullptr;
    auto it = payouts.find(publisher);
    return detail::MoneyToJson(it == payouts.end() ? 0 : reports::Earnings(it->second, 0, price));
  }
};

// The caller's view of events.
Result<EventView> ViewOf(const Principal& caller, store::InventoryStore& inventory) {
  EventView view;
  if (caller.IsOperator()) {
    ADS_ASSIGN_OR_RETURN(view.payouts, detail::LoadPayouts(inventory));
  } else if (caller.role == store::Role::kPublisher) {
    ADS_CHECK(caller.publisher_id.has_value()) << "publisher principal without a publisher";
    ADS_ASSIGN_OR_RETURN(store::PublisherRecord publisher,
                         inventory.GetPublisher(*caller.publisher_id));
    view.payouts[publisher.id] = detail::PayoutOf(publisher);
    view.price = false;
    view.wallet = false;
  } else {
    view.wallet = false;
    view.earnings = false;
  }
  return view;
}

Json ClickToJson(const store::ClickRecord& c, const EventView& view) {
  return Json{{"id", std::to_string(c.id)},
              {"decisionId", DecisionIdText(c.decision_id)},
              {"status", std::string(store::ClickStatusName(c.status))},
              {"billed", c.status == store::ClickStatus::kBilled},
              // Why it was not billed: the status itself, or an invalid click's failed check.
              {"reason", c.status == store::ClickStatus::kBilled ? Json(nullptr)
                         : c.status == store::ClickStatus::kInvalid
                             ? Json(c.reason)
                             : Json(std::string(store::ClickStatusName(c.status)))},
              {"ip", c.ip.empty() ? Json(nullptr) : Json(c.ip)},
              {"publisherId", std::to_string(c.publisher_id)},
              {"adUnitId", c.ad_unit_id.empty() ? Json(nullptr) : Json(c.ad_unit_id)},
              {"campaignId", std::to_string(c.campaign_id)},
              {"adId", std::to_string(c.ad_id)},
              {"arm", c.arm},
              {"variant", c.earlier_variant ? "earlier" : "current"},
              {"servedAt", detail::TimeToJson(c.served_at)},
              {"clickedAt", detail::TimeToJson(c.clicked_at)},
              {"price", view.Price(c.price)},
              {"earnings", view.Earnings(c.publisher_id, c.price)},
              {"person", PersonText(c.person)}};
}

std::string HexText(std::span<const uint8_t> bytes) { return "0x" + detail::Hex(bytes); }

Json ConversionToJson(const store::ConversionRecord& c, const EventView& view) {
  return Json{
      {"id", std::to_string(c.id)},
      {"status", std::string(store::ConversionStatusName(c.status))},
      {"billed", c.status == store::ConversionStatus::kBilled},
      // Why it is not billed: the status itself (reorged, over_budget).
      {"reason", c.status == store::ConversionStatus::kBilled
                     ? Json(nullptr)
                     : Json(std::string(store::ConversionStatusName(c.status)))},
      {"campaignId", std::to_string(c.campaign_id)},
      {"adId", std::to_string(c.ad_id)},
      {"publisherId", std::to_string(c.publisher_id)},
      {"adUnitId", c.ad_unit_id.empty() ? Json(nullptr) : Json(c.ad_unit_id)},
      {"arm", c.arm},
      {"decisionId", DecisionIdText(c.decision_id)},
      {"wallet", view.wallet ? Json(FormatAddress(c.wallet)) : Json(nullptr)},
      {"person", PersonText(c.person)},
      {"chainId", c.chain_id},
      {"txHash", HexText(c.tx_hash)},
      {"logIndex", c.log_index >= 0 ? Json(c.log_index) : Json(nullptr)},
      {"blockNumber", c.block_number},
      {"blockHash", HexText(c.block_hash)},
      {"blockTime", detail::TimeToJson(c.block_time)},
      {"confirmed", c.confirmed},
      {"touch", c.click_touch ? "click" : "view"},
      {"touchedAt", detail::TimeToJson(c.touched_at)},
      {"secondsSinceTouch", c.block_time - c.touched_at},
      {"price", view.Price(c.price)},
      // What the publisher earns of it: nothing for a conversion that is not billed.
      {"earnings",
       view.Earnings(c.publisher_id, c.status == store::ConversionStatus::kBilled ? c.price : 0)},
      {"recordedAt", detail::TimeToJson(c.recorded_at)},
      {"revertedAt", c.reverted_at ? detail::TimeToJson(*c.reverted_at) : Json(nullptr)}};
}

double Ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

}  // namespace

EventsAdminApi::EventsAdminApi(store::EventsStore& events, store::InventoryStore& inventory,
                               const Authenticator& auth)
    : events_(events), inventory_(inventory), auth_(auth) {}

Status EventsAdminApi::Scope(const Principal& caller, store::EventQuery& query) {
  if (caller.IsOperator()) return OkStatus();
  if (caller.role == store::Role::kPublisher) {
    if (query.publisher_id && query.publisher_id != caller.publisher_id) {
      return NotFoundError("publisher " + std::to_string(*query.publisher_id) + " not found");
    }
    query.publisher_id = caller.publisher_id;
    return OkStatus();
  }
  if (!query.campaign_id) {
    // Every campaign of the advertiser's community.
    query.community_id = caller.community_id;
    ADS_CHECK(query.community_id.has_value()) << "advertiser principal without a community";
    return OkStatus();
  }
  return CheckCampaignFilter(caller, inventory_, *query.campaign_id);
}

http::Response EventsAdminApi::Clicks(const Principal& caller, const http::Request& request) {
  Result<store::EventQuery> query = ParseEventQuery(request.query);
  if (!query.ok()) return http::ErrorResponse(query.status());
  Status scoped = Scope(caller, *query);
  if (!scoped.ok()) return http::ErrorResponse(scoped);
  // One more row than asked tells whether a next page exists.
  store::EventQuery probe = *query;
  probe.limit = query->limit + 1;
  Result<std::vector<store::ClickRecord>> rows = events_.ListClicks(probe);
  if (!rows.ok()) return http::ErrorResponse(rows.status());
  bool more = rows->size() > static_cast<size_t>(query->limit);
  if (more) rows->pop_back();
  Result<EventView> view = ViewOf(caller, inventory_);
  if (!view.ok()) return http::ErrorResponse(view.status());
  Json clicks = Json::array();
  for (const store::ClickRecord& c : *rows) clicks.push_back(ClickToJson(c, *view));
  Json next = more ? Json(std::to_string(rows->back().id)) : Json(nullptr);
  return JsonResponse(200, Json{{"clicks", std::move(clicks)}, {"nextCursor", std::move(next)}});
}

http::Response EventsAdminApi::Conversions(const Principal& caller, const http::Request& request) {
  Result<store::EventQuery> query = ParseEventQuery(request.query);
  if (!query.ok()) return http::ErrorResponse(query.status());
  Status scoped = Scope(caller, *query);
  if (!scoped.ok()) return http::ErrorResponse(scoped);
  store::EventQuery probe = *query;
  probe.limit = query->limit + 1;
  Result<std::vector<store::ConversionRecord>> rows = events_.ListConversions(probe);
  if (!rows.ok()) return http::ErrorResponse(rows.status());
  bool more = rows->size() > static_cast<size_t>(query->limit);
  if (more) rows->pop_back();
  Result<EventView> view = ViewOf(caller, inventory_);
  if (!view.ok()) return http::ErrorResponse(view.status());
  Json conversions = Json::array();
  for (const store::ConversionRecord& c : *rows) {
    conversions.push_back(ConversionToJson(c, *view));
  }
  Json next = more ? Json(std::to_string(rows->back().id)) : Json(nullptr);
  return JsonResponse(
      200, Json{{"conversions", std::move(conversions)}, {"nextCursor", std::move(next)}});
}

namespace {

Json EstimateJson(const std::optional<RateEstimate>& e) {
  if (!e) return nullptr;
  return Json{{"rate", e->rate},
              {"mean", e->mean},
              {"low", e->low},
              {"high", e->high},
              {"events", e->events},
              {"impressions", e->impressions},
              {"priorMean", e->prior_mean},
              {"priorWeight", e->prior_weight}};
}

}  // namespace

http::Response EventsAdminApi::CampaignStats(const Principal& caller,
                                             const http::Request& request) {
  std::optional<int64_t> id = ParsePositiveInt(request.Param("id"));
  if (!id) return http::ErrorResponse(InvalidFieldError("id", "must be a positive integer"));
  Result<store::CampaignRecord> campaign = inventory_.GetCampaign(*id);
  if (!campaign.ok()) return http::ErrorResponse(campaign.status());
  Status owned = CheckCommunity(caller, campaign->community_id, "campaign " + std::to_string(*id));
  if (!owned.ok()) return http::ErrorResponse(owned);
  Result<store::CampaignEventTotals> t = events_.CampaignTotals(*id);
  if (!t.ok()) return http::ErrorResponse(t.status());
  Micros spend = t->impression_spend + t->click_spend + t->conversion_spend;
  return JsonResponse(
      200,
      Json{{"campaignId", std::to_string(*id)},
           {"impressions", t->impressions},
           {"clicks", t->clicks},
           {"conversions", t->conversions},
           {"spend", detail::MoneyToJson(spend)},
           {"ctr", Ratio(t->clicks, t->impressions)},
           {"cvr", Ratio(t->conversions, t->impressions)},
           {"ecpm", detail::MoneyToJson(t->impressions > 0 ? spend * 1000 / t->impressions : 0)},
           {"spendBreakdown", Json{{"impressions", detail::MoneyToJson(t->impression_spend)},
                                   {"clicks", detail::MoneyToJson(t->click_spend)},
                                   {"conversions", detail::MoneyToJson(t->conversion_spend)}}},
           {"clicksByStatus", Json{{"billed", t->clicks},
                                   {"duplicate", t->duplicate_clicks},
                                   {"expired", t->expired_clicks},
                                   {"invalid", t->invalid_clicks}}},
           {"invalidClicks", t->invalid_clicks},
           {"invalidClicksByReason", Json(t->invalid_clicks_by_reason)},
           {"invalidImpressions", t->invalid_impressions},
           {"invalidImpressionsByReason", Json(t->invalid_impressions_by_reason)},
           {"conversionsByTouch",
            Json{{"click", t->click_conversions}, {"view", t->view_conversions}}},
           {"reorgedConversions", t->reorged_conversions},
           {"overBudgetConversions", t->over_budget_conversions},
           {"estimate", EstimateJson(estimator_ ? estimator_(*id) : std::nullopt)}});
}

void EventsAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route = detail::GuardedRoute(auth_, 0);
  using Member = http::Response (EventsAdminApi::*)(const Principal&, const http::Request&);
  struct Spec {
    const char* pattern;
    Member handler;
    Audience audience;
  };
  static constexpr Spec kSpecs[] = {
      {"/admin/v1/clicks", &EventsAdminApi::Clicks, Audience::kAnyUser},
      {"/admin/v1/conversions", &EventsAdminApi::Conversions, Audience::kAnyUser},
      {"/admin/v1/campaigns/{id}/stats", &EventsAdminApi::CampaignStats, Audience::kAdvertiser},
  };
  for (const Spec& spec : kSpecs) {
    router.Add(
        http::Method::kGet, spec.pattern,
        [this, spec](const http::Request& request) {
          return detail::Guarded(auth_, spec.audience, request, [&](const Principal& caller) {
            return (this->*spec.handler)(caller, request);
          });
        },
        route);
  }
}

}  // namespace adserver::admin
