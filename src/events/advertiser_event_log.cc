#include "events/advertiser_event_log.h"

#include "common/log.h"

namespace adserver::events {

Status AdvertiserEventLog::Record(const AdvertiserEvent& event) const {
  store::AdvertiserEventRecord row{.community_id = event.community_id,
                                   .key_id = event.key_id,
                                   .name = event.name,
                                   .url = event.url,
                                   .decision_id = event.decision_id,
                                   .person = event.person,
                                   .created_at = event.created_at,
                                   .invalid_reason = std::string(InvalidReasonName(event.invalid))};
  ADS_RETURN_IF_ERROR(sink_.Insert(row));
  MaybePrune(event.created_at);
  return OkStatus();
}

void AdvertiserEventLog::MaybePrune(int64_t now) const {
  int64_t due = next_prune_.load(std::memory_order_relaxed);
  if (now < due) return;
  // One thread wins the interval; the others go on.
  if (!next_prune_.compare_exchange_strong(due, now + options_.prune_interval_seconds)) return;
  Result<int64_t> pruned = store_.Prune(now - options_.retention_seconds);
  if (!pruned.ok()) ADS_LOG(warn, "advertiser events not pruned", "status", pruned.status());
}

}  // namespace adserver::events
