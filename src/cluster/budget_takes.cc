#include "cluster/budget_takes.h"

#include <string>

namespace adserver::cluster {

namespace {
constexpr int kBatch = 1000;  // rows per DrainBudgetTakes
}  // namespace

Status DeliverBudgetTakes(store::NodeCountersStore& queue, decision::BudgetAuthority& budgets) {
  const auto apply = [&budgets](store::Id campaign, Micros micros) -> Status {
    Status st;
    if (micros < 0) {
      st = budgets.Give(campaign, -micros);
    } else {
      Result<Micros> took = budgets.Take(campaign, micros);
      if (!took.ok() && took.status().code() != Code::kNotFound) st = took.status();
    }
    if (st.ok()) return st;
    return Status(st.code(), "campaign " + std::to_string(campaign) + ": " +
                                 std::to_string(micros) + " micros not delivered: " + st.message());
  };
  for (;;) {
    ADS_ASSIGN_OR_RETURN(size_t delivered, queue.DrainBudgetTakes(apply, kBatch));
    if (delivered < static_cast<size_t>(kBatch)) return OkStatus();
  }
}

}  // namespace adserver::cluster
