#include "admin/reports_admin.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admin/detail/event_text.h"
#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/payouts.h"
#include "admin/detail/records_json.h"
#include "reports/csv.h"
#include "reports/report.h"
#include "reports/statistics.h"

namespace adserver::admin {
namespace {

using detail::Json;
using detail::MoneyToJson;
using reports::Dimension;
using reports::Granularity;

constexpr int64_t kMinute = 60;
constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;

// Query-string values by name (percent-decoded); a repeated name keeps the last value.
std::map<std::string, std::string, std::less<>> QueryValues(std::string_view query) {
  std::map<std::string, std::string, std::less<>> values;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    values[std::string(pair.substr(0, eq))] =
        detail::PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
  }
  return values;
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    std::string_view item = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), item.size() + 1));
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

int64_t FloorTo(int64_t t, int64_t unit) { return t - ((t % unit) + unit) % unit; }

// What both routes share: the range, the filters, and errors by parameter.
struct RangeAndFilters {
  int64_t from = 0;
  int64_t to = 0;
  std::optional<store::Id> publisher_id;
  std::optional<store::Id> campaign_id;
  std::optional<store::Id> community_id;
  std::optional<std::string> ad_unit_id;
};

class QueryParser {
 public:
  QueryParser(std::string_view query, std::vector<std::string_view> known)
      : values_(QueryValues(query)) {
    for (const auto& [name, value] : values_) {
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      errors_.push_back({name.substr(0, 64), "unknown query parameter (" + list + ")"});
    }
  }

