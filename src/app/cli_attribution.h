#pragma once

// Onchain conversion attribution for the CLI's `activity import` and `index` (issue 15): the
// ConversionAttributor a server runs, with the serving catalog built from the store (rebuilt
// when older than a few seconds, for the long-running `index`).
//
// Embedded (Open): over the data directory's exposure index and events database. It bills
// nothing in memory: a server running on the same data directory adds the conversions to its
// budgets within a second (ConversionAttributor::FollowOthers), a server started later at
// start-up (CounterFlusher::Reconcile). Exposures a running server still buffers (well under a
// second of them) are not seen.
//
// Cluster mode (OpenCluster, issue 17): over the cluster's exposures and events in PostgreSQL.
// Nodes do not follow each other's conversions (each node's counters are its own, the cluster's
// the sum), so this process bills what it records itself, in the transaction that records it
// (PostgresEventsStore::BillConversionsTo): every conversion (or revert) is added to the counters
// row store::kCliNodeId of node_campaign_counters, which every node reads with the other nodes'
// rows within a second, and a budgeted campaign's price is queued in budget_takes, to be taken
// from (a revert's given back to) its remaining budget in Redis, as a node's lease would. The
// queue is delivered to Redis when this opens (what a killed run left), after each attributed
// batch and at Finish(); what Redis refuses stays queued for the next run or for the nodes,
// which deliver the queue too (cluster/budget_takes.h). The counters are the
// record of spend and are never behind the conversions; Redis only mirrors it for the leases.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "common/published.h"
#include "common/status.h"
#include "decision/budget_leases.h"
#include "decision/catalog.h"
#include "events/conversion_attributor.h"
#include "ingest/chain/block_sink.h"
#include "ingest/transaction_sink.h"
#include "store/cluster_options.h"
#include "store/events_store.h"
#include "store/exposure_store.h"
#include "store/postgres/postgres_store.h"
#include "store/stores.h"

namespace adserver::app {

class CliAttribution final : public ingest::chain::BlockSink, public ingest::TransactionSink {
 public:
  // Embedded. Reads the inventory and the counters of `stores` (the data directory's).
  static Result<std::unique_ptr<CliAttribution>> Open(const std::string& data_dir,
                                                      const store::Stores& stores);
  // Cluster mode. Reads the inventory and the counters of `stores` (the cluster's).
  static Result<std::unique_ptr<CliAttribution>> OpenCluster(const store::ClusterOptions& cluster,
                                                             const store::Stores& stores);
  ~CliAttribution() override;

  Status OnApplied(int64_t chain_id,
                   std::span<const ingest::chain::AppliedBlock> blocks) override;
  void OnReverted(int64_t chain_id, std::span<const ingest::chain::RevertedBlock> blocks) override;
  bool Wants(int64_t project_id, int64_t unix_seconds) const override;
  Status OnImported(std::span<const ingest::chain::ChainInteraction> interactions) override;

  // Cluster mode: delivers the queued budget takes to Redis, trying a few times; what Redis
  // still refuses is logged with its amount and stays queued for a node's sync thread or the
  // next run (until then the nodes may lease up to that much more). Always OK: the conversions
  // and their counters are committed. Embedded: nothing to do.
  Status Finish();

  // Conversions recorded (newly billed) so far.
  uint64_t recorded() const { return recorded_; }

  explicit CliAttribution(const store::Stores& stores)
      : inventory_(stores.inventory), stored_counters_(stores.counters) {}

 private:
  // ConversionAttributor::SpentTotals: each campaign's spend from the events and counters.
  Status SpentTotals(std::unordered_map<int64_t, Micros>& spent);
  // Rebuilds the catalog when it is older than kCatalogAge.
  Status Refresh();
  void Attach();
  // Cluster mode: delivers queued budget takes to Redis (PostgresStore::DrainBudgetTakes) until
  // the queue is empty or a delivery fails.
  Status DeliverBudgetTakes();
  // Whether campaign `id` has a total budget in the current catalog (its takes go to Redis).
  bool Budgeted(store::Id id) const;

  static constexpr std::chrono::seconds kCatalogAge{5};

  std::shared_ptr<store::InventoryStore> inventory_;
  std::shared_ptr<store::CampaignCounterStore> stored_counters_;  // the counters to read
  // Owned in Open/OpenCluster; the references below point at them or at OpenWith's.
  std::unique_ptr<store::EventsStore> owned_events_;
  std::unique_ptr<store::ExposureStore> owned_exposures_;
  std::unique_ptr<store::PostgresStore> owned_counters_;
  std::unique_ptr<decision::BudgetAuthority> owned_budgets_;
  store::EventsStore* events_ = nullptr;
  store::ExposureStore* exposures_ = nullptr;
  store::PostgresStore* counters_ = nullptr;       // cluster mode only
  decision::BudgetAuthority* budgets_ = nullptr;   // cluster mode only
  Published<decision::Catalog> catalogs_;
  std::unique_ptr<events::ConversionAttributor> attributor_;
  std::chrono::steady_clock::time_point built_{};
  uint64_t recorded_ = 0;
};

}  // namespace adserver::app
