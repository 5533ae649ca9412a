#include "events/conversion_attributor.h"

#include <iterator>
#include <utility>
#include <vector>

#include "common/log.h"
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
    const decision::Campaign& campaign = catalog.campaigns[index];
    Result<std::optional<store::ExposureRecord>> record =
        exposures_.Get(interaction.wallet, campaign.id);
    if (!record.ok()) {
      ADS_LOG(error, "exposure read failed", "error", record.status().message());
      continue;
    }
    if (!record->has_value()) continue;
    campaign_id = campaign.id;
    std::optional<Attribution> attribution =
        Attribute(**record, RuleOf(*campaign.conversion), block.time, last_click);
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
        .count_once_per_person = campaign.conversion->count_once_per_person,
        .window_seconds = int64_t{campaign.conversion->window_days} * 86400});
  }
}

void ConversionAttributor::OnApplied(int64_t chain_id,
                                     std::span<const ingest::chain::AppliedBlock> blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  bool any_interaction = false;
  for (const ingest::chain::AppliedBlock& block : blocks) {
    any_interaction = any_interaction || !block.interactions.empty();
  }
  if (!catalog || catalog->max_conversion_window_days() == 0 || !any_interaction) {
    if (!pending_.empty()) Insert(chain_id, {});
    return;
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
  if (candidates.empty() && pending_.empty()) return;
  Insert(chain_id, std::move(candidates));
}

bool ConversionAttributor::Wants(int64_t project_id, int64_t unix_seconds) const {
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog || catalog->ConversionCampaigns(project_id).empty()) return false;
  int64_t now = clock_.NowSeconds();
  return unix_seconds >= now - int64_t{catalog->max_conversion_window_days()} * 86400 &&
         unix_seconds <= now + 86400;
}

void ConversionAttributor::OnImported(
    std::span<const ingest::chain::ChainInteraction> interactions) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  if (!catalog || catalog->max_conversion_window_days() == 0 || interactions.empty()) return;
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
  if (candidates.empty() && pending_.empty()) return;
  Insert(interactions.front().chain_id, std::move(candidates));
}

size_t ConversionAttributor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void ConversionAttributor::Insert(int64_t chain_id, std::vector<store::ConversionCandidate> fresh) {
  std::vector<store::ConversionCandidate> batch = std::move(pending_);
  pending_.clear();
  batch.insert(batch.end(), std::make_move_iterator(fresh.begin()),
               std::make_move_iterator(fresh.end()));
  Result<std::vector<store::ConversionRecord>> recorded =
      events_.InsertConversions(batch, clock_.NowSeconds());
  if (!recorded.ok()) {
    size_t dropped = batch.size() > kMaxPending ? batch.size() - kMaxPending : 0;
    if (dropped > 0) batch.erase(batch.begin(), batch.begin() + static_cast<ptrdiff_t>(dropped));
    ADS_LOG(error, "conversions not recorded yet, retried with the next block", "chain", chain_id,
            "waiting", batch.size(), "dropped", dropped, "error", recorded.status().message());
    pending_ = std::move(batch);
    return;
  }
  for (const store::ConversionRecord& c : *recorded) {
    if (on_billed_) on_billed_(c);
  }
}

void ConversionAttributor::OnReverted(int64_t chain_id,
                                      std::span<const ingest::chain::RevertedBlock> blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ingest::chain::RevertedBlock& block : blocks) {
    std::erase_if(pending_, [&](const store::ConversionCandidate& c) {
      return c.record.chain_id == chain_id &&
             c.record.block_number == static_cast<int64_t>(block.number) &&
             c.record.block_hash == block.hash.bytes;
    });
    Result<std::vector<store::ConversionRecord>> reverted = events_.RevertConversions(
        chain_id, static_cast<int64_t>(block.number), block.hash.bytes, clock_.NowSeconds());
    if (!reverted.ok()) {
      ADS_LOG(error, "conversions of a reorged block not reverted", "chain", chain_id, "block",
              block.number, "error", reverted.status().message());
      continue;
    }
    for (const store::ConversionRecord& c : *reverted) {
      if (on_reverted_) on_reverted_(c);
    }
  }
}

}  // namespace adserver::events