  const std::string* Find(std::string_view name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  void Error(std::string field, std::string message) {
    errors_.push_back({std::move(field), std::move(message)});
  }
  std::optional<store::Id> Id(std::string_view name) {
    const std::string* v = Find(name);
    if (v == nullptr) return std::nullopt;
    std::optional<int64_t> id = detail::ParsePositiveInt(*v);
    if (!id) Error(std::string(name), "must be a positive integer");
    return id;
  }
  std::optional<int64_t> Time(std::string_view name) {
    const std::string* v = Find(name);
    if (v == nullptr) return std::nullopt;
    std::optional<int64_t> t = detail::ParseTimeOrDate(*v);
    if (!t) {
      Error(std::string(name),
            "must be an RFC 3339 timestamp or a date, e.g. 2026-11-01T12:00:00Z or 2026-11-01");
    }
    return t;
  }
  bool ok() const { return errors_.empty(); }
  Status ToStatus() const { return InvalidArgumentError("invalid query", errors_); }

 private:
  std::map<std::string, std::string, std::less<>> values_;
  std::vector<FieldError> errors_;
};

// [from, to): defaults end at the next bucket boundary after now and span an hour (minute),
// two days (hour) or 30 days (day, total).
void ReadRange(QueryParser& p, Granularity g, int64_t now, RangeAndFilters& out) {
  const int64_t bucket = g == Granularity::kTotal ? kDay : reports::BucketSeconds(g);
  const int64_t span = g == Granularity::kMinute ? kHour
                       : g == Granularity::kHour ? 2 * kDay
                                                 : 30 * kDay;
  std::optional<int64_t> from = p.Time("from");
  std::optional<int64_t> to = p.Time("to");
  if (!p.ok()) return;
  out.to = to.value_or(FloorTo(now, bucket) + bucket);
  out.from = from.value_or(out.to - span);
  if (out.from >= out.to) p.Error("from", "must be before to");
}

void ReadFilters(QueryParser& p, RangeAndFilters& out) {
  out.publisher_id = p.Id("publisherId");
  out.campaign_id = p.Id("campaignId");
  out.community_id = p.Id("communityId");
  if (const std::string* unit = p.Find("adUnitId")) out.ad_unit_id = *unit;
}

struct ReportQuery {
  RangeAndFilters range;
  Granularity granularity = Granularity::kDay;
  std::vector<Dimension> group_by;
  bool csv = false;
};

Result<ReportQuery> ParseReportQuery(const http::Request& request, int64_t now) {
  QueryParser p(request.query, {"from", "to", "granularity", "groupBy", "publisherId", "campaignId",
                                "communityId", "adUnitId", "format"});
  ReportQuery q;
  if (const std::string* g = p.Find("granularity")) {
    std::optional<Granularity> parsed = reports::ParseGranularity(*g);
    if (!parsed) p.Error("granularity", "must be one of minute, hour, day, total");
    q.granularity = parsed.value_or(Granularity::kDay);
  }
  if (const std::string* dims = p.Find("groupBy")) {
    for (const std::string& name : SplitList(*dims)) {
      std::optional<Dimension> d = reports::ParseDimension(name);
      if (!d) {
        p.Error("groupBy", "unknown dimension " + name.substr(0, 32) +
                               " (publisher, adUnitId, campaign, ad, community, arm)");
      } else if (std::find(q.group_by.begin(), q.group_by.end(), *d) == q.group_by.end()) {
        q.group_by.push_back(*d);
      }
    }
  }
  if (const std::string* format = p.Find("format")) {
    if (*format != "csv" && *format != "json") p.Error("format", "must be one of json, csv");
    q.csv = *format == "csv";
  } else {
    q.csv = request.Header("Accept").find("text/csv") != std::string_view::npos;
  }
  ReadFilters(p, q.range);
  ReadRange(p, q.granularity, now, q.range);
  if (!p.ok()) return p.ToStatus();
  return q;
}

// Restricts the filters to `scope`: another tenant's publisher or community is NotFound.
Status ApplyScope(const ReportScope& scope, RangeAndFilters& f) {
  if (scope.publisher_id) {
    if (f.publisher_id && *f.publisher_id != *scope.publisher_id) {
      return NotFoundError("publisher " + std::to_string(*f.publisher_id) + " not found");
    }
    f.publisher_id = scope.publisher_id;
  }
  if (scope.community_id) {
    if (f.community_id && *f.community_id != *scope.community_id) {
      return NotFoundError("community " + std::to_string(*f.community_id) + " not found");
    }
    f.community_id = scope.community_id;
  }
  return OkStatus();
}

// The rollup query over the coarsest table that fits; InvalidArgument when the finer rollups
// the range needs are past their retention.
Result<store::RollupQuery> PlanQuery(const RangeAndFilters& f, Granularity g, int64_t now,
                                     const ReportsAdminOptions& o) {
  const int64_t source = reports::SourceBucketSeconds(g, f.from, f.to);
  if (g == Granularity::kMinute && f.to - f.from > o.max_minute_range_seconds) {
    return InvalidFieldError("to", "a minute report spans at most " +
                                       std::to_string(o.max_minute_range_seconds / kHour) +
                                       " h; use granularity hour or day for longer ranges");
  }
  if (source == kMinute && f.from < now - o.minute_retention_seconds) {
    return InvalidFieldError(
        "from", "minute rollups are kept " + std::to_string(o.minute_retention_seconds / kHour) +
                    " h; for older data give from and to on whole hours or days");
  }
  if (source == kHour && f.from < now - o.hour_retention_seconds) {
    return InvalidFieldError(
        "from", "hourly rollups are kept " + std::to_string(o.hour_retention_seconds / kDay) +
                    " days; for older data give from and to on whole days (granularity day)");
  }
  store::RollupQuery q;
  q.table = source == kDay    ? store::RollupTable::kDay
            : source == kHour ? store::RollupTable::kHour
                              : store::RollupTable::kMinute;
  q.from = FloorTo(f.from, source);
  q.to = f.to;
  q.group_seconds = g == Granularity::kTotal ? 0 : reports::BucketSeconds(g);
  q.publisher_id = f.publisher_id;
  q.campaign_id = f.campaign_id;
  q.community_id = f.community_id;
  q.ad_unit_id = f.ad_unit_id;
  q.limit = o.max_rows + 1;
  return q;
}

void SplitBy(const std::vector<Dimension>& dims, store::RollupQuery& q) {
  for (Dimension d : dims) {
    q.by_ad_unit |= d == Dimension::kAdUnit;
    q.by_campaign |= d == Dimension::kCampaign;
    q.by_ad |= d == Dimension::kAd;
    q.by_community |= d == Dimension::kCommunity;
    q.by_arm |= d == Dimension::kArm;
  }
}

std::vector<reports::SourceRow> ToSourceRows(const std::vector<store::RollupGroup>& groups) {
  std::vector<reports::SourceRow> rows;
  rows.reserve(groups.size());
  for (const store::RollupGroup& g : groups) {
    rows.push_back({.bucket = g.bucket,
                    .publisher_id = g.publisher_id,
                    .ad_unit_id = g.ad_unit_id,
                    .campaign_id = g.campaign_id,
                    .ad_id = g.ad_id,
                    .community_id = g.community_id,
                    .arm = g.arm,
                    .requests = g.requests,
                    .fills = g.fills,
                    .no_fills = g.no_fills,
                    .clicks = g.clicks,
                    .conversions = g.conversions,
                    .spend = g.spend,
                    .invalid_clicks = g.invalid_clicks,
                    .over_budget_conversions = g.over_budget_conversions});
  }
  return rows;
}

Status TooManyRows(int64_t max_rows) {
  return InvalidFieldError("from", "the report has more than " + std::to_string(max_rows) +
                                       " rows; narrow from/to, use a coarser granularity, fewer "
                                       "groupBy dimensions or a filter");
}

// One value of a report row, rendered as JSON or as a CSV field.
struct Cell {
  enum class Kind : uint8_t { kNull, kInt, kId, kText, kMoney, kRatio };
  Kind kind = Kind::kNull;
  int64_t number = 0;
  double ratio = 0;
  std::string text;

