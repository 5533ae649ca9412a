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
// the sum), so this process bills what it records itself: every conversion (or revert) is added
// to the counters row store::kCliNodeId of node_campaign_counters, which every node reads with the
// other nodes' rows within a second, and a budgeted campaign's price is taken from (a revert's
// given back to) its remaining budget in Redis, as a node's lease would. Billing is written
// after each attributed batch; what PostgreSQL or Redis refuses is kept and tried again after
// the next batch and at Finish(). The counters are the record of spend: Finish fails when they
// cannot be written. Redis only mirrors it for the leases: a take Redis still refuses at
// Finish is logged with its amount (the nodes may then lease up to that much more than
// remains) and the command succeeds; the conversions are recorded either way.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

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
#include "store/store.h"

namespace adserver::app {

class CliAttribution final : public ingest::chain::BlockSink, public ingest::TransactionSink {
 public:
  // Embedded. `store` (the data directory's) must outlive the result.
  static Result<std::unique_ptr<CliAttribution>> Open(const std::string& data_dir,
                                                      store::Store& store);
  // Cluster mode. `store` (the cluster's) must outlive the result.
  static Result<std::unique_ptr<CliAttribution>> OpenCluster(const store::ClusterOptions& cluster,
                                                             store::Store& store);
  ~CliAttribution() override;

  Status OnApplied(int64_t chain_id,
                   std::span<const ingest::chain::AppliedBlock> blocks) override;
  void OnReverted(int64_t chain_id, std::span<const ingest::chain::RevertedBlock> blocks) override;
  bool Wants(int64_t project_id, int64_t unix_seconds) const override;
  Status OnImported(std::span<const ingest::chain::ChainInteraction> interactions) override;

  // Cluster mode: writes the billing still pending, trying a few times. Unavailable naming the
  // spend whose counters could not be written. Embedded: nothing to do.
  Status Finish();

  // Conversions recorded (newly billed) so far.
  uint64_t recorded() const { return recorded_; }

  explicit CliAttribution(store::Store& store) : store_(store) {}

 private:
  // Billing not yet written (cluster mode), per campaign.
  struct Pending {
    store::CampaignCountersRecord counters;  // a delta; campaign_id 0 = nothing pending
    Micros budget_take = 0;                   // to take from Redis (negative: to give back)
  };

  // Rebuilds the catalog when it is older than kCatalogAge.
  Status Refresh();
  void Attach();
  // Cluster mode: adds a billed (sign 1) or reverted (-1) conversion to pending_.
  void Bill(const store::ConversionRecord& c, int sign);
  // Cluster mode: writes pending_ (counters first, then Redis); what fails stays pending.
  Status WritePending();

  static constexpr std::chrono::seconds kCatalogAge{5};

  store::Store& store_;
  // Owned in Open/OpenCluster; the references below point at them or at OpenWith's.
  std::unique_ptr<store::EventsStore> owned_events_;
  std::unique_ptr<store::ExposureStore> owned_exposures_;
  std::unique_ptr<store::PostgresStore> owned_counters_;
  std::unique_ptr<decision::BudgetAuthority> owned_budgets_;
  store::EventsStore* events_ = nullptr;
  store::ExposureStore* exposures_ = nullptr;
  store::PostgresStore* counters_ = nullptr;       // cluster mode only
  decision::BudgetAuthority* budgets_ = nullptr;   // cluster mode only
  std::map<store::Id, Pending> pending_;
  Published<decision::Catalog> catalogs_;
  std::unique_ptr<events::ConversionAttributor> attributor_;
  std::chrono::steady_clock::time_point built_{};
  uint64_t recorded_ = 0;
};

}  // namespace adserver::app
