#include "events/conversion_attributor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "events/attribution.h"

namespace adserver::events {
namespace {

AttributionRule RuleOf(const decision::ConversionRule& rule) {
  AttributionRule out;
  out.kind = rule.kind == decision::ConversionRule::Kind::kNew ? AttributionRule::Kind::kNew
             : rule.kind == decision::ConversionRule::Kind::kReturning
                 ? AttributionRule::Kind::kReturning
                 : AttributionRule::Kind::kAny;
  out.returning_after_days = rule.returning_after_days;
  out.window_days = rule.window_days;
  return out;
}

}  // namespace

ConversionAttributor::ConversionAttributor(store::ExposureStore& exposures,
                                           store::EventsStore& events,
                                           const Published<decision::Catalog>& catalogs,
                                           const Clock& clock, Callback on_billed,
                                           Callback on_reverted)
    : exposures_(exposures),
      events_(events),
      catalogs_(catalogs),
      clock_(clock),
      on_billed_(std::move(on_billed)),
      on_reverted_(std::move(on_reverted)) {}

LastClick ConversionAttributor::LastClickOf(const int64_t& campaign_id) {
  return [this, &campaign_id](uint64_t person, int64_t served_from,
                              int64_t clicked_by) -> std::optional<store::ClickRecord> {
    Result<std::optional<store::ClickRecord>> c =
        events_.LastBilledClick(campaign_id, person, served_from, clicked_by);
    if (!c.ok()) {
      ADS_LOG(error, "click lookup failed", "error", c.status().message());
      return std::nullopt;
    }
    return *c;
  };
}

void ConversionAttributor::Collect(const decision::Catalog& catalog,
                                   const ingest::chain::ChainInteraction& interaction,
                                   const BlockRef& block,
                                   std::vector<store::ConversionCandidate>& out) {
  // Per campaign, in Attribute: the person's last billed click in the window.
  int64_t campaign_id = 0;
  LastClick last_click = LastClickOf(campaign_id);
  for (decision::Index index : catalog.ConversionCampaigns(interaction.project_id)) {
    const decision::ConversionCampaign& campaign = catalog.conversion_campaign(index);
    Result<std::optional<store::ExposureRecord>> record =
        exposures_.Get(interaction.wallet, campaign.id);
    if (!record.ok()) {
      ADS_LOG(error, "exposure read failed", "error", record.status().message());
      continue;
    }
    if (!record->has_value()) continue;
    campaign_id = campaign.id;
    std::optional<Attribution> attribution =
        Attribute(**record, RuleOf(campaign.rule), block.time, last_click);
    if (!attribution) continue;
    const store::ExposureEntry& exposure = attribution->exposure;
    store::ConversionRecord r{
        .campaign_id = campaign.id,
        .ad_id = exposure.ad_id,
        .publisher_id = exposure.publisher_id,
        .ad_unit_id = exposure.ad_unit_id,
        .arm = exposure.arm,
        .decision_id = exposure.decision_id,
        .wallet = interaction.wallet,
        .person = exposure.person,
        .chain_id = block.chain_id,
        .tx_hash = interaction.tx_hash.bytes,
        .log_index = interaction.log_index ? static_cast<int64_t>(*interaction.log_index) : -1,
        .block_number = static_cast<int64_t>(block.number),
        .block_hash = block.hash.bytes,
        .block_time = block.time,
        .click_touch = attribution->touch == Touch::kClick,
        .touched_at = attribution->touched_at,
        .price = campaign.pricing_model == PricingModel::kCpa ? campaign.bid_micros : 0,
        .confirmed = block.confirmed,
    };
    out.push_back(store::ConversionCandidate{
        .record = std::move(r),
        .count_once_per_person = campaign.rule.count_once_per_person,
        .window_seconds = int64_t{campaign.rule.window_days} * 86400,
        // Set by FillBudgetsLeft: a campaign's spend is read once per batch.
        .budget_left = campaign.total_budget_micros});
  }
}

Status ConversionAttributor::OnApplied(int64_t chain_id,
                                       std::span<const ingest::chain::AppliedBlock> blocks) {
  MutexLock lock(mu_);
  ADS_RETURN_IF_ERROR(RevertReplaced(chain_id, blocks));
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  bool any_interaction = false;
  for (const ingest::chain::AppliedBlock& block : blocks) {
    any_interaction = any_interaction || !block.interactions.empty();
  }
  if (!catalog || catalog->max_conversion_window_days() == 0 || !any_interaction) {
    return OkStatus();
  }
  if (before_attribution_) before_attribution_();
  std::vector<store::ConversionCandidate> candidates;
  for (const ingest::chain::AppliedBlock& block : blocks) {
    BlockRef ref{.chain_id = chain_id,
                 .number = block.number,
                 .hash = block.hash,
                 .time = block.timestamp,
                 .confirmed = block.confirmed};
    for (const ingest::chain::ChainInteraction& interaction : block.interactions) {
      Collect(*catalog, interaction, ref, candidates);
    }
  }
  return Insert(candidates);
}

Status ConversionAttributor::RevertReplaced(int64_t chain_id,
                                            std::span<const ingest::chain::AppliedBlock> blocks) {
  std::vector<store::BlockAtHeight> heights;
  heights.reserve(blocks.size());
  for (const ingest::chain::AppliedBlock& block : blocks) {
    heights.push_back({.number = static_cast<int64_t>(block.number), .hash = block.hash.bytes});
  }
  ADS_ASSIGN_OR_RETURN(std::vector<store::ConversionRecord> reverted,
                       events_.RevertReplacedConversions(chain_id, heights, clock_.NowSeconds()));
  if (!reverted.empty()) {
    ADS_LOG(warn, "conversions of blocks replaced before they were indexed reverted", "chain",
            chain_id, "conversions", reverted.size());
  }
  for (const store::ConversionRecord& c : reverted) Reverted(c);
  return OkStatus();
}

bool ConversionAttributor::Wants(int64_t project_id, int64_t unix_seconds) const {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog || catalog->ConversionCampaigns(project_id).empty()) return false;
  int64_t now = clock_.NowSeconds();
  return unix_seconds >= now - int64_t{catalog->max_conversion_window_days()} * 86400 &&
         unix_seconds <= now + 86400;
}

