#pragma once

#include "admin/authenticator.h"
#include "http/router.h"
#include "store/events_store.h"
#include "store/store.h"

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
//                                          CTR and CVR since creation, with breakdowns
// Thread-safe.
class EventsAdminApi {
 public:
  // Both stores and auth must outlive this object.
  EventsAdminApi(store::EventsStore& events, store::Store& inventory, const Authenticator& auth);
  void RegisterRoutes(http::Router& router);

 private:
  http::Response Clicks(const Principal& caller, const http::Request& request);
  http::Response Conversions(const Principal& caller, const http::Request& request);
  http::Response CampaignStats(const Principal& caller, const http::Request& request);
  // Narrows `query` to the caller's tenant: a publisher's own clicks, an advertiser's own
  // campaign (campaignId), or without one every campaign of its community. NotFound for
  // another tenant's id.
  Status Scope(const Principal& caller, store::EventQuery& query);

  store::EventsStore& events_;
  store::Store& inventory_;
  const Authenticator& auth_;
};

}  // namespace adserver::admin
