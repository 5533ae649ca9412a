#pragma once

// Publishers' payout rules in the form the reports compute earnings with (reports/report.h).

#include <unordered_map>

#include "common/status.h"
#include "reports/report.h"
#include "store/inventory_store.h"
#include "store/records.h"

namespace adserver::admin::detail {

reports::Payout PayoutOf(const store::PublisherRecord& publisher);

// Every publisher's payout by id.
Result<std::unordered_map<store::Id, reports::Payout>> LoadPayouts(
    store::InventoryStore& inventory);

}  // namespace adserver::admin::detail
