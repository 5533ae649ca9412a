#include "admin/detail/records_json.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "common/address.h"
#include "ingest/activity_import.h"
#include "ingest/validation.h"

namespace adserver::admin::detail {
namespace {

constexpr double kMaxRatePerSecond = 1'000'000;
constexpr int64_t kMaxRateBurst = 1'000'000;

std::string Indexed(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

// Reads an enum given by name; `names` lists the accepted values for the error message.
template <typename E, typename Parse>
void ReadEnum(ObjectReader& r, std::string_view key, Parse parse, std::string_view names,
              E& out) {
  const Json* v = r.Find(key);
  if (!v) return;
  std::optional<E> parsed;
  if (v->is_string()) parsed = parse(v->get_ref<const std::string&>());
  if (!parsed) return r.Error(key, "must be one of " + std::string(names));
  out = *parsed;
}

Json OptionalTimeToJson(const std::optional<int64_t>& t) { return t ? TimeToJson(*t) : Json(); }

Json OptionalStringToJson(const std::string& s) { return s.empty() ? Json() : Json(s); }

void ReadContracts(ObjectReader& r, std::vector<store::ContractRef>& out) {
  const Json* v = r.Find("contracts");
  if (!v) return;
  if (!v->is_array()) return r.Error("contracts", "must be an array of {chainId, address}");
  std::vector<store::ContractRef> contracts;
  for (size_t i = 0; i < v->size(); ++i) {
    std::string field = Indexed(r.Field("contracts"), i);
    if (!(*v)[i].is_object()) {
      r.errors().Add(field, "must be an object {chainId, address}");
      continue;
    }
    ObjectReader item((*v)[i], field + ".", r.errors());
    item.Require({"chainId", "address"});
    store::ContractRef contract;
    item.ReadInt("chainId", contract.chain_id);
    std::string address;
    item.ReadString("address", address);
    if (!address.empty()) {
      std::optional<Address> parsed = ParseAddress(address);
      if (!parsed) item.Error("address", "must be 0x followed by 40 hex digits");
      if (parsed) contract.address = *parsed;
    }
    item.RejectUnknown();
    contracts.push_back(contract);
  }
  out = std::move(contracts);
}

// Slugs to ids; an unknown slug becomes id 0 at its index (so indices stay aligned with the
// request) and an error naming that index.
void ReadProjectSlugs(ObjectReader& r, std::string_view key, const ProjectNames& names,
                      std::vector<store::Id>& out) {
  const Json* v = r.Find(key);
  if (!v) return;
  if (!v->is_array()) return r.Error(key, "must be an array of project slugs");
  if (v->size() > ingest::kMaxListItems) {
    return r.Error(key, "must list at most " + std::to_string(ingest::kMaxListItems) + " items");
  }
  std::vector<store::Id> ids;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    std::string field = Indexed(r.Field(key), i);
    auto it = item.is_string() ? names.ids.find(item.get<std::string>()) : names.ids.end();
    if (!item.is_string()) {
      r.errors().Add(field, "must be a project slug");
    } else if (it == names.ids.end()) {
      r.errors().Add(field, "unknown project \"" + item.get<std::string>() + "\"");
    }
    ids.push_back(it == names.ids.end() ? 0 : it->second);
  }
  out = std::move(ids);
}

void ReadPricing(ObjectReader& p, bool creating, store::CampaignRecord& c) {
  if (creating) p.Require({"model", "bid"});
  ReadEnum(p, "model", ParsePricingModel, "CPM, CPC, CPA", c.pricing_model);
  p.ReadMoney("bid", c.bid_micros);
  p.RejectUnknown();
}

void ReadBudget(ObjectReader& b, store::CampaignRecord& c) {
  b.ReadOptionalMoney("total", c.total_budget_micros);
  b.ReadOptionalMoney("daily", c.daily_budget_micros);
  b.RejectUnknown();
}

void ReadTargeting(ObjectReader& t, bool creating, const ProjectNames& names,
                   store::CampaignRecord& c) {
  if (creating) t.Require({"projects"});
  ReadProjectSlugs(t, "projects", names, c.target_projects);
  ReadProjectSlugs(t, "excludeProjects", names, c.exclude_projects);
  t.ReadIntArray("chains", c.chains);
  t.ReadOptionalInt32("recencyDays", c.recency_days);
  t.RejectUnknown();
}

void ReadFrequencyCap(ObjectReader& f, store::CampaignRecord& c) {
  // A new cap needs both fields; an existing one can be changed field by field.
  if (!c.frequency_cap) f.Require({"count", "hours"});
  store::FrequencyCap cap = c.frequency_cap.value_or(store::FrequencyCap{});
  f.ReadInt32("count", cap.count);
  f.ReadInt32("hours", cap.hours);
  f.RejectUnknown();
  c.frequency_cap = cap;
}

void ReadImages(ObjectReader& r, store::AdRecord& a) {
  const Json* v = r.Find("images");
  if (!v) return;
  if (!v->is_object()) {
    return r.Error("images", "must be an object {LANDSCAPE?, LONG_BANNER?, SHORT_BANNER?}");
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    std::string field = r.Field("images") + "." + it.key();
    std::optional<ImageFormat> format = ParseImageFormat(it.key());
    if (!format || *format == ImageFormat::kNoImage) {
      r.errors().Add(field, "unknown image format (LANDSCAPE, LONG_BANNER or SHORT_BANNER)");
      continue;
    }
    auto& slot = a.images[static_cast<size_t>(*format)];
    if (it->is_null()) {
      slot.clear();
    } else if (it->is_string()) {
      slot = it->get<std::string>();
    } else {
      r.errors().Add(field, "must be an image URL string or null");
    }
  }
}

// Decision controls (issue 4): names of categories ([a-z0-9-]{1,64}) and experiment arms
// ([A-Za-z0-9_-]{1,32}).
bool IsName(const std::string& s, size_t max, bool allow_upper) {
  if (s.empty() || s.size() > max) return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
              (allow_upper && ((ch >= 'A' && ch <= 'Z') || ch == '_'));
    if (!ok) return false;
  }
  return true;
}

void ReadNameArray(ObjectReader& r, std::string_view key, size_t max, bool allow_upper,
                   std::vector<std::string>& out) {
  if (!r.Find(key)) return;
  std::vector<std::string> names;
  r.ReadStringArray(key, names);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!IsName(names[i], max, allow_upper)) {
      r.errors().Add(Indexed(r.Field(key), i), allow_upper ? "must match [A-Za-z0-9_-]{1,32}"
                                                            : "must match [a-z0-9-]{1,64}");
    } else if (std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i) {
      r.errors().Add(Indexed(r.Field(key), i), "duplicate");
    }
  }
  out = std::move(names);
}

