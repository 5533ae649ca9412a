#include "reports/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace adserver::reports {
namespace {

constexpr std::pair<Dimension, std::string_view> kDimensionNames[] = {
    {Dimension::kPublisher, "publisher"}, {Dimension::kAdUnit, "adUnitId"},
    {Dimension::kCampaign, "campaign"},   {Dimension::kAd, "ad"},
    {Dimension::kCommunity, "community"}, {Dimension::kArm, "arm"}};

using RowKey = std::tuple<int64_t, Id, std::string, Id, Id, Id, std::string>;

bool Has(const std::vector<Dimension>& dims, Dimension d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// The source row with everything not grouped by reset, as the row it adds to.
ReportRow Projected(const SourceRow& s, const AggregateOptions& o) {
  ReportRow r;
  if (o.by_bucket) r.bucket = s.bucket;
  if (Has(o.group_by, Dimension::kPublisher)) r.publisher_id = s.publisher_id;
  if (Has(o.group_by, Dimension::kAdUnit)) r.ad_unit_id = s.ad_unit_id;
  if (Has(o.group_by, Dimension::kCampaign)) r.campaign_id = s.campaign_id;
  if (Has(o.group_by, Dimension::kAd)) r.ad_id = s.ad_id;
  if (Has(o.group_by, Dimension::kCommunity)) r.community_id = s.community_id;
  if (Has(o.group_by, Dimension::kArm)) r.arm = s.arm;
  return r;
}

}  // namespace

int64_t BucketSeconds(Granularity granularity) {
  switch (granularity) {
    case Granularity::kMinute:
      return 60;
    case Granularity::kHour:
      return 3600;
    case Granularity::kDay:
      return 86400;
    case Granularity::kTotal:
      break;
  }
  return 0;
}

int64_t SourceBucketSeconds(Granularity granularity, int64_t from, int64_t to) {
  const int64_t limit = granularity == Granularity::kTotal ? 86400 : BucketSeconds(granularity);
  for (int64_t seconds : {86400, 3600}) {
    if (seconds <= limit && from % seconds == 0 && to % seconds == 0) return seconds;
  }
  return 60;
}

std::optional<Granularity> ParseGranularity(std::string_view text) {
  if (text == "minute") return Granularity::kMinute;
  if (text == "hour") return Granularity::kHour;
  if (text == "day") return Granularity::kDay;
  if (text == "total") return Granularity::kTotal;
  return std::nullopt;
}

std::string_view DimensionName(Dimension dimension) {
  for (const auto& [d, name] : kDimensionNames) {
    if (d == dimension) return name;
  }
  return "";
}

std::string_view DimensionKey(Dimension dimension) {
  switch (dimension) {
    case Dimension::kPublisher:
      return "publisherId";
    case Dimension::kAdUnit:
      return "adUnitId";
    case Dimension::kCampaign:
      return "campaignId";
    case Dimension::kAd:
      return "adId";
    case Dimension::kCommunity:
      return "communityId";
    case Dimension::kArm:
      break;
  }
  return "arm";
}

std::optional<Dimension> ParseDimension(std::string_view text) {
  for (const auto& [d, name] : kDimensionNames) {
    if (name == text) return d;
  }
  return std::nullopt;
}

Micros Earnings(const Payout& payout, int64_t fills, Micros spend) {
  if (payout.model == Payout::Model::kCpm) {
    return std::llround(static_cast<double>(fills) * static_cast<double>(payout.cpm_micros) /
                        1000.0);
  }
  return std::llround(static_cast<double>(spend) * payout.percent / 100.0);
}

Counts& Counts::operator+=(const Counts& other) {
  requests += other.requests;
  fills += other.fills;
  no_fills += other.no_fills;
  clicks += other.clicks;
  conversions += other.conversions;
  spend += other.spend;
  earnings += other.earnings;
  invalid_clicks += other.invalid_clicks;
  over_budget_conversions += other.over_budget_conversions;
  return *this;
}

Derived Derive(const Counts& counts) {
  Derived d;
  if (counts.fills <= 0) return d;
  const double impressions = static_cast<double>(counts.fills);
  d.ctr = static_cast<double>(counts.clicks) / impressions;
  d.cvr = static_cast<double>(counts.conversions) / impressions;
  d.ecpm = counts.spend * 1000 / counts.fills;
  return d;
}

Report Aggregate(std::span<const SourceRow> rows, const AggregateOptions& options) {
  std::map<RowKey, ReportRow> merged;
  for (const SourceRow& s : rows) {
    const Payout* payout = &options.default_payout;
    if (options.payouts != nullptr) {
      auto it = options.payouts->find(s.publisher_id);
      if (it != options.payouts->end()) payout = &it->second;
    }
    Counts counts{.requests = s.requests,
                  .fills = s.fills,
                  .no_fills = s.no_fills,
                  .clicks = s.clicks,
                  .conversions = s.conversions,
                  .spend = s.spend,
                  .earnings = Earnings(*payout, s.fills, s.spend),
                  .invalid_clicks = s.invalid_clicks,
                  .over_budget_conversions = s.over_budget_conversions};
    ReportRow row = Projected(s, options);
    RowKey key{row.bucket, row.publisher_id, row.ad_unit_id, row.campaign_id,
               row.ad_id,  row.community_id, row.arm};
    merged.try_emplace(std::move(key), std::move(row)).first->second.counts += counts;
  }
  Report report;
  report.rows.reserve(merged.size());
  for (auto& [key, row] : merged) {
    report.totals += row.counts;
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace adserver::reports
