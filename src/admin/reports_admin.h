#pragma once

#include <cstdint>
#include <optional>

#include "admin/authenticator.h"
#include "common/clock.h"
#include "http/message.h"
#include "http/router.h"
#include "store/inventory_store.h"
#include "store/report_store.h"

namespace adserver::admin {

struct ReportsAdminOptions {
  // Most grouped rows one report may read; a larger report is a 400 asking to narrow it.
  int64_t max_rows = 100'000;
  // Longest range of a minute-granularity report.
  int64_t max_minute_range_seconds = 48 * 3600;
  // How long minute and hourly rollups are kept (app copies events.*_rollup_retention_*): a
  // range that needs finer rollups older than that is a 400 instead of a silently short answer.
  int64_t minute_retention_seconds = 48 * 3600;
  int64_t hour_retention_seconds = 400 * 86400;
};

// Whose data a report may show: unrestricted by default; one publisher (a publisher user) or
// one community's campaigns (an advertiser user).
struct ReportScope {
  std::optional<store::Id> publisher_id;
  std::optional<store::Id> community_id;
};

// Reports (issue 16), part of the admin API (same authentication, worker pool, error shape):
//   GET /admin/v1/reports     sums from the rollups over [from, to) by time bucket
//                             (granularity minute|hour|day|total) and groupBy dimensions
//                             (publisher, adUnitId, campaign, ad, community, arm), filtered by
//                             publisherId, campaignId, communityId, adUnitId; JSON
//                             {rows, totals}, or CSV with `Accept: text/csv` or `format=csv`
//   GET /admin/v1/reports/ab  adUnitIds of one publisher (publisherId, adUnitIds) or arms of
//                             one campaign (campaignId): CTR and CVR with 95 % Wilson intervals,
//                             each variant against the first by a pooled two-proportion z-test
// Thread-safe.
class ReportsAdminApi {
 public:
  // The stores, clock and auth must outlive this object.
  ReportsAdminApi(store::ReportStore& reports, store::InventoryStore& inventory, const Clock& clock,
                  const Authenticator& auth, ReportsAdminOptions options = {});
  void RegisterRoutes(http::Router& router);

  // The handlers, for a caller restricted to `scope` (no authentication here).
  http::Response Report(const http::Request& request, const ReportScope& scope);
  http::Response AbReport(const http::Request& request, const ReportScope& scope);

 private:
  store::ReportStore& reports_;
  store::InventoryStore& inventory_;
  const Clock& clock_;
  const Authenticator& auth_;
  ReportsAdminOptions options_;
};

}  // namespace adserver::admin
