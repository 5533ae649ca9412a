#pragma once

#include <functional>
#include <optional>

#include "admin/authenticator.h"
#include "http/router.h"
#include "store/events_store.h"
#include "store/inventory_store.h"

namespace adserver::admin {

// Read-back of events, part of the admin API (same authentication and scope rules, worker pool,
// error shape):
//   GET /admin/v1/clicks                   clicks newest first, billed, duplicate and expired
//                                          alike, filtered by campaignId, publisherId, from,
//                                          to (RFC 3339 or YYYY-MM-DD), paginated by `cursor`
//                                          (nextCursor of the previous page) and `limit`
//                                          (1..1000, default 100)
//   GET /admin/v1/conversions              onchain conversions newest first (billed and reorged),
//                                          same filters (from/to on the block time) and paging
//   GET /admin/v1/campaigns/{id}/stats     impressions, billable clicks, conversions, spend,
//                                          CTR and CVR since creation, with breakdowns, and
//                                          the decision engine's estimate of the CTR (CPC) or
//                                          CVR (CPA) with its 95 % interval (issue 36)
// Thread-safe.
// The decision engine's current belief about a CPC/CPA campaign's rate (issue 36).
struct RateEstimate {
  const char* rate = "ctr";  // "ctr" (CPC) or "cvr" (CPA)
  double mean = 0;
  double low = 0;  // 95 % credible interval
  double high = 0;
  double events = 0;       // the (effective) clicks or conversions behind it
  double impressions = 0;  // the (effective) impressions behind it
  double prior_mean = 0;
  double prior_weight = 0;
};
// nullopt: a CPM campaign, or one not being served (not in the catalog).
using RateEstimator = std::function<std::optional<RateEstimate>(int64_t campaign_id)>;

class EventsAdminApi {
 public:
  // Both stores and auth must outlive this object.
  EventsAdminApi(store::EventsStore& events, store::InventoryStore& inventory,
                 const Authenticator& auth);
  void RegisterRoutes(http::Router& router);
  // Where the stats' `estimate` comes from (app: the live decision state). Unset: null. Call
  // before serving.
  void SetRateEstimator(RateEstimator estimator) { estimator_ = std::move(estimator); }

 private:
  http::Response Clicks(const Principal& caller, const http::Request& request);
  http::Response Conversions(const Principal& caller, const http::Request& request);
  http::Response CampaignStats(const Principal& caller, const http::Request& request);
  // Narrows `query` to the caller's tenant: a publisher's own clicks, an advertiser's own
  // campaign (campaignId), or without one every campaign of its community. NotFound for
  // another tenant's id.
  Status Scope(const Principal& caller, store::EventQuery& query);

  store::EventsStore& events_;
  store::InventoryStore& inventory_;
  const Authenticator& auth_;
  RateEstimator estimator_;
};

}  // namespace adserver::admin