void ReadOptionalName(ObjectReader& r, std::string_view key, size_t max, bool allow_upper,
                      std::string& out) {
  if (!r.Find(key)) return;
  std::string name;
  r.ReadOptionalString(key, name);
  if (!name.empty() && !IsName(name, max, allow_upper)) {
    return r.Error(key, allow_upper ? "must match [A-Za-z0-9_-]{1,32}" : "must match [a-z0-9-]{1,64}");
  }
  out = std::move(name);
}

void ReadPublisherControls(ObjectReader& r, store::PublisherRecord& p) {
  r.ReadIntArray("allowedCommunities", p.allowed_communities);
  ReadNameArray(r, "categoryOptIns", 64, false, p.category_opt_ins);
  r.ReadOptionalMoney("floorCpm", p.floor_cpm_micros);
  ReadNameArray(r, "abArms", 32, true, p.ab_arms);
}

// The payout rule replaces the publisher's whole rule: {"model":"revshare","percent":70} (percent
// defaults to 70) or {"model":"cpm","cpm":10}.
void ReadPayoutRule(ObjectReader& r, store::PayoutRule& out) {
  store::PayoutRule rule;
  const Json* model = r.Find("model");
  if (model == nullptr) return r.Require({"model"});
  if (model->is_string() && *model == "cpm") {
    rule.model = store::PayoutRule::Model::kCpm;
    r.Require({"cpm"});
    r.ReadMoney("cpm", rule.cpm_micros);
  } else if (model->is_string() && *model == "revshare") {
    if (const Json* percent = r.Find("percent")) {
      if (!percent->is_number() || !(percent->get<double>() >= 0) ||
          !(percent->get<double>() <= 100)) {
        r.Error("percent", "must be a number from 0 to 100");
      } else {
        rule.percent = percent->get<double>();
      }
    }
  } else {
    return r.Error("model", "must be one of revshare, cpm");
  }
  r.RejectUnknown();
  out = rule;
}

