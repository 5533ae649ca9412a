#pragma once

// Plain records persisted by a Store. No behaviour; validation happens in ingest/ before
// anything reaches a store. Times are Unix seconds; money is integer micro-units.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/crypto.h"
#include "common/types.h"

namespace adserver::store {

using Id = int64_t;

// How a publisher is paid (issue 16): a share of what advertisers spent on its inventory, or a
// guaranteed price per 1000 served impressions.
// A publisher's request rate limit on its keys (issue 18): `per_second` sustained, `burst`
// requests at once. Absent = unlimited.
struct RateLimit {
  double per_second = 0;
  int64_t burst = 0;
  bool operator==(const RateLimit&) const = default;
};

struct PayoutRule {
  enum class Model { kRevshare, kCpm };
  Model model = Model::kRevshare;
  // kRevshare: the publisher's percent of spend, 0..100.
  double percent = 70;
  // kCpm: micros per 1000 served impressions, >= 0.
  Micros cpm_micros = 0;
};

struct PublisherRecord {
  Id id = 0;
  std::string name;
  // Exact origins ("https://news.example") allowed to call from a browser; empty = any.
  std::vector<std::string> allowed_origins;
  std::vector<Id> blocked_communities;
  // Decision controls (issue 4): allowed-only communities (empty = any), campaign categories
  // opted into, floor per 1000 impressions, experiment arms adUnitIds are hashed onto.
  std::vector<Id> allowed_communities;
  std::vector<std::string> category_opt_ins;
  std::optional<Micros> floor_cpm_micros;
  std::vector<std::string> ab_arms;
  PayoutRule payout;
  std::optional<RateLimit> rate_limit;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

struct ApiKeyRecord {
  Id id = 0;
  Id publisher_id = 0;
  // SHA-256 of the full key; the key itself is never stored.
  Sha256Digest hash{};
  // First 8 characters of the key ("spk_AbCd"), for operators to recognise it.
  std::string prefix;
  bool test = false;
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
};

// An advertiser key (issue 15, POST /v1/events): like ApiKeyRecord, owned by a community.
struct AdvertiserKeyRecord {
  Id id = 0;
  Id community_id = 0;
  // SHA-256 of the full key ("sak_" + 30 characters); the key itself is never stored.
  Sha256Digest hash{};
  std::string prefix;  // first 8 characters ("sak_AbCd")
  bool test = false;
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
};

// Creative review (issue 16): ads (and, issue 39, communities' brands) written by advertiser
// users wait for an operator.
enum class ReviewStatus : uint8_t { kApproved, kPending, kRejected };
inline std::string_view ReviewStatusName(ReviewStatus s) {
  return s == ReviewStatus::kApproved  ? "approved"
         : s == ReviewStatus::kPending ? "pending"
                                       : "rejected";
}
inline std::optional<ReviewStatus> ParseReviewStatus(std::string_view name) {
  for (ReviewStatus s :
       {ReviewStatus::kApproved, ReviewStatus::kPending, ReviewStatus::kRejected}) {
    if (ReviewStatusName(s) == name) return s;
  }
  return std::nullopt;
}

// What every served ad of a community carries: reviewed like an ad's creative (issue 39).
struct CommunityBrand {
  std::string name;
  std::string logo_url;
  bool operator==(const CommunityBrand&) const = default;
};

struct CommunityRecord {
  Id id = 0;
  std::string name;      // as written (the version under review when pending)
  std::string logo_url;  // likewise
  ReviewStatus review_status = ReviewStatus::kApproved;
  std::string review_reason;
  // The last brand an operator approved: what served ads carry while an edit waits for review
  // or after it was rejected. nullopt: none approved, so the community's ads do not serve.
  std::optional<CommunityBrand> approved;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

inline CommunityBrand BrandOf(const CommunityRecord& c) {
  return {.name = c.name, .logo_url = c.logo_url};
}

// Keeps `c.approved` true to `c.review_status` after a write, as SettleApproval(AdRecord&).
inline void SettleApproval(CommunityRecord& c) {
  if (c.review_status == ReviewStatus::kApproved) {
    c.approved = BrandOf(c);
  } else if (c.review_status == ReviewStatus::kRejected && c.approved == BrandOf(c)) {
    c.approved.reset();
  }
}

struct ContractRef {
  int64_t chain_id = 0;
  Address address;
  bool operator==(const ContractRef&) const = default;
};

struct ProjectRecord {
  Id id = 0;
  std::string slug;  // unique, [a-z0-9-]
  std::string name;
  std::string logo_url;  // may be empty
  std::string category;  // may be empty
  std::string symbol;    // the project's ticker, may be empty (issue 40)
  // The lists the project came from, "package@version" each (issue 40); empty when created by
  // hand. Kept in the order they were first seen.
  std::vector<std::string> sources;
  std::vector<ContractRef> contracts;  // each (chain_id, address) belongs to one project
  // The community an operator verified as the project's own (issue 39): only its campaigns may
  // count the project's transactions as conversions. nullopt = nobody's.
  std::optional<Id> owner_community_id;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

// A community's request that an operator verify a project as its own (issue 39).
struct OwnershipRequestRecord {
  Id project_id = 0;
  Id community_id = 0;
  std::string note;  // the advertiser's evidence, e.g. where the contract's deployer is named
  int64_t requested_at = 0;
};

struct FrequencyCap {
  int32_t count = 0;
  int32_t hours = 0;
  bool operator==(const FrequencyCap&) const = default;
};

// Onchain conversions a campaign counts (issue 15, CPTx): an interaction of an exposed wallet
// with one of `projects` within `window_days` after the exposure.
enum class ConversionKind : uint8_t { kAny, kNew, kReturning };
struct ConversionRule {
  std::vector<Id> projects;  // at least one
  ConversionKind kind = ConversionKind::kAny;
  // kReturning: no interaction with the projects in this many days before the exposure.
  int32_t returning_after_days = 45;
  int32_t window_days = 14;  // 1..30
  bool count_once_per_person = true;
  bool operator==(const ConversionRule&) const = default;
};

struct CampaignRecord {
  Id id = 0;
  Id community_id = 0;
  std::string name;
  CampaignStatus status = CampaignStatus::kDraft;
  std::optional<int64_t> starts_at;
  std::optional<int64_t> ends_at;
  PricingModel pricing_model = PricingModel::kCpm;
  Micros bid_micros = 0;
  std::optional<Micros> total_budget_micros;
  std::optional<Micros> daily_budget_micros;
  std::vector<Id> target_projects;   // project ids; at least one
  std::vector<Id> exclude_projects;  // project ids
  std::vector<int64_t> chains;       // chain ids; empty = any chain
  std::optional<int32_t> recency_days;
  std::optional<FrequencyCap> frequency_cap;
  // Decision controls (issue 4).
  std::string category;                   // "" = none; publishers must opt into a category
  std::vector<Id> allowed_publishers;     // empty = every publisher
  std::string pacing = "even";            // "even" or "asap"
  std::optional<Id> advertiser_project;   // the advertiser's own project
  bool exclude_existing_users = false;    // skip people who already use advertiser_project
  // Issue 36 item 9: false values the campaign greedily (its posterior mean, today's rule
  // before exploration) even when the server explores (decision.explore).
  bool explore = true;
  std::optional<ConversionRule> conversion;  // required for CPA
  // Issue 38 item 3: never served, left out of lists unless asked for; billed history stays.
  // A write with `archived` set and no time stamps the write's time.
  bool archived = false;
  std::optional<int64_t> archived_at;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

// What a visitor sees of an ad and where its click goes: the fields an operator reviews.
struct AdCreative {
  std::string headline;
  std::string content;
  std::string cta_url;
  std::string cta_label;
  std::array<std::string, kImageFormatsWithImage> images;
  bool operator==(const AdCreative&) const = default;
};

struct AdRecord {
  Id id = 0;
  Id campaign_id = 0;
  std::string headline;
  std::string content;
  std::string cta_url;
  std::string cta_label;
  // Image URL per format with an image, indexed by ImageFormat (LANDSCAPE, LONG_BANNER,
  // SHORT_BANNER); empty = no creative in that format.
  std::array<std::string, kImageFormatsWithImage> images;
  int32_t weight = 1;
  AdStatus status = AdStatus::kActive;
  std::string ab_arm;  // experiment arm (issue 4); "" = every arm
  // Only approved ads serve; review_reason is the operator's reason for a rejection.
  ReviewStatus review_status = ReviewStatus::kApproved;
  std::string review_reason;
  // The last creative an operator approved (issue 39): what serves, and where every click
  // token of the ad redirects, while a later edit waits for review or after it was rejected.
  // nullopt: no version was ever approved, so the ad neither serves nor redirects.
  std::optional<AdCreative> approved;
  // Issue 38 item 3, as a campaign's: never served, left out of lists unless asked for.
  bool archived = false;
  std::optional<int64_t> archived_at;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

// The creative fields of `a` as written (the version under review when it is pending).
inline AdCreative CreativeOf(const AdRecord& a) {
  return {.headline = a.headline,
          .content = a.content,
          .cta_url = a.cta_url,
          .cta_label = a.cta_label,
          .images = a.images};
}

// Keeps `a.approved` true to `a.review_status` after a write: an approved ad's creative is
// the approved one; rejecting the approved creative itself withdraws it (the ad stops
// serving); a pending or rejected edit leaves the last approved creative serving.
inline void SettleApproval(AdRecord& a) {
  if (a.review_status == ReviewStatus::kApproved) {
    a.approved = CreativeOf(a);
  } else if (a.review_status == ReviewStatus::kRejected && a.approved == CreativeOf(a)) {
    a.approved.reset();
  }
}

// One wallet's interactions with one project on one chain.
struct ActivityRecord {
  Address wallet;
  Id project_id = 0;
  int64_t chain_id = 0;
  int64_t last_seen = 0;  // Unix seconds of the most recent interaction
  int64_t count = 0;      // number of interactions
  bool operator==(const ActivityRecord&) const = default;
};

// Spend and event counters of one campaign (decision engine), absolute values.
struct CampaignCountersRecord {
  Id campaign_id = 0;
  Micros total_spend = 0;
  int64_t impressions = 0;
  int64_t clicks = 0;
  int64_t conversions = 0;
  int64_t day = 0;  // days since the epoch of day_spend
  Micros day_spend = 0;
  int64_t hour = 0;  // hours since the epoch of hour_spend
  Micros hour_spend = 0;
  bool operator==(const CampaignCountersRecord&) const = default;
};

// Everything the serving catalog is built from, read in one consistent transaction.
struct CatalogData {
  std::vector<PublisherRecord> publishers;
  std::vector<ApiKeyRecord> api_keys;  // including revoked ones
  std::vector<CommunityRecord> communities;
  std::vector<ProjectRecord> projects;
  std::vector<CampaignRecord> campaigns;
  std::vector<AdRecord> ads;
  std::vector<AdvertiserKeyRecord> advertiser_keys;  // including revoked ones
};

}  // namespace adserver::store
