#include "store/sql/detail/counters.h"

namespace adserver::store::sql {

Status SaveCounters(Connection& c, const std::vector<CampaignCountersRecord>& rows) {
  ADS_ASSIGN_OR_RETURN(
      Statement s, c.Prepare("INSERT INTO campaign_counters (campaign_id, total_spend_micros, "
                             "impressions, clicks, conversions, day, day_spend_micros, hour, "
                             "hour_spend_micros) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                             "ON CONFLICT (campaign_id) DO UPDATE SET "
                             "total_spend_micros = excluded.total_spend_micros, "
                             "impressions = excluded.impressions, clicks = excluded.clicks, "
                             "conversions = excluded.conversions, day = excluded.day, "
                             "day_spend_micros = excluded.day_spend_micros, hour = excluded.hour, "
                             "hour_spend_micros = excluded.hour_spend_micros"));
  for (const CampaignCountersRecord& r : rows) {
    s.Reset();
    ADS_RETURN_IF_ERROR(s.Bind(1, r.campaign_id)
                            .Bind(2, r.total_spend)
                            .Bind(3, r.impressions)
                            .Bind(4, r.clicks)
                            .Bind(5, r.conversions)
                            .Bind(6, r.day)
                            .Bind(7, r.day_spend)
                            .Bind(8, r.hour)
                            .Bind(9, r.hour_spend)
                            .Run());
  }
  return OkStatus();
}

Result<std::vector<CampaignCountersRecord>> LoadCounters(Connection& c) {
  std::vector<CampaignCountersRecord> out;
  ADS_ASSIGN_OR_RETURN(Statement s,
                       c.Prepare("SELECT campaign_id, total_spend_micros, impressions, clicks, "
                                 "conversions, day, day_spend_micros, hour, hour_spend_micros "
                                 "FROM campaign_counters ORDER BY campaign_id"));
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back({.campaign_id = s.Int(0),
                   .total_spend = s.Int(1),
                   .impressions = s.Int(2),
                   .clicks = s.Int(3),
                   .conversions = s.Int(4),
                   .day = s.Int(5),
                   .day_spend = s.Int(6),
                   .hour = s.Int(7),
                   .hour_spend = s.Int(8)});
  }
}

}  // namespace adserver::store::sql
