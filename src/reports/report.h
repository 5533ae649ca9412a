#pragma once

// Reports (issue 16): rollup sums grouped by time bucket and dimensions become report rows with
// derived metrics and publisher earnings. Pure: no I/O, no threads, no clocks; thread-compatible.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace adserver::reports {

using Id = int64_t;

enum class Granularity : uint8_t { kMinute, kHour, kDay, kTotal };
// The length of one bucket in seconds; 0 for kTotal (one bucket over the whole range).
int64_t BucketSeconds(Granularity granularity);
std::optional<Granularity> ParseGranularity(std::string_view text);

// The bucket (in seconds: 86400, 3600 or 60) of the coarsest rollup table a report over
// [from, to) at `granularity` can read: no coarser than the granularity's bucket, and dividing
// both ends so no bucket straddles them. Ranges not on whole minutes read minute rollups (their
// buckets are floored by the caller).
int64_t SourceBucketSeconds(Granularity granularity, int64_t from, int64_t to);

// What a report can be grouped by, in the order the columns appear.
enum class Dimension : uint8_t { kPublisher, kAdUnit, kCampaign, kAd, kCommunity, kArm };
// The query-string name of a dimension: publisher, adUnitId, campaign, ad, community, arm.
std::string_view DimensionName(Dimension dimension);
// The row key (and CSV column) of a dimension: publisherId, adUnitId, campaignId, adId,
// communityId, arm.
std::string_view DimensionKey(Dimension dimension);
std::optional<Dimension> ParseDimension(std::string_view text);

// How a publisher is paid: a percent of what advertisers spent on its inventory, or a guaranteed
// price per 1000 served impressions (fills).
struct Payout {
  enum class Model : uint8_t { kRevshare, kCpm };
  Model model = Model::kRevshare;
  double percent = 70;    // kRevshare: 0..100
  Micros cpm_micros = 0;  // kCpm: per 1000 fills
};

// A publisher's earnings for `fills` served impressions that cost advertisers `spend`, rounded
// to whole micros.
Micros Earnings(const Payout& payout, int64_t fills, Micros spend);

// Additive counts of a report row. impressions = fills (an impression is a served ad); spend is
// what advertisers paid (impressions, clicks and conversions).
struct Counts {
  int64_t requests = 0;
  int64_t fills = 0;
  int64_t no_fills = 0;
  int64_t clicks = 0;
  int64_t conversions = 0;
  Micros spend = 0;
  Micros earnings = 0;
  int64_t invalid_clicks = 0;  // never in clicks, ctr or spend
  int64_t over_budget_conversions = 0;  // never in conversions, cvr or spend (issue 37)
  Counts& operator+=(const Counts& other);
  bool operator==(const Counts&) const = default;
};

// Ratios of a row: ctr = clicks / impressions, cvr = conversions / impressions (view-through
// conversions need no click), ecpm = spend per 1000 impressions. All 0 without impressions.
struct Derived {
  double ctr = 0;
  double cvr = 0;
  Micros ecpm = 0;
};
Derived Derive(const Counts& counts);

// One grouped sum read from the rollups: always split by publisher (earnings follow each
// publisher's payout), and by the time bucket and requested dimensions. Dimensions not grouped
// by hold their zero value.
struct SourceRow {
  int64_t bucket = 0;
  Id publisher_id = 0;
  std::string ad_unit_id;
  Id campaign_id = 0;  // 0: requests that filled nothing
  Id ad_id = 0;
  Id community_id = 0;  // 0: none (requests that filled nothing, a deleted campaign)
  std::string arm;
  int64_t requests = 0;
  int64_t fills = 0;
  int64_t no_fills = 0;
  int64_t clicks = 0;
  int64_t conversions = 0;
  Micros spend = 0;
  int64_t invalid_clicks = 0;
  int64_t over_budget_conversions = 0;
};

// One report row: the bucket start (when the granularity is not kTotal), the values of the
// grouped dimensions (same fields as SourceRow) and the counts.
struct ReportRow {
  int64_t bucket = 0;
  Id publisher_id = 0;
  std::string ad_unit_id;
  Id campaign_id = 0;
  Id ad_id = 0;
  Id community_id = 0;
  std::string arm;
  Counts counts;
};

struct Report {
  std::vector<ReportRow> rows;  // ordered by bucket, then the grouped dimensions
  Counts totals;                // the sum of the rows
};

struct AggregateOptions {
  // Dimensions to keep; the others (publisher too, unless named) are summed over.
  std::vector<Dimension> group_by;
  // Whether rows keep their bucket (false for kTotal: every bucket is summed).
  bool by_bucket = true;
  // Payout rules by publisher; a publisher without one (e.g. deleted) gets `default_payout`.
  const std::unordered_map<Id, Payout>* payouts = nullptr;
  Payout default_payout;
};

// Computes each source row's earnings under its publisher's payout, then sums rows that agree on
// the bucket and the grouped dimensions.
Report Aggregate(std::span<const SourceRow> rows, const AggregateOptions& options);

}  // namespace adserver::reports