Status ConversionAttributor::OnImported(
    std::span<const ingest::chain::ChainInteraction> interactions) {
  MutexLock lock(mu_);
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog || catalog->max_conversion_window_days() == 0 || interactions.empty()) {
    return OkStatus();
  }
  if (before_attribution_) before_attribution_();
  std::vector<store::ConversionCandidate> candidates;
  for (const ingest::chain::ChainInteraction& interaction : interactions) {
    // An imported row has no block hash (a reorg cannot undo it) and is history: confirmed.
    BlockRef ref{.chain_id = interaction.chain_id,
                 .number = interaction.block_number,
                 .time = interaction.block_time,
                 .confirmed = true};
    Collect(*catalog, interaction, ref, candidates);
  }
  return Insert(candidates);
}

Status ConversionAttributor::FillBudgetsLeft(std::span<store::ConversionCandidate> candidates) {
  std::unordered_map<int64_t, Micros> spent;
  for (store::ConversionCandidate& c : candidates) {
    if (!c.budget_left) continue;
    if (c.record.price <= 0 || !spent_totals_) {
      c.budget_left.reset();  // nothing to bill, or no spend to compare with
      continue;
    }
    spent.emplace(c.record.campaign_id, 0);
  }
  if (spent.empty()) return OkStatus();
  ADS_RETURN_IF_ERROR(spent_totals_(spent));
  for (store::ConversionCandidate& c : candidates) {
    if (!c.budget_left) continue;
    c.budget_left = std::max<Micros>(0, *c.budget_left - spent[c.record.campaign_id]);
  }
  return OkStatus();
}

Status ConversionAttributor::Insert(std::span<store::ConversionCandidate> candidates) {
  if (candidates.empty()) return OkStatus();
  ADS_RETURN_IF_ERROR(FillBudgetsLeft(candidates));
  ADS_ASSIGN_OR_RETURN(std::vector<store::ConversionRecord> recorded,
                       events_.InsertConversions(candidates, clock_.NowSeconds()));
  for (const store::ConversionRecord& c : recorded) {
    if (following_) own_ids_.push_back(c.id);  // ids grow with each insert: stays sorted
    own_last_id_ = std::max(own_last_id_, c.id);
    if (c.status == store::ConversionStatus::kOverBudget) {
      over_budget_.fetch_add(1, std::memory_order_relaxed);
      ADS_LOG(info, "conversion over the campaign's total budget: recorded, not billed", "campaign",
              c.campaign_id, "conversion", c.id);
      continue;
    }
    if (on_billed_) on_billed_(c);
  }
  return OkStatus();
}

Status ConversionAttributor::StartFollowing(const std::optional<store::CounterMarks>& from) {
  MutexLock lock(mu_);
  own_ids_.clear();
  reverts_seen_.clear();
  if (from) {
    followed_up_to_ = from->conversion_id;
    revert_seq_ = from->revert_seq;
  } else {
    ADS_ASSIGN_OR_RETURN(followed_up_to_, events_.LastConversionId());
    ADS_ASSIGN_OR_RETURN(revert_seq_, events_.LastRevertSeq());
  }
  following_ = true;
  if (!from) return OkStatus();
  const store::Id mark = followed_up_to_;
  const int64_t seq = revert_seq_;
  ADS_RETURN_IF_ERROR(FollowOthersLocked());
  if (followed_up_to_ != mark || revert_seq_ != seq) {
    ADS_LOG(info, "conversions and reverts since the counters were saved applied", "from_id", mark,
            "to_id", followed_up_to_, "from_revert", seq, "to_revert", revert_seq_);
  }
  return OkStatus();
}