// {"perSecond": 50, "burst": 100} (burst defaults to perSecond rounded up); null clears it.
void ReadRateLimit(ObjectReader& r, std::optional<store::RateLimit>& out) {
  store::RateLimit limit;
  const Json* per_second = r.Find("perSecond");
  if (per_second == nullptr) return r.Require({"perSecond"});
  if (!per_second->is_number() || !(per_second->get<double>() > 0) ||
      !(per_second->get<double>() <= kMaxRatePerSecond)) {
    return r.Error("perSecond", "must be a number above 0, at most 1000000");
  }
  limit.per_second = per_second->get<double>();
  limit.burst = static_cast<int64_t>(std::ceil(limit.per_second));
  if (const Json* burst = r.Find("burst")) {
    std::optional<int64_t> b = JsonInt(*burst);
    if (!b || *b < 1 || *b > kMaxRateBurst) {
      return r.Error("burst", "must be an integer from 1 to 1000000");
    }
    limit.burst = *b;
  }
  r.RejectUnknown();
  out = limit;
}

Json RateLimitToJson(const std::optional<store::RateLimit>& limit) {
  if (!limit) return Json();
  return Json{{"perSecond", limit->per_second}, {"burst", limit->burst}};
}

Json PayoutRuleToJson(const store::PayoutRule& rule) {
  if (rule.model == store::PayoutRule::Model::kCpm) {
    return Json{{"model", "cpm"}, {"cpm", MoneyToJson(rule.cpm_micros)}};
  }
  return Json{{"model", "revshare"}, {"percent", rule.percent}};
}

void ReadCampaignControls(ObjectReader& r, const ProjectNames& names, store::CampaignRecord& c) {
  ReadOptionalName(r, "category", 64, false, c.category);
  r.ReadIntArray("allowedPublishers", c.allowed_publishers);
  if (const Json* v = r.Find("pacing")) {
    if (v->is_string() && (*v == "even" || *v == "asap")) {
      c.pacing = v->get<std::string>();
    } else {
      r.Error("pacing", "must be one of even, asap");
    }
  }
  if (const Json* v = r.Find("advertiserProject")) {
    auto it = v->is_string() ? names.ids.find(v->get<std::string>()) : names.ids.end();
    if (v->is_null()) {
      c.advertiser_project.reset();
    } else if (it == names.ids.end()) {
      r.Error("advertiserProject", "must be the slug of an existing project or null");
    } else {
      c.advertiser_project = it->second;
    }
  }
  r.ReadBool("excludeExistingUsers", c.exclude_existing_users);
  // Issue 36 item 9: false values the campaign greedily even when the server explores.
  r.ReadBool("explore", c.explore);
}

void ReadConversion(ObjectReader& r, const ProjectNames& names, store::CampaignRecord& c) {
  store::ConversionRule rule = c.conversion.value_or(store::ConversionRule{});
  ReadProjectSlugs(r, "projects", names, rule.projects);
  if (const Json* v = r.Find("kind")) {
    if (v->is_string() && *v == "any") {
      rule.kind = store::ConversionKind::kAny;
    } else if (v->is_string() && *v == "new") {
      rule.kind = store::ConversionKind::kNew;
    } else if (v->is_string() && *v == "returning") {
      rule.kind = store::ConversionKind::kReturning;
    } else {
      r.Error("kind", "must be one of any, new, returning");
    }
  }
  r.ReadInt32("returningAfterDays", rule.returning_after_days);
  r.ReadInt32("windowDays", rule.window_days);
  r.ReadBool("countOncePerPerson", rule.count_once_per_person);
  r.RejectUnknown();
  c.conversion = std::move(rule);
}

std::string_view ConversionKindName(store::ConversionKind kind) {
  switch (kind) {
    case store::ConversionKind::kNew:
      return "new";
    case store::ConversionKind::kReturning:
      return "returning";
    case store::ConversionKind::kAny:
      break;
  }
  return "any";
}

}  // namespace

