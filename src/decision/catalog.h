#pragma once

// The immutable serving catalog: everything a decision needs except wallet activity, laid out
// for lookups without a store round trip. Built off the request path (ingest/catalog_builder)
// and published atomically; never mutated after BuildIndexes(). Thread-safe for readers.

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/address.h"
#include "common/crypto.h"
#include "common/types.h"
#include "decision/pacing.h"

namespace adserver::decision {

// Index into Catalog vectors. kNone marks "absent".
using Index = uint32_t;
inline constexpr Index kNone = UINT32_MAX;

struct Publisher {
  int64_t id = 0;
  std::string name;
  // Sorted; empty = any origin, answered without the identity cookie (issue 39).
  std::vector<std::string> allowed_origins;
  std::vector<int64_t> blocked_communities;  // sorted community ids
  // Decision controls (issue 4). Empty / 0 = no restriction.
  std::vector<int64_t> allowed_communities;  // sorted; non-empty = only these communities
  std::vector<std::string> category_opt_ins;  // sorted campaign categories this publisher takes
  Micros floor_cpm_micros = 0;                // no ad worth less per 1000 impressions
  std::vector<std::string> ab_arms;           // experiment arms adUnitIds are hashed onto
  // Requests per second and burst its keys may send (issue 18); 0 = unlimited.
  double rate_per_second = 0;
  int64_t rate_burst = 0;
  // True when `origin` may call with this publisher's keys.
  bool AllowsOrigin(std::string_view origin) const;
  bool BlocksCommunity(int64_t community_id) const;
};

struct ApiKey {
  int64_t id = 0;
  Index publisher = kNone;
  Sha256Digest hash{};
  bool test = false;
};

// An advertiser key (issue 15): authenticates POST /v1/events for its community.
struct AdvertiserKey {
  int64_t id = 0;
  int64_t community_id = 0;
  Sha256Digest hash{};
  bool test = false;
};

struct Community {
  int64_t id = 0;
  std::string name;
  std::string logo_url;
};

struct Ad {
  int64_t id = 0;
  std::string id_str;  // decimal id, as served in `adId`
  Index campaign = kNone;
  std::string headline;
  std::string content;
  std::string cta_url;
  std::string cta_label;
  // Image URL per format with an image (index = ImageFormat); empty = none.
  std::array<std::string, kImageFormatsWithImage> images;
  uint32_t weight = 1;
  // Length of `content` in Unicode code points. The earlier API variant only serves content
  // of fewer than 400 characters (spec 2.2).
  uint32_t content_chars = 0;
  // Experiment arm this ad belongs to; empty = served in every arm.
  std::string ab_arm;
  // What a response copies of this ad, prepared once per catalog by the serving layer
  // (CatalogOptions::render_ad, Catalog::RenderAds; serve/ad_render.h). Opaque bytes here: the
  // engine never reads them. Empty when the catalog was not rendered (a response then renders
  // the ad).
  std::string rendered;
};

// Renders what a response copies of `ad` (its campaign's community, or null), in the serving
// layer's own encoding.
using AdRenderer = std::function<std::string(const Ad& ad, const Community*)>;

// Which onchain transactions count as a campaign's conversions (issue 15; see
// store::ConversionRule). Project ids are store ids.
struct ConversionRule {
  enum class Kind : uint8_t { kAny, kNew, kReturning };
  std::vector<int64_t> projects;
  Kind kind = Kind::kAny;
  int32_t returning_after_days = 45;
  int32_t window_days = 14;
  bool count_once_per_person = true;
};

// A campaign whose onchain conversions are attributed (issue 37): what attribution and billing
// need of it. Every campaign with a conversion rule is one, served (in Catalog::campaigns) or
// not (paused, ended, or not servable): a transaction inside the window of an exposure counts
// whatever the campaign's status when it lands.
struct ConversionCampaign {
  int64_t id = 0;
  PricingModel pricing_model = PricingModel::kCpa;
  Micros bid_micros = 0;
  std::optional<Micros> total_budget_micros;
  ConversionRule rule;
};

struct Campaign {
  int64_t id = 0;
  std::string id_str;  // decimal id, as served in `campaignId`
  Index community = kNone;
  int64_t community_id = 0;
  // Only active campaigns are in the catalog; the schedule is checked per request.
  std::optional<int64_t> starts_at;  // Unix seconds, inclusive
  std::optional<int64_t> ends_at;    // Unix seconds, exclusive
  PricingModel pricing_model = PricingModel::kCpm;
  Micros bid_micros = 0;
  // Expected value of one impression in micro-units (CPM bid / 1000, or CPC/CPA bid times the
  // configured default rate), computed once at build time.
  double value_micros = 0;
  std::vector<uint32_t> target_projects;   // project ids (dense, see Catalog::projects)
  std::vector<uint32_t> exclude_projects;  // sorted
  std::vector<uint32_t> chains;            // sorted chain ids; empty = any chain
  std::optional<int32_t> recency_days;
  // Budgets, pacing and caps (issue 4).
  std::optional<Micros> total_budget_micros;
  std::optional<Micros> daily_budget_micros;
  PacingMode pacing = PacingMode::kEven;
  int32_t frequency_cap_count = 0;  // 0 = no cap
  int32_t frequency_cap_hours = 0;
  // Controls: a category publishers must opt into ("" = none), publishers the campaign is
  // limited to (sorted ids; empty = every publisher), and the advertiser's own project whose
  // existing users are not shown the campaign (acquisition campaigns).
  std::string category;
  std::vector<int64_t> allowed_publishers;
  std::optional<uint32_t> advertiser_project;
  bool exclude_existing_users = false;
  std::optional<ConversionRule> conversion;
  // Issue 36 item 9: false = valued greedily (posterior mean, the greedy prior weights) even
  // when DecisionOptions::explore is on.
  bool explore = true;
  // Active ads usable per requested format (index = ImageFormat). NO_IMAGE lists every
  // active ad. Split by API variant because the earlier variant needs content < 400 chars.
  std::array<std::vector<Index>, kImageFormatCount> ads_current;
  std::array<std::vector<Index>, kImageFormatCount> ads_earlier;
  // Sum of the weights in the lists above (same index), for weighted tie-breaks.
  std::array<uint64_t, kImageFormatCount> weight_current{};
  std::array<uint64_t, kImageFormatCount> weight_earlier{};
  // True when some ad is restricted to an A/B arm; otherwise the sums above are the usable
  // weight of every request and the engine needs not look at the ads.
  bool has_arm_ads = false;
  // True when even pacing can lift the score above value x relevance: an even-paced daily
  // budget, or an even-paced total budget over a bounded flight (set by BuildIndexes).
  bool pacing_can_boost = false;
};

struct Project {
  int64_t id = 0;
  std::string slug;
  std::string name;
};

struct ContractKey {
  int64_t chain_id = 0;
  Address address;
  bool operator==(const ContractKey&) const = default;
};
struct ContractKeyHash {
  size_t operator()(const ContractKey& k) const noexcept {
    return AddressHash{}(k.address) ^ static_cast<size_t>(k.chain_id * 0x9E3779B97F4A7C15ULL);
  }
};

// True when `ad` can be served for `format` in the given API variant: the current variant
// serves NO_IMAGE with any ad and an image format with an ad that has a creative for it; the
// earlier variant has no NO_IMAGE and needs content of fewer than 400 code points.
bool AdServes(const Ad& ad, ImageFormat format, bool earlier_variant);

// Options applied while building a catalog.
struct CatalogOptions {
  // Predicted click rate used to value CPC bids until the decision engine learns real rates.
  double default_ctr = 0.01;
  // Predicted conversion rate used to value CPA bids.
  double default_cvr = 0.001;
  // Run on every ad of each catalog built (Catalog::RenderAds); empty: nothing prepared.
  AdRenderer render_ad;
};

// A project's campaigns for the auction walk, in two runs each sorted by a value, highest first:
// `steady` holds the campaigns pacing cannot boost, `boostable` those it can. Each run's first
// value is copied here, so a run that cannot win costs no access to its entries. `Entry` is a
// Catalog::WalkEntry (sorted by catalog value) or a WalkOrder::Entry (by live bound).
template <typename Entry>
struct WalkRuns {
  std::span<const Entry> steady;
  std::span<const Entry> boostable;
  double steady_top = 0;     // the first value of `steady` (0 when empty)
  double boostable_top = 0;  // the first value of `boostable` (0 when empty)
  bool empty() const { return steady.empty() && boostable.empty(); }
};

// Where one project's two runs lie in an array of walk entries ([begin, steady) and
// [steady, end)), with the first value of each, so a run that cannot win costs no access to
// its entries. Shared by the catalog's walk and the WalkOrder's.
struct RunRange {
  uint32_t begin = 0;
  uint32_t steady = 0;
  uint32_t end = 0;
  double steady_top = 0;     // 0 when the run is empty
  double boostable_top = 0;  // 0 when the run is empty
  // The runs in `entries`, the array these offsets index.
  template <typename Entry>
  WalkRuns<Entry> In(const std::vector<Entry>& entries) const {
    const Entry* base = entries.data();
    return {.steady = {base + begin, base + steady},
            .boostable = {base + steady, base + end},
            .steady_top = steady_top,
            .boostable_top = boostable_top};
  }
};

class Catalog {
 public:
  std::vector<Publisher> publishers;
  std::vector<ApiKey> api_keys;  // only keys that are not revoked
  std::vector<AdvertiserKey> advertiser_keys;  // only keys that are not revoked
  std::vector<Community> communities;
  std::vector<Campaign> campaigns;  // only status == active
  std::vector<Ad> ads;              // only active ads of campaigns in `campaigns`
  // Campaigns with a conversion rule that are not in `campaigns` (paused, ended, not servable):
  // their conversions are still attributed (issue 37). BuildIndexes adds those of `campaigns`.
  std::vector<ConversionCampaign> stopped_conversion_campaigns;
  // Projects by dense id; project ids are store ids (small positive integers).
  std::unordered_map<uint32_t, Project> projects;
  std::unordered_map<ContractKey, uint32_t, ContractKeyHash> contract_to_project;
  // Largest number of targeted projects of a campaign (set by BuildIndexes).
  size_t max_target_projects = 0;
  // One more than the largest project id any campaign targets, excludes or names as its
  // advertiser (set by BuildIndexes): interactions with other projects cannot affect a rule.
  uint32_t project_id_limit = 0;

