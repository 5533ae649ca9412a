#pragma once

// Delivery of the budget takes the cluster CLI queues with the conversions it bills (PostgreSQL
// `budget_takes`, store::PostgresEventsStore::BillConversionsTo) to the campaigns' remaining
// budgets in Redis. Run by the CLI (cluster::CliAttribution: at start, after each batch, at exit)
// and by every node's sync thread (app::ClusterNode, every few seconds), so that a take a CLI
// could not deliver (Redis away, the process killed) reaches Redis without another CLI run.
// Concurrent deliverers take distinct rows (store::PostgresStore::DrainBudgetTakes).

#include "common/status.h"
#include "decision/budget_leases.h"
#include "store/node_counters_store.h"

namespace adserver::cluster {

// Delivers queued takes until the queue is empty or Redis (or PostgreSQL) refuses: a positive
// amount is taken from the campaign's remaining budget (less than asked, when it ran out
// meanwhile, is overspend of conversions already made; a campaign Redis does not know is left to
// its next seed, which reads the counters that already hold the conversion), a negative one
// given back. The error names the campaign and the amount not delivered.
Status DeliverBudgetTakes(store::NodeCountersStore& queue, decision::BudgetAuthority& budgets);

}  // namespace adserver::cluster
