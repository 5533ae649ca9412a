#pragma once

#include "admin/admin_api.h"
#include "common/crypto.h"
#include "http/router.h"
#include "store/advertiser_events_store.h"

namespace adserver::admin {

// Read-back of advertiser events (POST /v1/events), part of the admin API (same bearer
// token, worker pool, error shape):
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
  // `events` must outlive this object.
  AdvertiserEventsAdminApi(store::AdvertiserEventsStore& events, AdminOptions options);
  void RegisterRoutes(http::Router& router);

 private:
  http::Response Events(const http::Request& request);
  http::Response Counts(const http::Request& request);

  store::AdvertiserEventsStore& events_;
  AdminOptions options_;
  Sha256Digest token_hash_{};
};

}  // namespace adserver::admin
