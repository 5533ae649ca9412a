#include "ingest/catalog_builder.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/clock.h"
#include "common/log.h"

namespace adserver::ingest {

namespace {

using decision::Index;

// State shared by the steps of one build: store id -> catalog index of what was kept.
struct Build {
  Build(const store::CatalogData& data, const decision::CatalogOptions& options,
        decision::Catalog& catalog)
      : data(data), options(options), catalog(catalog) {}
  const store::CatalogData& data;
  const decision::CatalogOptions& options;
  decision::Catalog& catalog;
  std::unordered_map<store::Id, Index> publishers;
  std::unordered_map<store::Id, Index> communities;
  std::unordered_map<store::Id, Index> campaigns;  // kept (active) campaigns only
  std::unordered_set<store::Id> all_campaigns;     // every campaign in `data`
  // Communities without an approved brand (issue 39): their campaigns do not serve.
  std::unordered_set<store::Id> unbranded;
  // Project -> the community an operator verified as its owner (issue 39).
  std::unordered_map<store::Id, store::Id> project_owners;
};

bool FitsUint32(int64_t v) { return v >= 0 && v <= std::numeric_limits<uint32_t>::max(); }

template <typename T>
void SortUnique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Number of Unicode code points of valid UTF-8 (the store only holds valid text).
uint32_t CodePoints(std::string_view s) {
  uint32_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

double ValueMicros(const store::CampaignRecord& c, const decision::CatalogOptions& options) {
  auto bid = static_cast<double>(c.bid_micros);
  switch (c.pricing_model) {
    case PricingModel::kCpm:
      return bid / 1000.0;
    case PricingModel::kCpc:
      return bid * options.default_ctr;
    case PricingModel::kCpa:
      return bid * options.default_cvr;
  }
  return 0;
}

void AddPublishers(Build& b) {
  for (const store::PublisherRecord& p : b.data.publishers) {
    decision::Publisher out{.id = p.id,
                            .name = p.name,
                            .allowed_origins = p.allowed_origins,
                            .blocked_communities = p.blocked_communities};
    SortUnique(out.allowed_origins);
    SortUnique(out.blocked_communities);
    out.allowed_communities = p.allowed_communities;
    SortUnique(out.allowed_communities);
    out.category_opt_ins = p.category_opt_ins;
    SortUnique(out.category_opt_ins);
    out.floor_cpm_micros = p.floor_cpm_micros.value_or(0);
    out.ab_arms = p.ab_arms;
    if (p.rate_limit) {
      out.rate_per_second = p.rate_limit->per_second;
      out.rate_burst = p.rate_limit->burst;
    }
    b.publishers.emplace(p.id, static_cast<Index>(b.catalog.publishers.size()));
    b.catalog.publishers.push_back(std::move(out));
  }
}

Status AddApiKeys(Build& b) {
  for (const store::ApiKeyRecord& k : b.data.api_keys) {
    if (k.revoked_at) continue;
    auto publisher = b.publishers.find(k.publisher_id);
    if (publisher == b.publishers.end()) {
      return InternalError("api key " + std::to_string(k.id) + " references missing publisher " +
                           std::to_string(k.publisher_id));
    }
    b.catalog.api_keys.push_back(
        {.id = k.id, .publisher = publisher->second, .hash = k.hash, .test = k.test});
  }
  return OkStatus();
}

Status AddAdvertiserKeys(Build& b) {
  for (const store::AdvertiserKeyRecord& k : b.data.advertiser_keys) {
    if (k.revoked_at) continue;
    if (!b.communities.contains(k.community_id)) {
      return InternalError("advertiser key " + std::to_string(k.id) +
                           " references missing community " + std::to_string(k.community_id));
    }
    b.catalog.advertiser_keys.push_back(
        {.id = k.id, .community_id = k.community_id, .hash = k.hash, .test = k.test});
  }
  return OkStatus();
}

// Served ads carry their community's last approved brand (issue 39), as ads their approved
// creative: an edit waiting for review or rejected never serves. A record the store has not
// settled (store::SettleApproval) serves as written when it is approved.
void AddCommunities(Build& b) {
  for (const store::CommunityRecord& c : b.data.communities) {
    std::optional<store::CommunityBrand> brand = c.approved;
    if (!brand && c.review_status == store::ReviewStatus::kApproved) brand = store::BrandOf(c);
    if (!brand) b.unbranded.insert(c.id);
    b.communities.emplace(c.id, static_cast<Index>(b.catalog.communities.size()));
    b.catalog.communities.push_back({.id = c.id,
                                     .name = brand ? brand->name : std::string(),
                                     .logo_url = brand ? brand->logo_url : std::string()});
  }
}

Status AddProjects(Build& b) {
  for (const store::ProjectRecord& p : b.data.projects) {
    if (!FitsUint32(p.id)) return InternalError("project id out of range: " + std::to_string(p.id));
    auto id = static_cast<uint32_t>(p.id);
    b.catalog.projects[id] = {.id = p.id, .slug = p.slug, .name = p.name};
    if (p.owner_community_id) b.project_owners.emplace(p.id, *p.owner_community_id);
    for (const store::ContractRef& contract : p.contracts) {
      b.catalog.contract_to_project[{contract.chain_id, contract.address}] = id;
    }
  }
  return OkStatus();
}

// Converts project ids, checking that each exists in the catalog.
Status ProjectIds(const Build& b, const store::CampaignRecord& c, const std::vector<store::Id>& in,
                  std::vector<uint32_t>& out) {
  for (store::Id id : in) {
    if (!FitsUint32(id) || !b.catalog.projects.contains(static_cast<uint32_t>(id))) {
      return InternalError("campaign " + std::to_string(c.id) + " references missing project " +
                           std::to_string(id));
    }
    out.push_back(static_cast<uint32_t>(id));
  }
  SortUnique(out);
  return OkStatus();
}

// Returns false when the campaign can never match: every chain it allows lies outside the
// 32-bit chain ids the activity index holds.
bool ConvertChains(const std::vector<int64_t>& in, std::vector<uint32_t>& out) {
  for (int64_t chain : in) {
    if (FitsUint32(chain)) out.push_back(static_cast<uint32_t>(chain));
  }
  SortUnique(out);
  return in.empty() || !out.empty();
}

decision::ConversionRule ConversionRuleOf(const Build& b, const store::CampaignRecord& c,
                                          const store::ConversionRule& in) {
  decision::ConversionRule rule;
  // Only projects verified as the campaign's community's own count (issue 39): a project
  // whose owner an operator changed or cleared stops converting for the others.
  for (store::Id project : in.projects) {
    auto owner = b.project_owners.find(project);
    if (owner != b.project_owners.end() && owner->second == c.community_id) {
      rule.projects.push_back(project);
    }
  }
  rule.kind = in.kind == store::ConversionKind::kNew ? decision::ConversionRule::Kind::kNew
              : in.kind == store::ConversionKind::kReturning
                  ? decision::ConversionRule::Kind::kReturning
                  : decision::ConversionRule::Kind::kAny;
  rule.returning_after_days = in.returning_after_days;
  rule.window_days = in.window_days;
  rule.count_once_per_person = in.count_once_per_person;
  return rule;
}

// Budgets, pacing, caps and advertiser controls (issue 4).
void AddDecisionControls(const Build& b, const store::CampaignRecord& c, decision::Campaign& out) {
  out.total_budget_micros = c.total_budget_micros;
  out.daily_budget_micros = c.daily_budget_micros;
  if (!decision::ParsePacingMode(c.pacing, out.pacing)) out.pacing = decision::PacingMode::kEven;
  if (c.frequency_cap) {
    out.frequency_cap_count = c.frequency_cap->count;
    out.frequency_cap_hours = c.frequency_cap->hours;
  }
  out.category = c.category;
  out.allowed_publishers = c.allowed_publishers;
  SortUnique(out.allowed_publishers);
  if (c.advertiser_project && FitsUint32(*c.advertiser_project)) {
    out.advertiser_project = static_cast<uint32_t>(*c.advertiser_project);
  }
  out.exclude_existing_users = c.exclude_existing_users;
  out.explore = c.explore;
  if (c.conversion) out.conversion = ConversionRuleOf(b, c, *c.conversion);
}

Status AddCampaign(Build& b, const store::CampaignRecord& c) {
  auto community = b.communities.find(c.community_id);
  if (community == b.communities.end()) {
    return InternalError("campaign " + std::to_string(c.id) + " references missing community " +
                         std::to_string(c.community_id));
  }
  decision::Campaign out;
  out.id = c.id;
  out.id_str = std::to_string(c.id);
  out.community = community->second;
  out.community_id = c.community_id;
  out.starts_at = c.starts_at;
  out.ends_at = c.ends_at;
  out.pricing_model = c.pricing_model;
  out.bid_micros = c.bid_micros;
  out.value_micros = ValueMicros(c, b.options);
  out.recency_days = c.recency_days;
  AddDecisionControls(b, c, out);
  // Not served: a community without an approved brand, or a CPA campaign none of whose
  // conversion projects is verified as its own (it could never bill what it is shown for).
  if (b.unbranded.contains(c.community_id)) return OkStatus();
  if (c.pricing_model == PricingModel::kCpa &&
      (!out.conversion || out.conversion->projects.empty())) {
    return OkStatus();
  }
  ADS_RETURN_IF_ERROR(ProjectIds(b, c, c.target_projects, out.target_projects));
  ADS_RETURN_IF_ERROR(ProjectIds(b, c, c.exclude_projects, out.exclude_projects));
  if (!ConvertChains(c.chains, out.chains)) {
    ADS_LOG(warn, "campaign skipped: no chain id fits 32 bits", "campaign", c.id);
    return OkStatus();
  }
  b.campaigns.emplace(c.id, static_cast<Index>(b.catalog.campaigns.size()));
  b.catalog.campaigns.push_back(std::move(out));
  return OkStatus();
}

// A campaign with a conversion rule that is not served (paused, ended, or not servable) keeps
// having its conversions attributed (issue 37); a draft was never served.
void AddStoppedConversionCampaign(Build& b, const store::CampaignRecord& c) {
  if (!c.conversion || c.status == CampaignStatus::kDraft || b.campaigns.contains(c.id)) return;
  decision::ConversionRule rule = ConversionRuleOf(b, c, *c.conversion);
  if (rule.projects.empty()) return;
  b.catalog.stopped_conversion_campaigns.push_back({.id = c.id,
                                                    .pricing_model = c.pricing_model,
                                                    .bid_micros = c.bid_micros,
                                                    .total_budget_micros = c.total_budget_micros,
                                                    .rule = std::move(rule)});
}

Status AddCampaigns(Build& b) {
  for (const store::CampaignRecord& c : b.data.campaigns) {
    b.all_campaigns.insert(c.id);
    // An archived campaign (issue 38) serves nothing whatever its status.
    if (c.status == CampaignStatus::kActive && !c.archived) ADS_RETURN_IF_ERROR(AddCampaign(b, c));
    AddStoppedConversionCampaign(b, c);
  }
  return OkStatus();
}

Status AddAds(Build& b) {
  for (const store::AdRecord& a : b.data.ads) {
    if (!b.all_campaigns.contains(a.campaign_id)) {
      return InternalError("ad " + std::to_string(a.id) + " references missing campaign " +
                           std::to_string(a.campaign_id));
    }
    auto campaign = b.campaigns.find(a.campaign_id);
    if (a.status != AdStatus::kActive || a.archived || campaign == b.campaigns.end()) continue;
    // Creative review (issues 16, 39): an ad serves its last approved creative, also while
    // an edit waits for review or after the edit was rejected; one never approved never serves.
    // A record the store has not settled yet (store::SettleApproval) serves as written when
    // it is approved.
    std::optional<store::AdCreative> unsettled;
    if (!a.approved && a.review_status == store::ReviewStatus::kApproved) {
      unsettled = store::CreativeOf(a);
    }
    const std::optional<store::AdCreative>& approved = a.approved ? a.approved : unsettled;
    if (!approved) continue;
    const store::AdCreative& creative = *approved;
    b.catalog.ads.push_back({.id = a.id,
                             .id_str = std::to_string(a.id),
                             .campaign = campaign->second,
                             .headline = creative.headline,
                             .content = creative.content,
                             .cta_url = creative.cta_url,
                             .cta_label = creative.cta_label,
                             .images = creative.images,
                             .weight = static_cast<uint32_t>(std::max(a.weight, 0)),
                             .content_chars = CodePoints(creative.content),
                             .ab_arm = a.ab_arm});
  }
  return OkStatus();
}

}  // namespace

Result<std::shared_ptr<const decision::Catalog>> BuildCatalog(
    const store::CatalogData& data, const decision::CatalogOptions& options) {
  auto catalog = std::make_shared<decision::Catalog>();
  Build b(data, options, *catalog);
  AddPublishers(b);
  ADS_RETURN_IF_ERROR(AddApiKeys(b));
  AddCommunities(b);
  ADS_RETURN_IF_ERROR(AddAdvertiserKeys(b));
  ADS_RETURN_IF_ERROR(AddProjects(b));
  ADS_RETURN_IF_ERROR(AddCampaigns(b));
  ADS_RETURN_IF_ERROR(AddAds(b));
  catalog->BuildAdLists();
  catalog->BuildIndexes();
  if (options.render_ad) catalog->RenderAds(options.render_ad);
  return std::shared_ptr<const decision::Catalog>(std::move(catalog));
}

Result<std::shared_ptr<const decision::ActivityIndex>> BuildActivityIndex(
    store::ActivityStore& store) {
  auto index = std::make_shared<decision::ActivityIndex>();
  uint64_t skipped = 0;
  Status scanned = store.ScanActivity([&](const store::ActivityRecord& r) {
    // The index holds 32-bit project and chain ids; a row outside them can match nothing.
    if (!FitsUint32(r.project_id) || !FitsUint32(r.chain_id)) {
      ++skipped;
      return;
    }
    int64_t day = std::clamp<int64_t>(DayOf(r.last_seen), 0, std::numeric_limits<uint32_t>::max());
    int64_t count = std::clamp<int64_t>(r.count, 0, std::numeric_limits<uint32_t>::max());
    index->Add(r.wallet, {.project_id = static_cast<uint32_t>(r.project_id),
                          .chain_id = static_cast<uint32_t>(r.chain_id),
                          .last_seen_day = static_cast<uint32_t>(day),
                          .count = static_cast<uint32_t>(count)});
  });
  if (!scanned.ok()) return scanned;
  if (skipped > 0) {
    ADS_LOG(warn, "activity rows skipped: ids exceed 32 bits", "rows", skipped);
  }
  index->Finalize();
  return std::shared_ptr<const decision::ActivityIndex>(std::move(index));
}

}  // namespace adserver::ingest