  // Fills every campaign's ads_current/ads_earlier lists and weight sums from `ads` (each ad's
  // `campaign` must be a valid index). Call before publishing when the lists were not set by
  // hand; catalog_builder calls it.
  void BuildAdLists();
  // Computes the derived indexes below from the vectors above. Call once, before publishing.
  void BuildIndexes();
  // Sets every ad's `rendered` from `render` (catalog_builder calls it with
  // CatalogOptions::render_ad, on the publisher's thread). Call before publishing.
  void RenderAds(const AdRenderer& render);
  // Unique per BuildIndexes call in this process (0 before): identifies what derived state
  // (a WalkOrder) was computed from.
  uint64_t generation() const { return generation_; }

  // The key whose SHA-256 equals `hash` (compared in constant time), or nullptr.
  const ApiKey* FindKey(const Sha256Digest& hash) const;
  // The advertiser key whose SHA-256 equals `hash` (compared in constant time), or nullptr.
  const AdvertiserKey* FindAdvertiserKey(const Sha256Digest& hash) const;
  // The campaign / ad with this store id, or nullptr (not active, or unknown).
  const Campaign* FindCampaign(int64_t id) const;
  const Ad* FindAd(int64_t id) const;
  // Campaigns with a conversion rule naming project `project_id`, served or stopped (empty if
  // none): indexes for conversion_campaign().
  std::span<const Index> ConversionCampaigns(int64_t project_id) const;
  const ConversionCampaign& conversion_campaign(Index index) const {
    return conversion_campaigns_list_[index];
  }
  // The campaign with a conversion rule with this store id, served or stopped, or nullptr.
  const ConversionCampaign* FindConversionCampaign(int64_t id) const;
  // The longest conversion window of any campaign, in days (0 when none has a rule).
  int32_t max_conversion_window_days() const { return max_conversion_window_days_; }
  static constexpr uint32_t kAnyAge = std::numeric_limits<uint32_t>::max();
  // One campaign in a project's walk: what the auction checks before touching the campaign,
  // packed so that each entry costs one cache access.
  struct WalkEntry {
    double value = 0;  // the campaign's value_micros
    Index campaign = kNone;
    // The largest age in days of an interaction the campaign's recency rule accepts (kAnyAge
    // without one).
    uint32_t max_age_days = kAnyAge;
    // The campaign id for the live lift ceiling (LiveState::LiftCeiling), or kNone when the id
    // does not fit (read it from the campaign).
    uint32_t lift_id = kNone;
    // The image formats the campaign has ads for (bit f: current variant, bit 4 + f: earlier).
    uint8_t formats = 0;
  };
  // Campaigns targeting one project in two runs, each highest value first (then lower index).
  // The values are copied into the entries so the auction can stop each run early, with the
  // score bound of its kind, without touching the campaigns.
  using ProjectCampaigns = WalkRuns<WalkEntry>;
  // Campaign indexes targeting `project_id`: the steady run, then the boostable run, each
  // highest value first (empty if none). Copies; for tests and tools.
  std::vector<Index> CampaignsForProject(uint32_t project_id) const;
  // The same with walk entries; empty if no campaign targets `project_id`. The spans point
  // into this catalog.
  ProjectCampaigns FindProjectCampaigns(uint32_t project_id) const {
    if (project_id >= project_runs_.size()) return {};
    return project_runs_[project_id].In(walk_entries_);
  }
  // Active ads (all campaigns) usable for test keys per format and variant; see Ad lists.
  const std::vector<Index>& SampleAds(ImageFormat format, bool earlier_variant) const;

 private:
  void BuildProjectIndex();
  WalkEntry WalkEntryOf(Index campaign) const;

  uint64_t generation_ = 0;
  std::unordered_map<Sha256Digest, Index, DigestHash> key_by_hash_;
  std::unordered_map<Sha256Digest, Index, DigestHash> advertiser_key_by_hash_;
  std::unordered_map<int64_t, Index> campaign_by_id_;
  std::unordered_map<int64_t, Index> ad_by_id_;
  std::vector<ConversionCampaign> conversion_campaigns_list_;
  std::unordered_map<int64_t, Index> conversion_campaign_by_id_;
  std::unordered_map<int64_t, std::vector<Index>> conversion_campaigns_;
  int32_t max_conversion_window_days_ = 0;
  // By project id (dense store ids); empty runs for projects no campaign targets.
  std::vector<RunRange> project_runs_;
  // Every project's walk entries, project after project.
  std::vector<WalkEntry> walk_entries_;
  std::array<std::vector<Index>, kImageFormatCount> sample_current_;
  std::array<std::vector<Index>, kImageFormatCount> sample_earlier_;
};

}  // namespace adserver::decision