ProjectNames::ProjectNames(const std::vector<store::ProjectRecord>& projects) {
  for (const store::ProjectRecord& p : projects) {
    ids.emplace(p.slug, p.id);
    slugs.emplace(p.id, p.slug);
    if (p.owner_community_id) owners.emplace(p.id, *p.owner_community_id);
  }
}

std::optional<store::Id> ProjectNames::OwnerOf(store::Id id) const {
  auto it = owners.find(id);
  if (it == owners.end()) return std::nullopt;
  return it->second;
}

std::string ProjectNames::SlugOf(store::Id id) const {
  auto it = slugs.find(id);
  return it == slugs.end() ? std::to_string(id) : it->second;
}

Json TimeToJson(int64_t unix_seconds) { return ingest::FormatRfc3339(unix_seconds); }

void ApplyPublisher(ObjectReader& r, bool creating, store::PublisherRecord& p) {
  if (creating) r.Require({"name"});
  r.ReadString("name", p.name);
  r.ReadStringArray("allowedOrigins", p.allowed_origins);
  r.ReadIntArray("blockedCommunities", p.blocked_communities);
  ReadPublisherControls(r, p);
  r.ReadObject("payout", [&](ObjectReader& payout) { ReadPayoutRule(payout, p.payout); });
  r.ReadObject(
      "rateLimit", [&](ObjectReader& limit) { ReadRateLimit(limit, p.rate_limit); },
      [&] { p.rate_limit.reset(); });
  r.RejectUnknown();
}

Json PublisherToJson(const store::PublisherRecord& p) {
  return Json{{"id", p.id},
              {"name", p.name},
              {"allowedOrigins", p.allowed_origins},
              {"blockedCommunities", p.blocked_communities},
              {"allowedCommunities", p.allowed_communities},
              {"categoryOptIns", p.category_opt_ins},
              {"floorCpm", p.floor_cpm_micros ? MoneyToJson(*p.floor_cpm_micros) : Json()},
              {"abArms", p.ab_arms},
              {"payout", PayoutRuleToJson(p.payout)},
              {"rateLimit", RateLimitToJson(p.rate_limit)},
              {"createdAt", TimeToJson(p.created_at)},
              {"updatedAt", TimeToJson(p.updated_at)}};
}

Json ApiKeyToJson(const store::ApiKeyRecord& k) {
  return Json{{"id", k.id},
              {"publisherId", k.publisher_id},
              {"prefix", k.prefix},
              {"test", k.test},
              {"createdAt", TimeToJson(k.created_at)},
              {"revokedAt", OptionalTimeToJson(k.revoked_at)}};
}

void ApplyCommunity(ObjectReader& r, bool creating, store::CommunityRecord& c) {
  if (creating) r.Require({"name", "logoUrl"});
  r.ReadString("name", c.name);
  r.ReadString("logoUrl", c.logo_url);
  r.Find("approved");  // read-only (issue 39), like an ad's
  r.RejectUnknown();
}

Json CommunityToJson(const store::CommunityRecord& c) {
  Json approved = nullptr;
  if (c.approved) approved = Json{{"name", c.approved->name}, {"logoUrl", c.approved->logo_url}};
  return Json{{"id", c.id},
              {"name", c.name},
              {"logoUrl", c.logo_url},
              {"reviewStatus", store::ReviewStatusName(c.review_status)},
              {"reviewReason", OptionalStringToJson(c.review_reason)},
              {"approved", std::move(approved)},
              {"createdAt", TimeToJson(c.created_at)},
              {"updatedAt", TimeToJson(c.updated_at)}};
}

void ApplyProject(ObjectReader& r, bool creating, store::ProjectRecord& p) {
  if (creating) r.Require({"slug", "name"});
  r.ReadString("slug", p.slug);
  r.ReadString("name", p.name);
  r.ReadOptionalString("logoUrl", p.logo_url);
  r.ReadOptionalString("category", p.category);
  r.ReadOptionalString("symbol", p.symbol);
  ReadContracts(r, p.contracts);
  // The community verified as the project's own (issue 39); null: nobody's.
  if (const Json* owner = r.Find("ownerCommunityId"); owner != nullptr && owner->is_null()) {
    p.owner_community_id.reset();
  } else if (owner != nullptr) {
    std::optional<int64_t> id = JsonInt(*owner);
    if (id && *id > 0) {
      p.owner_community_id = *id;
    } else {
      r.Error("ownerCommunityId", "must be a community id (a positive integer) or null");
    }
  }
  r.RejectUnknown();
}

