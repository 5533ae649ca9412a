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
#include <mutex>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/published.h"
#include "decision/catalog.h"
#include "events/attribution.h"
#include "ingest/chain/block_sink.h"
#include "ingest/transaction_sink.h"
#include "store/events_store.h"
#include "store/exposure_store.h"

namespace adserver::events {

class ConversionAttributor final : public ingest::chain::BlockSink,
                                   public ingest::TransactionSink {
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

  // Bulk activity imports (admin API): rows naming a transaction are attributed like the
  // interactions of a block, at the row's time; they have no block hash, so no reorg undoes them.
  bool Wants(int64_t project_id, int64_t unix_seconds) const override;
  void OnImported(std::span<const ingest::chain::ChainInteraction> interactions) override;

  // Conversions waiting for a retry after a failed insert.
  size_t pending() const;

  static constexpr size_t kMaxPending = size_t{1} << 16;

 private:
  // Where an interaction happened.
  struct BlockRef {
    int64_t chain_id = 0;
    uint64_t number = 0;
    ingest::chain::Hash32 hash;  // zero for imported rows
    int64_t time = 0;
    bool confirmed = true;
  };
  // The person's last billed click on the campaign whose id `campaign_id` holds at the call.
  LastClick LastClickOf(const int64_t& campaign_id);
  // Conversion candidates of one interaction, one per campaign whose rule it meets.
  void Collect(const decision::Catalog& catalog,
               const ingest::chain::ChainInteraction& interaction, const BlockRef& block,
               std::vector<store::ConversionCandidate>& out);
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
  // Serialises the indexer's thread and admin imports.
  mutable std::mutex mu_;
  std::vector<store::ConversionCandidate> pending_;  // guarded by mu_
};

}  // namespace adserver::events
