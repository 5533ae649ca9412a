#pragma once

// Onchain conversions (issue 15, CPTx): the live indexer's block sink. For every interaction
// of a wallet W with a project P in an applied block, and every campaign C whose conversion
// rule names P, the attributor reads W's exposures to C, attributes the interaction
// (events/attribution.h: window, kind, last touch) and records a conversion (EventsStore:
// unique per transaction and campaign, once per person per window when asked). Recorded
// conversions are billed through `on_billed` (the decision engine: CPA spend, learned CVR).
// Blocks a reorg abandons have their conversions marked reorged and unbilled (`on_reverted`).
// Runs on the indexer's thread, after each LMDB commit.
//
// A batch the events store cannot take (InsertConversions fails: disk full, a locked database)
// is kept and offered again, first, with the next applied batch: inserts are idempotent (unique
// per transaction and campaign), so a retry never counts twice. At most `kMaxPending` conversions
// wait; beyond that the oldest are dropped with an error log (the activity itself is kept by the
// indexer, so an operator can re-attribute by replaying the blocks). A reorg drops the waiting
// conversions of the blocks it abandons.

#include <functional>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/published.h"
#include "decision/catalog.h"
#include "ingest/chain/block_sink.h"
#include "store/events_store.h"
#include "store/exposure_store.h"

namespace adserver::events {

class ConversionAttributor final : public ingest::chain::BlockSink {
 public:
  using Callback = std::function<void(const store::ConversionRecord&)>;
  // Every reference must outlive the attributor.
  ConversionAttributor(store::ExposureStore& exposures, store::EventsStore& events,
                       const Published<decision::Catalog>& catalogs, const Clock& clock,
                       Callback on_billed, Callback on_reverted);

  // Runs before each applied batch is attributed (serve writes buffered exposures there).
  void SetBeforeAttribution(std::function<void()> fn) { before_attribution_ = std::move(fn); }

  void OnApplied(int64_t chain_id, std::span<const ingest::chain::AppliedBlock> blocks) override;
  void OnReverted(int64_t chain_id, std::span<const ingest::chain::RevertedBlock> blocks) override;

  // Conversions waiting for a retry after a failed insert.
  size_t pending() const { return pending_.size(); }

  static constexpr size_t kMaxPending = size_t{1} << 16;

 private:
  // Inserts `pending_` (failed earlier) and then `fresh`; keeps them all for the next call when
  // the store fails.
  void Insert(int64_t chain_id, std::vector<store::ConversionCandidate> fresh);

  store::ExposureStore& exposures_;
  store::EventsStore& events_;
  const Published<decision::Catalog>& catalogs_;
  const Clock& clock_;
  Callback on_billed_;
  Callback on_reverted_;
  std::function<void()> before_attribution_;
  // Only the indexer's thread touches it.
  std::vector<store::ConversionCandidate> pending_;
};

}  // namespace adserver::events
