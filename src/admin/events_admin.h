#pragma once

#include "admin/admin_api.h"
#include "common/crypto.h"
#include "http/router.h"
#include "store/events_store.h"
#include "store/store.h"

namespace adserver::admin {

// Read-back of events, part of the admin API (same bearer token, worker pool, error shape):
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
  // Both stores must outlive this object.
  EventsAdminApi(store::EventsStore& events, store::Store& inventory, AdminOptions options);
  void RegisterRoutes(http::Router& router);

 private:
  http::Response Clicks(const http::Request& request);
  http::Response Conversions(const http::Request& request);
  http::Response CampaignStats(const http::Request& request);

  store::EventsStore& events_;
  store::Store& inventory_;
  AdminOptions options_;
  Sha256Digest token_hash_{};
};

}  // namespace adserver::admin
