#include "store/postgres/detail/pg_node_counters.h"

#include <string>

#include "common/clock.h"

namespace adserver::store::pg_detail {

namespace {

// SET expressions of the upsert; they read the row (aliased `n`) as it was before the update.
constexpr const char* kReplace =
    "total_spend_micros = excluded.total_spend_micros, "
    "impressions = excluded.impressions, clicks = excluded.clicks, "
    "conversions = excluded.conversions, day = excluded.day, "
    "day_spend_micros = excluded.day_spend_micros, hour = excluded.hour, "
    "hour_spend_micros = excluded.hour_spend_micros";
constexpr const char* kAdd =
    "total_spend_micros = n.total_spend_micros + excluded.total_spend_micros, "
    "impressions = n.impressions + excluded.impressions, "
    "clicks = n.clicks + excluded.clicks, "
    "conversions = n.conversions + excluded.conversions, "
    "day_spend_micros = CASE WHEN n.day = excluded.day "
    "THEN n.day_spend_micros + excluded.day_spend_micros "
    "WHEN n.day < excluded.day THEN excluded.day_spend_micros ELSE n.day_spend_micros END, "
    "day = GREATEST(n.day, excluded.day), "
    "hour_spend_micros = CASE WHEN n.hour = excluded.hour "
    "THEN n.hour_spend_micros + excluded.hour_spend_micros "
    "WHEN n.hour < excluded.hour THEN excluded.hour_spend_micros ELSE n.hour_spend_micros END, "
    "hour = GREATEST(n.hour, excluded.hour)";

}  // namespace

Status UpsertNodeCounters(PgConnection& c, std::string_view node_id,
                          std::span<const CampaignCountersRecord> rows, CountersWrite how) {
  const std::string sql = std::string("INSERT INTO node_campaign_counters AS n (node_id, ") +
                          kCounterColumns +
                          ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                          "ON CONFLICT (node_id, campaign_id) DO UPDATE SET " +
                          (how == CountersWrite::kAdd ? kAdd : kReplace);
  for (const CampaignCountersRecord& r : rows) {
    ADS_RETURN_IF_ERROR(
        c.Exec(sql, {Param(node_id), Param(r.campaign_id), Param(r.total_spend),
                     Param(r.impressions), Param(r.clicks), Param(r.conversions), Param(r.day),
                     Param(r.day_spend), Param(r.hour), Param(r.hour_spend)})
            .status());
  }
  return OkStatus();
}

namespace {
// Adds `price` (signed) to `d`'s total and to its day and hour spend as of `at`.
void AddSpend(CampaignCountersRecord& d, Id campaign_id, Micros price, int64_t at) {
  const int64_t day = DayOf(at), hour = at / 3600;
  if (d.campaign_id == 0) {
    d.campaign_id = campaign_id;
    d.day = day;
    d.hour = hour;
  }
  d.total_spend += price;
  if (day > d.day) d.day = day, d.day_spend = 0;
  if (hour > d.hour) d.hour = hour, d.hour_spend = 0;
  if (day == d.day) d.day_spend += price;
  if (hour == d.hour) d.hour_spend += price;
}
}  // namespace

void AddConversionDelta(std::map<Id, CampaignCountersRecord>& deltas, const ConversionRecord& c,
                        int sign) {
  CampaignCountersRecord& d = deltas[c.campaign_id];
  AddSpend(d, c.campaign_id, sign * c.price, c.recorded_at);
  d.conversions += sign;
}

void AddClickDelta(std::map<Id, CampaignCountersRecord>& deltas, Id campaign_id, Micros price,
                   int64_t clicked_at) {
  CampaignCountersRecord& d = deltas[campaign_id];
  AddSpend(d, campaign_id, price, clicked_at);
  d.clicks += 1;
}

}  // namespace adserver::store::pg_detail