namespace {

// The fields both forms of a project share.
Json ProjectHeadToJson(const store::ProjectRecord& p) {
  return Json{
      {"id", p.id},
      {"slug", p.slug},
      {"name", p.name},
      {"logoUrl", OptionalStringToJson(p.logo_url)},
      {"category", OptionalStringToJson(p.category)},
      {"symbol", OptionalStringToJson(p.symbol)},
      {"ownerCommunityId", p.owner_community_id ? Json(*p.owner_community_id) : Json(nullptr)}};
}

}  // namespace

Json ProjectToJson(const store::ProjectRecord& p) {
  Json contracts = Json::array();
  for (const store::ContractRef& c : p.contracts) {
    contracts.push_back(Json{{"chainId", c.chain_id}, {"address", FormatAddress(c.address)}});
  }
  Json out = ProjectHeadToJson(p);
  out["sources"] = p.sources;
  out["contracts"] = std::move(contracts);
  out["createdAt"] = TimeToJson(p.created_at);
  out["updatedAt"] = TimeToJson(p.updated_at);
  return out;
}

Json ProjectSummaryToJson(const store::ProjectRecord& p) {
  Json out = ProjectHeadToJson(p);
  out["contractCount"] = p.contracts.size();
  return out;
}

namespace {

// `archived` (issue 38 item 3): true archives (the store stamps the time of the first write
// that does), false restores; `archivedAt` is read-only, so a GET result sent back is accepted.
template <typename Record>
void ReadArchived(ObjectReader& r, Record& rec) {
  const bool was = rec.archived;
  r.ReadBool("archived", rec.archived);
  if (!rec.archived) rec.archived_at.reset();
  if (rec.archived && !was) rec.archived_at.reset();
  r.Find("archivedAt");
}

}  // namespace

void ApplyCampaign(ObjectReader& r, bool creating, const ProjectNames& names,
                   store::CampaignRecord& c) {
  if (creating) r.Require({"communityId", "name", "status", "pricing", "targeting"});
  r.ReadInt("communityId", c.community_id);
  r.ReadString("name", c.name);
  ReadEnum(r, "status", ParseCampaignStatus, "draft, active, paused, ended", c.status);
  r.ReadOptionalTime("startsAt", c.starts_at);
  r.ReadOptionalTime("endsAt", c.ends_at);
  r.ReadObject("pricing", [&](ObjectReader& p) { ReadPricing(p, creating, c); });
  r.ReadObject(
      "budget", [&](ObjectReader& b) { ReadBudget(b, c); },
      [&] {
        c.total_budget_micros.reset();
        c.daily_budget_micros.reset();
      });
  r.ReadObject("targeting", [&](ObjectReader& t) { ReadTargeting(t, creating, names, c); });
  r.ReadObject(
      "frequencyCap", [&](ObjectReader& f) { ReadFrequencyCap(f, c); },
      [&] { c.frequency_cap.reset(); });
  ReadCampaignControls(r, names, c);
  r.ReadObject(
      "conversion", [&](ObjectReader& o) { ReadConversion(o, names, c); },
      [&] { c.conversion.reset(); });
  ReadArchived(r, c);
  r.RejectUnknown();
}

