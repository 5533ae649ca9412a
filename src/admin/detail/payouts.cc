#include "admin/detail/payouts.h"

#include <vector>

namespace adserver::admin::detail {

reports::Payout PayoutOf(const store::PublisherRecord& publisher) {
  return reports::Payout{.model = publisher.payout.model == store::PayoutRule::Model::kCpm
                                      ? reports::Payout::Model::kCpm
                                      : reports::Payout::Model::kRevshare,
                         .percent = publisher.payout.percent,
                         .cpm_micros = publisher.payout.cpm_micros};
}

Result<std::unordered_map<store::Id, reports::Payout>> LoadPayouts(
    store::InventoryStore& inventory) {
  ADS_ASSIGN_OR_RETURN(std::vector<store::PublisherRecord> publishers, inventory.ListPublishers());
  std::unordered_map<store::Id, reports::Payout> payouts;
  for (const store::PublisherRecord& p : publishers) payouts[p.id] = PayoutOf(p);
  return payouts;
}

}  // namespace adserver::admin::detail
