#pragma once

// Onchain conversion attribution for the CLI's `activity import` and `index` (issue 15): the
// ConversionAttributor a server runs, with the serving catalog built from the inventory (rebuilt
// when older than a few seconds, for the long-running `index`). Over ports: the concrete stores
// are opened by app::OpenCliAttribution.
//
// Embedded: over the data directory's exposure index and events database. It bills nothing in
// memory: a server running on the same data directory adds the conversions to its budgets
// within a second (ConversionAttributor::FollowOthers), a server started later at start-up
// (CounterFlusher::Reconcile). Exposures a running server still buffers (well under a second
// of them) are not seen.
//
// Cluster mode (issue 17): over the cluster's exposures and events in PostgreSQL. Nodes do not
// follow each other's conversions (each node's counters are its own, the cluster's the sum), so
// this process bills what it records itself, in the transaction that records it
// (PostgresEventsStore::BillConversionsTo, set up by the opener with Budgeted below): every
// conversion (or revert) is added to the counters row store::kCliNodeId of
// node_campaign_counters, which every node reads with the other nodes' rows within a second, and
// a budgeted campaign's price is queued in budget_takes, to be taken from (a revert's given back
// to) its remaining budget in Redis, as a node's lease would. The queue is delivered to Redis
// at Start (what a killed run left), after each attributed batch and at Finish(); what Redis
// refuses stays queued for the next run or for the nodes, which deliver the queue too
// (cluster/budget_takes.h). The counters are the record of spend and are never behind the
// conversions; Redis only mirrors it for the leases.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/published.h"
#include "common/status.h"
#include "decision/budget_leases.h"
#include "decision/catalog.h"
#include "events/conversion_attributor.h"
#include "ingest/chain/block_sink.h"
#include "ingest/transaction_sink.h"
#include "store/events_store.h"
#include "store/exposure_store.h"
#include "store/inventory_store.h"
#include "store/node_counters_store.h"

namespace adserver::cluster {

// Cluster mode: the queue of budget takes the conversions billed here leave (PostgreSQL) and
// the remaining budgets they go to (Redis).
struct BudgetTakeDelivery {
  std::unique_ptr<store::NodeCountersStore> queue;
  std::unique_ptr<decision::BudgetAuthority> budgets;
};

struct AttributionStores {
  std::shared_ptr<store::InventoryStore> inventory;
  // Embedded: the counters a running server flushes, read as spend (null in cluster mode,
  // where the spend of this process's conversions is in the events).
  std::shared_ptr<store::CampaignCounterStore> counters;
  std::unique_ptr<store::EventsStore> events;
  std::unique_ptr<store::ExposureStore> exposures;
  std::optional<BudgetTakeDelivery> takes;  // cluster mode
};

class CliAttribution final : public ingest::chain::BlockSink, public ingest::TransactionSink {
 public:
  explicit CliAttribution(AttributionStores stores);
  ~CliAttribution() override;

  // Builds the catalog; cluster mode: delivers what a killed run left queued (a failure is
  // logged and retried after the next batch). Call once, before the first block or import.
  Status Start();

  Status OnApplied(int64_t chain_id, std::span<const ingest::chain::AppliedBlock> blocks) override;
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

  // Whether campaign `id` has a total budget in the current catalog (cluster mode: its
  // conversions' takes are queued for Redis). Thread-safe.
  bool Budgeted(store::Id id) const;

 private:
  // ConversionAttributor::SpentTotals: each campaign's spend from the events and counters.
  Status SpentTotals(std::unordered_map<int64_t, Micros>& spent);
  // Rebuilds the catalog when it is older than kCatalogAge.
  Status Refresh();
  // Cluster mode: delivers queued budget takes after `what` (logged when it fails: retried
  // after the next batch, never by failing, and so re-offering, what was attributed).
  void DeliverTakesAfter(const char* what);

  static constexpr std::chrono::seconds kCatalogAge{5};

  AttributionStores stores_;
  Published<decision::Catalog> catalogs_;
  std::unique_ptr<events::ConversionAttributor> attributor_;
  std::chrono::steady_clock::time_point built_{};
  uint64_t recorded_ = 0;
};

}  // namespace adserver::cluster
