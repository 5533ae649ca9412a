#pragma once

// Onchain conversions (issue 15, CPTx): the live indexer's block sink. For every interaction
// of a wallet W with a project P in an applied block, and every campaign C whose conversion
// rule names P, the attributor reads W's exposures to C, attributes the interaction
// (events/attribution.h: window, kind, last touch) and records a conversion (EventsStore:
// unique per transaction and campaign, once per person per window when asked). Recorded
// conversions are billed through `on_billed` (the decision engine: CPA spend, learned CVR).
// Blocks a reorg abandons have their conversions marked reorged and unbilled (`on_reverted`).
// Runs on the indexer's thread, before each LMDB commit (see BlockSink).
//
// Nothing waits in memory: a batch the events store cannot take (disk full, a locked database)
// fails OnApplied, so the indexer commits nothing and offers the blocks again after a backoff
// (or, for an import, the import fails and nothing of it is written). Inserts are idempotent
// (unique per transaction and campaign), so a block offered again never counts twice, and a
// height whose block changed in between (a crash, then a reorg) has the conversions recorded
// for the old block reverted before the new one is attributed.

#include <atomic>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/published.h"
#include "decision/catalog.h"
#include "events/attribution.h"
#include "ingest/chain/block_sink.h"
#include "ingest/transaction_sink.h"
#include "store/campaign_counter_store.h"
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

  // Fills in the total spend so far of each campaign keyed in the map (all keys are campaigns
  // with a total budget and a CPA price). Called once per batch with such conversions; an error
  // fails the batch (offered again later). Without it a total budget does not limit billing.
  using SpentTotals = std::function<Status(std::unordered_map<int64_t, Micros>& spent)>;
  // Conversions (issue 37) are billed up to the campaign's total budget: one whose price would
  // pass what is left is recorded store::ConversionStatus::kOverBudget (listed, never billed).
  void SetSpentTotals(SpentTotals fn) { spent_totals_ = std::move(fn); }

  Status OnApplied(int64_t chain_id, std::span<const ingest::chain::AppliedBlock> blocks) override;
  void OnReverted(int64_t chain_id, std::span<const ingest::chain::RevertedBlock> blocks) override;

  // Bulk activity imports (admin API): rows naming a transaction are attributed like the
  // interactions of a block, at the row's time; they have no block hash, so no reorg undoes them.
  bool Wants(int64_t project_id, int64_t unix_seconds) const override;
  Status OnImported(std::span<const ingest::chain::ChainInteraction> interactions) override;

  // Conversions another process records in the same database (the CLI's `activity import` and
  // `index` while a server runs): StartFollowing once at start-up, before the counters are
  // reconciled with the events, then FollowOthers periodically (Snapshot, at each counter
  // flush). Each billed conversion recorded elsewhere since is passed to `on_billed` once;
  // this attributor's own are billed when recorded and skipped. A conversion billed here
  // (followed or its own) that another process reverts (a reorg its indexer saw) is passed to
  // `on_reverted` once; one reverted before it was followed is never billed. Reverts are
  // followed in their commit order (EventsStore::ReorgedConversionsAfterSeq).
  //
  // Issue 37: `from`, the marks the counters were last saved at (CounterFlusher), makes the
  // start exact: every billed conversion above from->conversion_id is billed and every revert
  // above from->revert_seq of a conversion up to it is undone, once, before serving (what other
  // processes did while no server ran, and what a kill -9 lost of this process's own). Without
  // marks (counters saved before they existed) following starts at the current ends.
  Status StartFollowing(const std::optional<store::CounterMarks>& from = std::nullopt);
  Status FollowOthers();
  // Follows the others, then runs `take` with the marks of everything billed and undone so
  // far, while nothing is billed or undone (the counter flusher reads the ledger in `take`).
  Status Snapshot(const std::function<void(const store::CounterMarks&)>& take);

  // Cluster mode (issue 37 item 3), where a node bills only what it records: runs `take` with
  // the highest id of the conversions this attributor recorded and the highest revert_seq of
  // the reverts it made, while nothing is billed or undone (the counter flusher reads the
  // ledger in `take`). Every one up to them reached on_billed / on_reverted, none after.
  void SnapshotOwn(const std::function<void(const store::CounterMarks&)>& take);
  // Where those marks start (start-up, after the counters were reconciled up to them).
  void SetOwnMarks(store::Id conversion_id, int64_t revert_seq);

  // Conversions this attributor recorded over their campaign's total budget (not billed).
  const std::atomic<uint64_t>& over_budget() const { return over_budget_; }

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
  // Records `candidates` and bills the ones that were new and fit their campaign's budget.
  Status Insert(std::span<store::ConversionCandidate> candidates) ADS_REQUIRES(mu_);
  // Sets each budgeted candidate's budget_left (from spent_totals_).
  Status FillBudgetsLeft(std::span<store::ConversionCandidate> candidates);
  // Reverts (and unbills) what was recorded for other blocks at the heights of `blocks`.
  Status RevertReplaced(int64_t chain_id, std::span<const ingest::chain::AppliedBlock> blocks)
      ADS_REQUIRES(mu_);
  // A conversion this attributor reverted: unbilled, and not followed again.
  void Reverted(const store::ConversionRecord& c) ADS_REQUIRES(mu_);
  Status FollowOthersLocked() ADS_REQUIRES(mu_);
  // FollowOthers' second half: the reverts other processes made.
  Status FollowReverts() ADS_REQUIRES(mu_);

  store::ExposureStore& exposures_;
  store::EventsStore& events_;
  const Published<decision::Catalog>& catalogs_;
  const Clock& clock_;
  Callback on_billed_;
  Callback on_reverted_;
  std::function<void()> before_attribution_;
  SpentTotals spent_totals_;
  std::atomic<uint64_t> over_budget_{0};
  // Serialises the indexer's thread, admin imports and FollowOthers: no own insert is in
  // flight while FollowOthers reads.
  Mutex mu_;
  bool following_ ADS_GUARDED_BY(mu_) = false;
  store::Id followed_up_to_ ADS_GUARDED_BY(mu_) = 0;    // every conversion id up to it is known
  std::vector<store::Id> own_ids_ ADS_GUARDED_BY(mu_);  // own ids above followed_up_to_, sorted
  // Reverted conversions not to undo (again), with their revert_seq; those at or below
  // revert_seq_ are forgotten once the reverts are read past them.
  std::unordered_map<store::Id, int64_t> reverts_seen_ ADS_GUARDED_BY(mu_);
  int64_t revert_seq_ ADS_GUARDED_BY(mu_) = 0;           // every revert up to it is followed
  store::Id own_last_id_ ADS_GUARDED_BY(mu_) = 0;        // SnapshotOwn
  int64_t own_last_revert_seq_ ADS_GUARDED_BY(mu_) = 0;  // SnapshotOwn
};

}  // namespace adserver::events