  static Cell Int(int64_t v) { return {.kind = Kind::kInt, .number = v}; }
  static Cell OptId(int64_t v) { return v == 0 ? Cell{} : Cell{.kind = Kind::kId, .number = v}; }
  static Cell Text(std::string v) { return {.kind = Kind::kText, .text = std::move(v)}; }
  static Cell OptText(std::string v) { return v.empty() ? Cell{} : Text(std::move(v)); }
  static Cell Money(Micros v) { return {.kind = Kind::kMoney, .number = v}; }
  static Cell Ratio(double v) { return {.kind = Kind::kRatio, .ratio = v}; }

  Json ToJson() const {
    switch (kind) {
      case Kind::kInt:
        return number;
      case Kind::kId:
        return std::to_string(number);  // ids are strings, as in the event listings
      case Kind::kText:
        return text;
      case Kind::kMoney:
        return MoneyToJson(number);
      case Kind::kRatio:
        return ratio;
      case Kind::kNull:
        break;
    }
    return nullptr;
  }
  std::string ToCsv() const {
    switch (kind) {
      case Kind::kInt:
      case Kind::kId:
        return std::to_string(number);
      case Kind::kText:
        return text;
      case Kind::kMoney:
        return reports::FormatMoney(number);
      case Kind::kRatio:
        return reports::FormatDouble(ratio);
      case Kind::kNull:
        break;
    }
    return "";
  }
};

using Cells = std::vector<std::pair<std::string_view, Cell>>;

// Which money a report's reader sees (issue 39): advertisers what they spent, publishers what
// they earned, operators both.
struct MoneyView {
  bool spend = true;
  bool earnings = true;
};

void AddMetrics(const reports::Counts& c, MoneyView money, Cells& out) {
  const reports::Derived d = reports::Derive(c);
  out.emplace_back("requests", Cell::Int(c.requests));
  out.emplace_back("fills", Cell::Int(c.fills));
  out.emplace_back("noFills", Cell::Int(c.no_fills));
  out.emplace_back("impressions", Cell::Int(c.fills));
  out.emplace_back("clicks", Cell::Int(c.clicks));
  out.emplace_back("conversions", Cell::Int(c.conversions));
  out.emplace_back("spend", money.spend ? Cell::Money(c.spend) : Cell{});
  out.emplace_back("earnings", money.earnings ? Cell::Money(c.earnings) : Cell{});
  out.emplace_back("ctr", Cell::Ratio(d.ctr));
  out.emplace_back("cvr", Cell::Ratio(d.cvr));
  out.emplace_back("ecpm", money.spend ? Cell::Money(d.ecpm) : Cell{});
  // The publisher's eCPM: earnings per 1000 impressions.
  out.emplace_back("earningsEcpm", money.earnings
                                       ? Cell::Money(c.fills > 0 ? c.earnings * 1000 / c.fills : 0)
                                       : Cell{});
  out.emplace_back("invalidClicks", Cell::Int(c.invalid_clicks));
  out.emplace_back("overBudgetConversions", Cell::Int(c.over_budget_conversions));
}

Cell DimensionCell(const reports::ReportRow& row, Dimension d) {
  switch (d) {
    case Dimension::kPublisher:
      return Cell::OptId(row.publisher_id);
    case Dimension::kAdUnit:
      return Cell::OptText(row.ad_unit_id);
    case Dimension::kCampaign:
      return Cell::OptId(row.campaign_id);
    case Dimension::kAd:
      return Cell::OptId(row.ad_id);
    case Dimension::kCommunity:
      return Cell::OptId(row.community_id);
    case Dimension::kArm:
      break;
  }
  return Cell::Text(row.arm);
}

Cells RowCells(const reports::ReportRow& row, const ReportQuery& q, MoneyView money) {
  Cells cells;
  if (q.granularity != Granularity::kTotal) {
    cells.emplace_back("time", Cell::Text(detail::TimeToJson(row.bucket).get<std::string>()));
  }
  for (Dimension d : q.group_by)
    cells.emplace_back(reports::DimensionKey(d), DimensionCell(row, d));
  AddMetrics(row.counts, money, cells);
  return cells;
}

Json CellsToJson(const Cells& cells) {
  Json out = Json::object();
  for (const auto& [key, cell] : cells) out[std::string(key)] = cell.ToJson();
  return out;
}

std::string_view GranularityName(Granularity g) {
  switch (g) {
    case Granularity::kMinute:
      return "minute";
    case Granularity::kHour:
      return "hour";
    case Granularity::kDay:
      return "day";
    case Granularity::kTotal:
      break;
  }
  return "total";
}

http::Response ReportJson(const reports::Report& report, const ReportQuery& q, MoneyView money,
                          const std::string& currency) {
  Json rows = Json::array();
  for (const reports::ReportRow& row : report.rows) {
    rows.push_back(CellsToJson(RowCells(row, q, money)));
  }
  Cells totals;
  AddMetrics(report.totals, money, totals);
  return detail::JsonResponse(200, Json{{"from", detail::TimeToJson(q.range.from)},
                                        {"to", detail::TimeToJson(q.range.to)},
                                        {"granularity", GranularityName(q.granularity)},
                                        {"currency", currency},
                                        {"rows", std::move(rows)},
                                        {"totals", CellsToJson(totals)}});
}

// The rows only, one header record first (the header is written even without rows).
http::Response ReportCsv(const reports::Report& report, const ReportQuery& q, MoneyView money) {
  std::string body;
  std::vector<std::string> fields;
  reports::ReportRow none;
  for (const auto& [key, cell] : RowCells(none, q, money)) fields.emplace_back(key);
  reports::AppendCsvRecord(fields, body);
  for (const reports::ReportRow& row : report.rows) {
    fields.clear();
    for (const auto& [key, cell] : RowCells(row, q, money)) fields.push_back(cell.ToCsv());
    reports::AppendCsvRecord(fields, body);
  }
  http::Response response;
  response.status = 200;
  response.body = std::move(body);
  response.SetHeader("Content-Type", "text/csv; charset=utf-8");
  response.SetHeader("Cache-Control", "no-store");
  return response;
}

// ---- A/B comparison.

struct AbQuery {
  RangeAndFilters range;
  bool by_arm = false;                // arms of one campaign; else adUnitIds of one publisher
  std::vector<std::string> variants;  // adUnitIds asked for, in order; empty = all
};

Result<AbQuery> ParseAbQuery(const http::Request& request, int64_t now) {
  QueryParser p(request.query, {"from", "to", "publisherId", "adUnitIds", "campaignId"});
  AbQuery q;
  q.range.publisher_id = p.Id("publisherId");
  q.range.campaign_id = p.Id("campaignId");
  if (const std::string* units = p.Find("adUnitIds")) {
    q.variants = SplitList(*units);
    if (!q.range.publisher_id) p.Error("adUnitIds", "needs publisherId");
    if (q.variants.empty()) p.Error("adUnitIds", "must list adUnitIds, comma-separated");
  }
  if (p.ok() && q.range.publisher_id.has_value() == q.range.campaign_id.has_value()) {
    p.Error("publisherId",
            "give either publisherId (compare its adUnitIds) or campaignId (compare its arms)");
  }
  q.by_arm = q.range.campaign_id.has_value();
  ReadRange(p, Granularity::kTotal, now, q.range);
  if (!p.ok()) return p.ToStatus();
  return q;
}

Json ProportionJson(int64_t successes, int64_t trials) {
  successes = std::min(successes, trials);  // a rate above 1 is no proportion
  reports::Interval ci = reports::WilsonInterval(successes, trials);
  double rate = trials > 0 ? static_cast<double>(successes) / static_cast<double>(trials) : 0;
  return Json{{"value", rate}, {"low", ci.low}, {"high", ci.high}};
}

Json TestJson(int64_t x1, int64_t n1, int64_t x2, int64_t n2) {
  std::optional<reports::ZTest> t =
      reports::TwoProportionZTest(std::min(x1, n1), n1, std::min(x2, n2), n2);
  reports::Better better = reports::Judge(t);
  return Json{{"z", t ? Json(t->z) : Json(nullptr)},
              {"p", t ? Json(t->p) : Json(nullptr)},
              {"better", better == reports::Better::kVariant    ? Json("variant")
                         : better == reports::Better::kBaseline ? Json("baseline")
                                                                : Json(nullptr)}};
}

struct Variant {
  std::string name;
  reports::Counts counts;
};

Json VariantsJson(const std::vector<Variant>& variants) {
  Json out = Json::array();
  for (const Variant& v : variants) {
    const reports::Counts& c = v.counts;
    const reports::Counts& base = variants.front().counts;
    Json vs = nullptr;
    if (&v != &variants.front()) {
      vs = Json{{"ctr", TestJson(base.clicks, base.fills, c.clicks, c.fills)},
                {"cvr", TestJson(base.conversions, base.fills, c.conversions, c.fills)}};
    }
    out.push_back(Json{{"variant", v.name},
                       {"impressions", c.fills},
                       {"clicks", c.clicks},
                       {"conversions", c.conversions},
                       {"ctr", ProportionJson(c.clicks, c.fills)},
                       {"cvr", ProportionJson(c.conversions, c.fills)},
                       {"vsBaseline", std::move(vs)}});
  }
  return out;
}

// Variants in the order asked for (absent ones with zero counts), or every one seen, by name.
std::vector<Variant> CollectVariants(const std::vector<store::RollupGroup>& groups,
                                     const AbQuery& q) {
  std::map<std::string, reports::Counts> seen;
  for (const store::RollupGroup& g : groups) {
    const std::string& name = q.by_arm ? g.arm : g.ad_unit_id;
    if (!q.by_arm && name.empty()) continue;  // requests without an adUnitId
    reports::Counts& c = seen[name];
    c.fills += g.fills;
    c.clicks += g.clicks;
    c.conversions += g.conversions;
  }
  std::vector<Variant> variants;
  if (q.variants.empty()) {
    for (auto& [name, counts] : seen) variants.push_back({name, counts});
    return variants;
  }
  for (const std::string& name : q.variants) variants.push_back({name, seen[name]});
  return variants;
}

}  // namespace

