#include "decision/catalog.h"

#include <algorithm>
#include <atomic>

#include "common/check.h"

namespace adserver::decision {

namespace {

// The earlier API variant serves content of fewer than this many code points (spec 2.2).
constexpr uint32_t kEarlierMaxContentChars = 400;

}  // namespace

bool AdServes(const Ad& ad, ImageFormat format, bool earlier_variant) {
  if (earlier_variant && ad.content_chars >= kEarlierMaxContentChars) return false;
  if (format == ImageFormat::kNoImage) return !earlier_variant;
  return !ad.images[static_cast<size_t>(format)].empty();
}

bool Publisher::AllowsOrigin(std::string_view origin) const {
  if (allowed_origins.empty()) return true;
  return std::find(allowed_origins.begin(), allowed_origins.end(), origin) != allowed_origins.end();
}

bool Publisher::BlocksCommunity(int64_t community_id) const {
  return std::binary_search(blocked_communities.begin(), blocked_communities.end(), community_id);
}

void Catalog::BuildAdLists() {
  for (Campaign& campaign : campaigns) {
    for (int f = 0; f < kImageFormatCount; ++f) {
      campaign.ads_current[f].clear();
      campaign.ads_earlier[f].clear();
      campaign.weight_current[f] = 0;
      campaign.weight_earlier[f] = 0;
    }
    campaign.has_arm_ads = false;
  }
  for (Index i = 0; i < ads.size(); ++i) {
    const Ad& ad = ads[i];
    ADS_CHECK(ad.campaign < campaigns.size()) << "ad " << ad.id << " has no campaign";
    Campaign& campaign = campaigns[ad.campaign];
    campaign.has_arm_ads = campaign.has_arm_ads || !ad.ab_arm.empty();
    for (int f = 0; f < kImageFormatCount; ++f) {
      auto format = static_cast<ImageFormat>(f);
      if (AdServes(ad, format, /*earlier_variant=*/false)) {
        campaign.ads_current[f].push_back(i);
        campaign.weight_current[f] += ad.weight;
      }
      if (AdServes(ad, format, /*earlier_variant=*/true)) {
        campaign.ads_earlier[f].push_back(i);
        campaign.weight_earlier[f] += ad.weight;
      }
    }
  }
}

namespace {

bool PacingCanBoost(const Campaign& c) {
  if (c.pacing != PacingMode::kEven) return false;
  bool flight = c.total_budget_micros && c.starts_at && c.ends_at && *c.ends_at > *c.starts_at;
  return c.daily_budget_micros.has_value() || flight;
}

}  // namespace

void Catalog::BuildProjectIndex() {
  project_runs_.clear();
  walk_entries_.clear();
  max_target_projects = 0;
  project_id_limit = 0;
  auto note = [this](uint32_t project) {
    project_id_limit = std::max(project_id_limit, project + 1);
  };
  for (Campaign& c : campaigns) {
    max_target_projects = std::max(max_target_projects, c.target_projects.size());
    c.pacing_can_boost = PacingCanBoost(c);
    for (uint32_t p : c.target_projects) note(p);
    for (uint32_t p : c.exclude_projects) note(p);
    if (c.advertiser_project) note(*c.advertiser_project);
  }
  std::vector<std::vector<Index>> by_project(project_id_limit);
  for (Index c = 0; c < campaigns.size(); ++c) {
    for (uint32_t project : campaigns[c].target_projects) {
      std::vector<Index>& list = by_project[project];
      // A campaign listing a project twice is indexed once (campaigns are visited in order).
      if (list.empty() || list.back() != c) list.push_back(c);
    }
  }
  size_t total = 0;
  for (const std::vector<Index>& list : by_project) total += list.size();
  ADS_CHECK(total < kNone) << "too many project targets: " << total;
  walk_entries_.reserve(total);
  project_runs_.resize(project_id_limit);
  for (uint32_t project = 0; project < project_id_limit; ++project) {
    std::vector<Index>& list = by_project[project];
    // Steady campaigns first; within each run, highest value first, then catalog order.
    std::stable_sort(list.begin(), list.end(), [this](Index a, Index b) {
      const Campaign& x = campaigns[a];
      const Campaign& y = campaigns[b];
      if (x.pacing_can_boost != y.pacing_can_boost) return !x.pacing_can_boost;
      return x.value_micros > y.value_micros;
    });
    RunRange& runs = project_runs_[project];
    runs.begin = static_cast<uint32_t>(walk_entries_.size());
    runs.steady = runs.begin;
    for (Index c : list) {
      walk_entries_.push_back(WalkEntryOf(c));
      if (!campaigns[c].pacing_can_boost) ++runs.steady;
    }
    runs.end = static_cast<uint32_t>(walk_entries_.size());
    if (runs.steady > runs.begin) runs.steady_top = walk_entries_[runs.begin].value;
    if (runs.end > runs.steady) runs.boostable_top = walk_entries_[runs.steady].value;
  }
}

Catalog::WalkEntry Catalog::WalkEntryOf(Index c) const {
  const Campaign& campaign = campaigns[c];
  WalkEntry entry{.value = campaign.value_micros, .campaign = c};
  if (campaign.recency_days) {
    entry.max_age_days = static_cast<uint32_t>(std::max(*campaign.recency_days, 0));
  }
  if (campaign.id >= 0 && campaign.id < static_cast<int64_t>(kNone)) {
    entry.lift_id = static_cast<uint32_t>(campaign.id);
  }
  for (int f = 0; f < kImageFormatCount; ++f) {
    if (!campaign.ads_current[f].empty()) entry.formats |= static_cast<uint8_t>(1u << f);
    if (!campaign.ads_earlier[f].empty()) entry.formats |= static_cast<uint8_t>(1u << (4 + f));
  }
  return entry;
}

void Catalog::BuildIndexes() {
  static std::atomic<uint64_t> next_generation{1};
  generation_ = next_generation.fetch_add(1, std::memory_order_relaxed);
  key_by_hash_.clear();
  key_by_hash_.reserve(api_keys.size());
  for (Index i = 0; i < api_keys.size(); ++i) key_by_hash_.emplace(api_keys[i].hash, i);
  advertiser_key_by_hash_.clear();
  for (Index i = 0; i < advertiser_keys.size(); ++i) {
    advertiser_key_by_hash_.emplace(advertiser_keys[i].hash, i);
  }
  campaign_by_id_.clear();
  for (Index i = 0; i < campaigns.size(); ++i) campaign_by_id_.emplace(campaigns[i].id, i);
  ad_by_id_.clear();
  for (Index i = 0; i < ads.size(); ++i) ad_by_id_.emplace(ads[i].id, i);
  conversion_campaigns_list_.clear();
  for (const Campaign& c : campaigns) {
    if (!c.conversion) continue;
    conversion_campaigns_list_.push_back({.id = c.id,
                                          .pricing_model = c.pricing_model,
                                          .bid_micros = c.bid_micros,
                                          .total_budget_micros = c.total_budget_micros,
                                          .rule = *c.conversion});
  }
  for (const ConversionCampaign& c : stopped_conversion_campaigns) {
    if (!campaign_by_id_.contains(c.id)) conversion_campaigns_list_.push_back(c);
  }
  conversion_campaigns_.clear();
  conversion_campaign_by_id_.clear();
  max_conversion_window_days_ = 0;
  for (Index i = 0; i < conversion_campaigns_list_.size(); ++i) {
    const ConversionCampaign& c = conversion_campaigns_list_[i];
    conversion_campaign_by_id_.emplace(c.id, i);
    max_conversion_window_days_ = std::max(max_conversion_window_days_, c.rule.window_days);
    for (int64_t project : c.rule.projects) {
      std::vector<Index>& list = conversion_campaigns_[project];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }

  BuildProjectIndex();

  for (int f = 0; f < kImageFormatCount; ++f) {
    sample_current_[f].clear();
    sample_earlier_[f].clear();
    auto format = static_cast<ImageFormat>(f);
    for (Index i = 0; i < ads.size(); ++i) {
      if (AdServes(ads[i], format, /*earlier_variant=*/false)) sample_current_[f].push_back(i);
      if (AdServes(ads[i], format, /*earlier_variant=*/true)) sample_earlier_[f].push_back(i);
    }
  }
}

void Catalog::RenderAds(const AdRenderer& render) {
  for (Ad& ad : ads) {
    const Campaign* campaign = ad.campaign < campaigns.size() ? &campaigns[ad.campaign] : nullptr;
    const Community* community = campaign != nullptr && campaign->community < communities.size()
                                     ? &communities[campaign->community]
                                     : nullptr;
    ad.rendered = render(ad, community);
  }
}

const ApiKey* Catalog::FindKey(const Sha256Digest& hash) const {
  auto it = key_by_hash_.find(hash);
  if (it == key_by_hash_.end()) return nullptr;
  const ApiKey& key = api_keys[it->second];
  // The map compared with ==; confirm in constant time so timing reveals nothing more.
  return ConstantTimeEqual(key.hash, hash) ? &key : nullptr;
}

std::vector<Index> Catalog::CampaignsForProject(uint32_t project_id) const {
  ProjectCampaigns runs = FindProjectCampaigns(project_id);
  std::vector<Index> out;
  for (const WalkEntry& e : runs.steady) out.push_back(e.campaign);
  for (const WalkEntry& e : runs.boostable) out.push_back(e.campaign);
  return out;
}

const std::vector<Index>& Catalog::SampleAds(ImageFormat format, bool earlier_variant) const {
  const auto& lists = earlier_variant ? sample_earlier_ : sample_current_;
  return lists[static_cast<size_t>(format)];
}

const AdvertiserKey* Catalog::FindAdvertiserKey(const Sha256Digest& hash) const {
  auto it = advertiser_key_by_hash_.find(hash);
  if (it == advertiser_key_by_hash_.end()) return nullptr;
  const AdvertiserKey& key = advertiser_keys[it->second];
  return ConstantTimeEqual(key.hash, hash) ? &key : nullptr;
}

const Campaign* Catalog::FindCampaign(int64_t id) const {
  auto it = campaign_by_id_.find(id);
  return it == campaign_by_id_.end() ? nullptr : &campaigns[it->second];
}

const ConversionCampaign* Catalog::FindConversionCampaign(int64_t id) const {
  auto it = conversion_campaign_by_id_.find(id);
  return it == conversion_campaign_by_id_.end() ? nullptr : &conversion_campaigns_list_[it->second];
}

std::span<const Index> Catalog::ConversionCampaigns(int64_t project_id) const {
  auto it = conversion_campaigns_.find(project_id);
  if (it == conversion_campaigns_.end()) return {};
  return it->second;
}

const Ad* Catalog::FindAd(int64_t id) const {
  auto it = ad_by_id_.find(id);
  return it == ad_by_id_.end() ? nullptr : &ads[it->second];
}

}  // namespace adserver::decision
