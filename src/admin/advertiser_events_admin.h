#pragma once

#include "admin/authenticator.h"
#include "http/router.h"
#include "store/advertiser_events_store.h"
#include "store/inventory_store.h"

namespace adserver::admin {

// Read-back of advertiser events (POST /v1/events), part of the admin API (same
// authentication, worker pool, error shape; advertiser users see their community's only):
//   GET /admin/v1/events          events newest first, filtered by campaignId, communityId,
//                                 from, to (RFC 3339 or YYYY-MM-DD; `to` exclusive), paginated
//                                 by `cursor` (nextCursor of the previous page) and `limit`
//                                 (1..1000, default 100)
//   GET /admin/v1/events/counts   {"counts":[{"name","count"}]} since the first event, by
//                                 campaignId and/or communityId (counts outlive the raw rows'
//                                 90-day retention)
// Thread-safe.
class AdvertiserEventsAdminApi {
 public:
  // Every argument must outlive this object; `inventory` finds a campaignId filter's community.
  AdvertiserEventsAdminApi(store::AdvertiserEventsStore& events, store::InventoryStore& inventory,
                           const Authenticator& auth);
  void RegisterRoutes(http::Router& router);

 private:
  http::Response Events(const Principal& caller, const http::Request& request);
  http::Response Counts(const Principal& caller, const http::Request& request);

  store::AdvertiserEventsStore& events_;
  store::InventoryStore& inventory_;
  const Authenticator& auth_;
};

}  // namespace adserver::admin