ReportsAdminApi::ReportsAdminApi(store::ReportStore& reports, store::InventoryStore& inventory,
                                 const Clock& clock, const Authenticator& auth,
                                 ReportsAdminOptions options)
    : reports_(reports), inventory_(inventory), clock_(clock), auth_(auth), options_(options) {}

http::Response ReportsAdminApi::Report(const http::Request& request, const ReportScope& scope) {
  const int64_t now = clock_.NowSeconds();
  Result<ReportQuery> q = ParseReportQuery(request, now);
  if (!q.ok()) return http::ErrorResponse(q.status());
  if (Status s = ApplyScope(scope, q->range); !s.ok()) return http::ErrorResponse(s);
  // Another community's campaign is unknown to an advertiser (issue 39: was 200 with no rows).
  if (q->range.campaign_id && scope.community_id) {
    if (Status s = CheckCampaignOf(inventory_, scope.community_id, *q->range.campaign_id);
        !s.ok()) {
      return http::ErrorResponse(s);
    }
  }
  Result<store::RollupQuery> plan = PlanQuery(q->range, q->granularity, now, options_);
  if (!plan.ok()) return http::ErrorResponse(plan.status());
  SplitBy(q->group_by, *plan);
  Result<std::vector<store::RollupGroup>> groups = reports_.QueryRollups(*plan);
  if (!groups.ok()) return http::ErrorResponse(groups.status());
  if (static_cast<int64_t>(groups->size()) > options_.max_rows) {
    return http::ErrorResponse(TooManyRows(options_.max_rows));
  }
  Result<std::unordered_map<store::Id, reports::Payout>> payouts = detail::LoadPayouts(inventory_);
  if (!payouts.ok()) return http::ErrorResponse(payouts.status());
  std::vector<reports::SourceRow> rows = ToSourceRows(*groups);
  reports::Report report =
      reports::Aggregate(rows, {.group_by = q->group_by,
                                .by_bucket = q->granularity != Granularity::kTotal,
                                .payouts = &*payouts});
  // Earnings are the publisher's business, prices the advertiser's: an advertiser's report
  // leaves earnings out, a publisher's spend (what advertisers paid for its traffic).
  const MoneyView money{.spend = !scope.publisher_id.has_value(),
                        .earnings = !scope.community_id.has_value()};
  return q->csv ? ReportCsv(report, *q, money)
                : ReportJson(report, *q, money, auth_.options().currency);
}