Status ConversionAttributor::FollowOthers() {
  MutexLock lock(mu_);
  return FollowOthersLocked();
}

Status ConversionAttributor::Snapshot(const std::function<void(const store::CounterMarks&)>& take) {
  MutexLock lock(mu_);
  if (!following_) return InternalError("conversions are not followed");
  ADS_RETURN_IF_ERROR(FollowOthersLocked());
  take(store::CounterMarks{.conversion_id = followed_up_to_, .revert_seq = revert_seq_});
  return OkStatus();
}

void ConversionAttributor::SnapshotOwn(
    const std::function<void(const store::CounterMarks&)>& take) {
  MutexLock lock(mu_);
  take(store::CounterMarks{.conversion_id = own_last_id_, .revert_seq = own_last_revert_seq_});
}

void ConversionAttributor::SetOwnMarks(store::Id conversion_id, int64_t revert_seq) {
  MutexLock lock(mu_);
  own_last_id_ = conversion_id;
  own_last_revert_seq_ = revert_seq;
}

Status ConversionAttributor::FollowOthersLocked() {
  constexpr int kBatch = 1000;
  if (!following_) return OkStatus();
  for (;;) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::ConversionRecord> rows,
                         events_.ConversionsAfter(followed_up_to_, kBatch));
    for (const store::ConversionRecord& c : rows) {
      followed_up_to_ = c.id;
      if (std::binary_search(own_ids_.begin(), own_ids_.end(), c.id)) continue;
      if (c.status == store::ConversionStatus::kOverBudget) continue;  // never billed
      if (c.status != store::ConversionStatus::kBilled) {
        // Reverted before this process billed it: never billed here, so never undone here.
        if (c.revert_seq > revert_seq_) reverts_seen_.emplace(c.id, c.revert_seq);
        continue;
      }
      if (on_billed_) on_billed_(c);
    }
    if (rows.size() < size_t{kBatch}) break;
  }
  // SQLite has one writer and ids grow with each insert, so every conversion below an own
  // (committed) id was committed before it and has been read: the own ids are passed too.
  if (!own_ids_.empty()) followed_up_to_ = std::max(followed_up_to_, own_ids_.back());
  own_ids_.clear();
  return FollowReverts();
}

// Every conversion up to followed_up_to_ is billed here (followed or its own) unless
// reverts_seen_ has it; each revert committed since the last read (in commit order: the
// writer lock numbers them) is undone once. A revert of a conversion above followed_up_to_
// needs nothing: FollowOthers will find it reorged and never bill it.
Status ConversionAttributor::FollowReverts() {
  constexpr int kBatch = 1000;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::ConversionRecord> rows,
                         events_.ReorgedConversionsAfterSeq(revert_seq_, kBatch));
    for (const store::ConversionRecord& c : rows) {
      revert_seq_ = std::max(revert_seq_, c.revert_seq);
      if (reverts_seen_.contains(c.id) || c.id > followed_up_to_) continue;
      if (on_reverted_) on_reverted_(c);
    }
    if (rows.size() < size_t{kBatch}) break;
  }
  // What the next read cannot return any more is forgotten.
  std::erase_if(reverts_seen_,
                [&](const auto& entry) ADS_REQUIRES(mu_) { return entry.second <= revert_seq_; });
  return OkStatus();
}

void ConversionAttributor::Reverted(const store::ConversionRecord& c) {
  if (following_ && c.revert_seq > revert_seq_) reverts_seen_.emplace(c.id, c.revert_seq);
  own_last_revert_seq_ = std::max(own_last_revert_seq_, c.revert_seq);
  if (on_reverted_) on_reverted_(c);
}

void ConversionAttributor::OnReverted(int64_t chain_id,
                                      std::span<const ingest::chain::RevertedBlock> blocks) {
  MutexLock lock(mu_);
  for (const ingest::chain::RevertedBlock& block : blocks) {
    Result<std::vector<store::ConversionRecord>> reverted = events_.RevertConversions(
        chain_id, static_cast<int64_t>(block.number), block.hash.bytes, clock_.NowSeconds());
    if (!reverted.ok()) {
      ADS_LOG(error, "conversions of a reorged block not reverted", "chain", chain_id, "block",
              block.number, "error", reverted.status().message());
      continue;
    }
    for (const store::ConversionRecord& c : *reverted) Reverted(c);
  }
}

}  // namespace adserver::events
