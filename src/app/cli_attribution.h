#pragma once

// Onchain conversion attribution for the CLI's `activity import` and `index` (issue 15): the
// ConversionAttributor a server runs, over the data directory's exposure index and events
// database, with the serving catalog built from the store (rebuilt when older than a few
// seconds, for the long-running `index`). It bills nothing in memory: a server running on the
// same data directory adds the conversions to its budgets within a second
// (ConversionAttributor::FollowOthers), a server started later at start-up
// (CounterFlusher::Reconcile). Exposures a running server still buffers (well under a second
// of them) are not seen.

#include <chrono>
#include <memory>
#include <span>
#include <string>

#include "common/published.h"
#include "common/status.h"
#include "decision/catalog.h"
#include "events/conversion_attributor.h"
#include "ingest/chain/block_sink.h"
#include "ingest/transaction_sink.h"
#include "store/lmdb/lmdb_exposure_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/store.h"

namespace adserver::app {

class CliAttribution final : public ingest::chain::BlockSink, public ingest::TransactionSink {
 public:
  // `store` (the data directory's) must outlive the result.
  static Result<std::unique_ptr<CliAttribution>> Open(const std::string& data_dir,
                                                      store::Store& store);

  Status OnApplied(int64_t chain_id,
                   std::span<const ingest::chain::AppliedBlock> blocks) override;
  void OnReverted(int64_t chain_id, std::span<const ingest::chain::RevertedBlock> blocks) override;
  bool Wants(int64_t project_id, int64_t unix_seconds) const override;
  Status OnImported(std::span<const ingest::chain::ChainInteraction> interactions) override;

  // Conversions recorded (newly billed) so far.
  uint64_t recorded() const { return recorded_; }

  explicit CliAttribution(store::Store& store) : store_(store) {}

 private:
  // Rebuilds the catalog when it is older than kCatalogAge.
  Status Refresh();

  static constexpr std::chrono::seconds kCatalogAge{5};

  store::Store& store_;
  std::unique_ptr<store::SqliteEventsStore> events_;
  std::unique_ptr<store::LmdbExposureStore> exposures_;
  Published<decision::Catalog> catalogs_;
  std::unique_ptr<events::ConversionAttributor> attributor_;
  std::chrono::steady_clock::time_point built_{};
  uint64_t recorded_ = 0;
};

}  // namespace adserver::app