http::Response ReportsAdminApi::AbReport(const http::Request& request, const ReportScope& scope) {
  const int64_t now = clock_.NowSeconds();
  Result<AbQuery> q = ParseAbQuery(request, now);
  if (!q.ok()) return http::ErrorResponse(q.status());
  if (q->range.campaign_id) {
    if (Status s = CheckCampaignOf(inventory_, scope.community_id, *q->range.campaign_id);
        !s.ok()) {
      return http::ErrorResponse(s);
    }
  }
  if (Status s = ApplyScope(scope, q->range); !s.ok()) return http::ErrorResponse(s);
  Result<store::RollupQuery> plan = PlanQuery(q->range, Granularity::kTotal, now, options_);
  if (!plan.ok()) return http::ErrorResponse(plan.status());
  (q->by_arm ? plan->by_arm : plan->by_ad_unit) = true;
  Result<std::vector<store::RollupGroup>> groups = reports_.QueryRollups(*plan);
  if (!groups.ok()) return http::ErrorResponse(groups.status());
  if (static_cast<int64_t>(groups->size()) > options_.max_rows) {
    return http::ErrorResponse(TooManyRows(options_.max_rows));
  }
  std::vector<Variant> variants = CollectVariants(*groups, *q);
  Json body{{"from", detail::TimeToJson(q->range.from)},
            {"to", detail::TimeToJson(q->range.to)},
            {"compare", q->by_arm ? "arm" : "adUnitId"},
            {"baseline", variants.empty() ? Json(nullptr) : Json(variants.front().name)},
            {"variants", VariantsJson(variants)}};
  if (q->by_arm) {
    body["campaignId"] = std::to_string(*q->range.campaign_id);
  } else {
    body["publisherId"] = std::to_string(*q->range.publisher_id);
  }
  return detail::JsonResponse(200, body);
}

void ReportsAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route = detail::GuardedRoute(auth_, 0);
  auto add = [&](std::string_view path, http::Response (ReportsAdminApi::*handler)(
                                            const http::Request&, const ReportScope&)) {
    router.Add(
        http::Method::kGet, std::string(path),
        [this, handler](const http::Request& request) {
          return detail::Guarded(auth_, Audience::kAnyUser, request, [&](const Principal& caller) {
            TenantScope tenant = ScopeOf(caller);
            return (this->*handler)(request, ReportScope{.publisher_id = tenant.publisher_id,
                                                         .community_id = tenant.community_id});
          });
        },
        route);
  };
  add("/admin/v1/reports", &ReportsAdminApi::Report);
  add("/admin/v1/reports/ab", &ReportsAdminApi::AbReport);
}

}  // namespace adserver::admin