Json CampaignToJson(const store::CampaignRecord& c, const ProjectNames& names) {
  auto slugs = [&](const std::vector<store::Id>& ids) {
    Json out = Json::array();
    for (store::Id id : ids) out.push_back(names.SlugOf(id));
    return out;
  };
  auto optional_money = [](const std::optional<Micros>& m) {
    return m ? MoneyToJson(*m) : Json();
  };
  Json cap;
  if (c.frequency_cap) cap = Json{{"count", c.frequency_cap->count}, {"hours", c.frequency_cap->hours}};
  Json conversion;
  if (c.conversion) {
    conversion = Json{{"projects", slugs(c.conversion->projects)},
                      {"kind", ConversionKindName(c.conversion->kind)},
                      {"returningAfterDays", c.conversion->returning_after_days},
                      {"windowDays", c.conversion->window_days},
                      {"countOncePerPerson", c.conversion->count_once_per_person}};
  }
  return Json{{"id", c.id},
              {"communityId", c.community_id},
              {"name", c.name},
              {"status", CampaignStatusName(c.status)},
              {"startsAt", OptionalTimeToJson(c.starts_at)},
              {"endsAt", OptionalTimeToJson(c.ends_at)},
              {"pricing",
               {{"model", PricingModelName(c.pricing_model)}, {"bid", MoneyToJson(c.bid_micros)}}},
              {"budget",
               {{"total", optional_money(c.total_budget_micros)},
                {"daily", optional_money(c.daily_budget_micros)}}},
              {"targeting",
               {{"projects", slugs(c.target_projects)},
                {"excludeProjects", slugs(c.exclude_projects)},
                {"chains", c.chains},
                {"recencyDays", c.recency_days ? Json(*c.recency_days) : Json()}}},
              {"frequencyCap", std::move(cap)},
              {"category", OptionalStringToJson(c.category)},
              {"allowedPublishers", c.allowed_publishers},
              {"pacing", c.pacing},
              {"advertiserProject",
               c.advertiser_project ? Json(names.SlugOf(*c.advertiser_project)) : Json()},
              {"excludeExistingUsers", c.exclude_existing_users},
              {"explore", c.explore},
              {"conversion", std::move(conversion)},
              {"archived", c.archived},
              {"archivedAt", OptionalTimeToJson(c.archived_at)},
              {"createdAt", TimeToJson(c.created_at)},
              {"updatedAt", TimeToJson(c.updated_at)}};
}

void ApplyAd(ObjectReader& r, bool creating, store::AdRecord& a) {
  if (creating) r.Require({"campaignId", "headline", "content", "ctaUrl", "ctaLabel", "images"});
  store::Id campaign_id = a.campaign_id;
  r.ReadInt("campaignId", campaign_id);
  if (!creating && campaign_id != a.campaign_id) {
    r.Error("campaignId", "cannot be changed; create the ad in the other campaign instead");
  }
  a.campaign_id = campaign_id;
  r.ReadString("headline", a.headline);
  r.ReadString("content", a.content);
  r.ReadString("ctaUrl", a.cta_url);
  r.ReadString("ctaLabel", a.cta_label);
  ReadImages(r, a);
  r.ReadInt32("weight", a.weight);
  ReadEnum(r, "status", ParseAdStatus, "active, paused", a.status);
  ReadOptionalName(r, "abArm", 32, true, a.ab_arm);
  r.Find("approved");  // read-only (issue 39): a GET result sent back changes nothing with it
  ReadArchived(r, a);
  r.RejectUnknown();
}

namespace {

Json ImagesToJson(const std::array<std::string, kImageFormatsWithImage>& urls) {
  Json images = Json::object();
  for (int i = 0; i < kImageFormatsWithImage; ++i) {
    images[std::string(ImageFormatName(static_cast<ImageFormat>(i)))] =
        OptionalStringToJson(urls[static_cast<size_t>(i)]);
  }
  return images;
}

}  // namespace

Json AdToJson(const store::AdRecord& a) {
  Json approved = nullptr;
  if (a.approved) {
    approved = Json{{"headline", a.approved->headline},
                    {"content", a.approved->content},
                    {"ctaUrl", a.approved->cta_url},
                    {"ctaLabel", a.approved->cta_label},
                    {"images", ImagesToJson(a.approved->images)}};
  }
  return Json{{"id", a.id},
              {"campaignId", a.campaign_id},
              {"headline", a.headline},
              {"content", a.content},
              {"ctaUrl", a.cta_url},
              {"ctaLabel", a.cta_label},
              {"images", ImagesToJson(a.images)},
              {"weight", a.weight},
              {"status", AdStatusName(a.status)},
              {"abArm", OptionalStringToJson(a.ab_arm)},
              {"reviewStatus", store::ReviewStatusName(a.review_status)},
              {"reviewReason", OptionalStringToJson(a.review_reason)},
              {"approved", std::move(approved)},
              {"archived", a.archived},
              {"archivedAt", OptionalTimeToJson(a.archived_at)},
              {"createdAt", TimeToJson(a.created_at)},
              {"updatedAt", TimeToJson(a.updated_at)}};
}

}  // namespace adserver::admin::detail
