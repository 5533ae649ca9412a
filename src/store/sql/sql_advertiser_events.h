#pragma once

// Advertiser events (AdvertiserEventsStore: POST /v1/events, their counts per name and invalid
// reason) in SQL, shared by the SQLite and PostgreSQL adapters (store/sql/sql.h); the adapter
// supplies transactions (sql::Runner, writes durable at commit) and derives from this. Counts are
// upserted as increments, so inserts from every node add up. The error contract is
// AdvertiserEventsStore's.

#include <optional>
#include <vector>

#include "store/advertiser_events_store.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

class SqlAdvertiserEvents : public AdvertiserEventsStore {
 public:
  explicit SqlAdvertiserEvents(Runner& runner) : runner_(runner) {}

  Status Insert(AdvertiserEventRecord& event) override;
  Result<std::vector<AdvertiserEventRecord>> List(const AdvertiserEventQuery& query) override;
  Result<std::vector<AdvertiserEventCount>> Counts(std::optional<Id> campaign_id,
                                                   std::optional<Id> community_id) override;
  Result<std::vector<AdvertiserEventCount>> InvalidCounts(std::optional<Id> campaign_id,
                                                          std::optional<Id> community_id) override;
  Result<int64_t> Prune(int64_t before) override;

 private:
  Runner& runner_;
};

}  // namespace adserver::store::sql
