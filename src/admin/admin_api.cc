#include "admin/admin_api.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "admin/authenticator.h"
#include "admin/detail/event_text.h"
#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/project_search.h"
#include "admin/detail/records_json.h"
#include "common/address.h"
#include "common/check.h"
#include "common/crypto.h"
#include "common/log.h"
#include "ingest/activity_import.h"
#include "ingest/bulk_import.h"
#include "ingest/registry_import.h"
#include "ingest/validation.h"
#include "store/account_store.h"

namespace adserver::admin {
namespace {

using detail::FieldErrors;
using detail::Json;
using detail::JsonResponse;
using detail::ObjectReader;
using detail::ProjectNames;

// What every handler works with. References outlive the AdminApi (see its constructor).
struct Ctx {
  store::InventoryStore& store;
  store::ActivityStore& activity;  // wallet activity: its import and reads
  ingest::SnapshotPublisher& snapshots;
  const Clock& clock;
  const AdminOptions& options;
  const Principal& principal;  // the caller (issue 16)
  detail::RegistryCache& registry;  // the project search's copy of the registry (issue 40)
};

using HandlerFn = http::Response (*)(Ctx&, const http::Request&);

http::Response Fail(const Status& status) { return http::ErrorResponse(status); }

// Makes a write visible to serving before the call returns; a failed refresh only delays
// visibility (the background poller retries), so the write still succeeds.
void Refresh(Ctx& ctx) {
  Status st = ctx.snapshots.RefreshNow();
  if (!st.ok()) ADS_LOG(warn, "snapshot refresh after admin write failed", "status", st);
}

// A positive decimal id ("42"); nullopt for anything else.
std::optional<store::Id> ParseId(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  store::Id id = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  if (id <= 0) return std::nullopt;
  return id;
}

// Case-insensitive media type of a Content-Type value, parameters dropped.
bool HasMediaType(std::string_view content_type, std::string_view expected) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  if (type.size() != expected.size()) return false;
  for (size_t i = 0; i < type.size(); ++i) {
    char c = type[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != expected[i]) return false;
  }
  return true;
}

// The request body as a JSON object, or the error response to send. An empty body reads as
// {} when `allow_empty`.
std::variant<Json, http::Response> ReadJsonObject(const http::Request& request,
                                                  bool allow_empty = false) {
  if (allow_empty && request.body.empty()) return Json::object();
  if (!HasMediaType(request.Header("Content-Type"), "application/json")) {
    return http::ErrorResponse(415, "Content-Type must be application/json");
  }
  Result<Json> body = detail::ParseJsonObject(request.body);
  if (!body.ok()) return Fail(body.status());
  return std::move(*body);
}

std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    }
  }
  return std::nullopt;
}

// Replaces the store's NotFound by one naming the resource and the id from the path.
template <typename T>
Result<T> NameNotFound(Result<T> result, std::string_view what, std::string_view id) {
  if (result.ok() || result.status().code() != Code::kNotFound) return result;
  return NotFoundError(std::string(what) + " " + std::string(id.substr(0, 64)) + " not found");
}

template <typename T, typename Get>
Result<T> FindById(std::string_view param, std::string_view what, Get get) {
  std::optional<store::Id> id = ParseId(param);
  if (!id) return NotFoundError(std::string(what) + " " + std::string(param.substr(0, 64)) +
                                " not found");
  return NameNotFound<T>(get(*id), what, param);
}

Status CheckExists(Status looked_up, FieldErrors& errors, std::string field, std::string what) {
  if (looked_up.code() == Code::kNotFound) {
    errors.Add(std::move(field), "unknown " + std::move(what));
    return OkStatus();
  }
  return looked_up;
}

// ---- Resource traits: how each resource maps onto the store. Used by Crud<T> below.

// The ?reviewStatus= filter of a list, if given.
Result<std::optional<store::ReviewStatus>> ReviewFilter(const http::Request& request) {
  std::optional<std::string_view> text = QueryParam(request.query, "reviewStatus");
  if (!text) return std::optional<store::ReviewStatus>();
  std::optional<store::ReviewStatus> review = store::ParseReviewStatus(*text);
  if (!review)
    return InvalidFieldError("reviewStatus", "must be one of approved, pending, rejected");
  return review;
}

// The ?archived= filter of the campaign and ad lists (issue 38 item 3): false (the default)
// leaves archived records out, true lists only them, any lists both.
Status DropByArchived(const http::Request& request, auto& records) {
  std::optional<std::string_view> text = QueryParam(request.query, "archived");
  if (text && *text != "false" && *text != "true" && *text != "any") {
    return InvalidFieldError("archived", "must be one of false, true, any");
  }
  if (text && *text == "any") return OkStatus();
  const bool archived = text && *text == "true";
  std::erase_if(records, [&](const auto& r) { return r.archived != archived; });
  return OkStatus();
}

// The review fields of a write (issues 16 and 39; ads and communities): only operators set
// reviewStatus/reviewReason (a rejection needs a reason); an advertiser's write of any of
// `reviewed` fields makes the record pending, an operator's approves it, and a write that
// leaves them alone keeps the review. Removes the review keys from `body`.
template <typename Record>
Status ReadReview(Ctx& ctx, Json& body, std::string_view plural,
                  std::initializer_list<const char*> reviewed, Record& rec) {
  bool sets_review = body.contains("reviewStatus") || body.contains("reviewReason");
  if (sets_review && !ctx.principal.IsOperator()) {
    return PermissionDeniedError("only operators review " + std::string(plural) +
                                 " (reviewStatus, reviewReason)");
  }
  std::optional<store::ReviewStatus> requested;
  std::string reason = rec.review_reason;
  FieldErrors errors;
  if (body.contains("reviewStatus")) {
    const Json& value = body["reviewStatus"];
    requested =
        value.is_string() ? store::ParseReviewStatus(value.get<std::string>()) : std::nullopt;
    if (!requested) errors.Add("reviewStatus", "must be one of approved, pending, rejected");
  }
  if (body.contains("reviewReason")) {
    const Json& value = body["reviewReason"];
    if (value.is_null()) {
      reason.clear();
    } else if (!value.is_string() || value.get<std::string>().size() > 1000) {
      errors.Add("reviewReason", "must be a string of at most 1000 characters");
    } else {
      reason = value.get<std::string>();
    }
  }
  if (requested == store::ReviewStatus::kRejected && reason.empty()) {
    errors.Add("reviewReason", "is required when rejecting");
  }
  if (!errors.empty()) return errors.ToStatus();
  body.erase("reviewStatus");
  body.erase("reviewReason");
  AdWrite write{.creating = rec.id == 0, .requested = requested};
  for (const char* field : reviewed) write.writes_creative |= body.contains(field);
  rec.review_status = ReviewAfterWrite(ctx.principal, write, rec.review_status);
  // A reason explains a rejection; approving or resubmitting clears it.
  rec.review_reason = rec.review_status == store::ReviewStatus::kRejected ? reason : "";
  return OkStatus();
}

struct NoAux {};

struct PublisherApi {
  using Record = store::PublisherRecord;
  using Aux = NoAux;
  static constexpr std::string_view kName = "publisher";
  static constexpr std::string_view kPlural = "publishers";
  static Result<Aux> LoadAux(store::InventoryStore&) { return Aux{}; }
  static Result<Record> Find(store::InventoryStore& s, std::string_view param) {
    return FindById<Record>(param, kName, [&](store::Id id) { return s.GetPublisher(id); });
  }
  static Result<std::vector<Record>> List(store::InventoryStore& s, const http::Request&) {
    return s.ListPublishers();
  }
  static void Apply(ObjectReader& r, bool creating, const Aux&, Record& rec) {
    detail::ApplyPublisher(r, creating, rec);
  }
  static Status Validate(const Record& rec) { return ingest::ValidatePublisher(rec); }
  static Status CheckOwner(Ctx& ctx, const Record& rec) {
    return CheckPublisher(ctx.principal, rec.id, "publisher " + std::to_string(rec.id));
  }
  // Publisher users edit their settings, not what they are paid (issue 16) nor how much
  // traffic the server takes from them (issue 18).
  static Status BeforeWrite(Ctx& ctx, Json& body, Record&) {
    if (body.contains("payout") && !ctx.principal.IsOperator()) {
      return PermissionDeniedError("only operators set a publisher's payout rule");
    }
    if (body.contains("rateLimit") && !ctx.principal.IsOperator()) {
      return PermissionDeniedError("only operators set a publisher's rate limit");
    }
    return OkStatus();
  }
  static Status CheckReferences(Ctx& ctx, const Record& rec, FieldErrors& errors) {
    if (rec.blocked_communities.empty()) return OkStatus();
    ADS_ASSIGN_OR_RETURN(std::vector<store::CommunityRecord> communities,
                         ctx.store.ListCommunities());
    for (size_t i = 0; i < rec.blocked_communities.size(); ++i) {
      bool known = std::any_of(communities.begin(), communities.end(), [&](const auto& c) {
        return c.id == rec.blocked_communities[i];
      });
      if (!known) {
        errors.Add("blockedCommunities[" + std::to_string(i) + "]", "unknown community");
      }
    }
    return OkStatus();
  }
  static Result<Record> Create(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.CreatePublisher(r, now);
  }
  static Result<Record> Update(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.UpdatePublisher(r, now);
  }
  static Status Delete(store::InventoryStore& s, store::Id id) { return s.DeletePublisher(id); }
  static Json ToJson(const Record& r, const Aux&) { return detail::PublisherToJson(r); }
};

struct CommunityApi {
  using Record = store::CommunityRecord;
  using Aux = NoAux;
  static constexpr std::string_view kName = "community";
  static constexpr std::string_view kPlural = "communities";
  static Result<Aux> LoadAux(store::InventoryStore&) { return Aux{}; }
  static Result<Record> Find(store::InventoryStore& s, std::string_view param) {
    return FindById<Record>(param, kName, [&](store::Id id) { return s.GetCommunity(id); });
  }
  // ?reviewStatus=pending|approved|rejected filters by brand review (the review queue).
  static Result<std::vector<Record>> List(store::InventoryStore& s, const http::Request& request) {
    ADS_ASSIGN_OR_RETURN(std::optional<store::ReviewStatus> review, ReviewFilter(request));
    ADS_ASSIGN_OR_RETURN(std::vector<Record> communities, s.ListCommunities());
    if (review) {
      std::erase_if(communities, [&](const Record& c) { return c.review_status != *review; });
    }
    return communities;
  }
  static void Apply(ObjectReader& r, bool creating, const Aux&, Record& rec) {
    detail::ApplyCommunity(r, creating, rec);
  }
  static Status Validate(const Record& rec) { return ingest::ValidateCommunity(rec); }
  // Brand review (issue 39): an advertiser's change of its community's name or logo waits for
  // an operator like an ad's creative; served ads keep the approved brand meanwhile.
  static Status BeforeWrite(Ctx& ctx, Json& body, Record& rec) {
    return ReadReview(ctx, body, "communities", {"name", "logoUrl"}, rec);
  }
  // Communities are public (names and logos appear in ads): publishers read them all.
  static Status CheckOwner(Ctx& ctx, const Record& rec) {
    if (ctx.principal.role == store::Role::kPublisher) return OkStatus();
    return CheckCommunity(ctx.principal, rec.id, "community " + std::to_string(rec.id));
  }
  static Status CheckReferences(Ctx&, const Record&, FieldErrors&) { return OkStatus(); }
  static Result<Record> Create(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.CreateCommunity(r, now);
  }
  static Result<Record> Update(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.UpdateCommunity(r, now);
  }
  static Status Delete(store::InventoryStore& s, store::Id id) { return s.DeleteCommunity(id); }
  static Json ToJson(const Record& r, const Aux&) { return detail::CommunityToJson(r); }
};

struct ProjectApi {
  using Record = store::ProjectRecord;
  using Aux = NoAux;
  static constexpr std::string_view kName = "project";
  static constexpr std::string_view kPlural = "projects";
  static Result<Aux> LoadAux(store::InventoryStore&) { return Aux{}; }
  // A numeric id or a slug.
  static Result<Record> Find(store::InventoryStore& s, std::string_view param) {
    if (ParseId(param)) {
      return FindById<Record>(param, kName, [&](store::Id id) { return s.GetProject(id); });
    }
    if (!ingest::IsValidProjectSlug(param)) {
      return NotFoundError("project " + std::string(param.substr(0, 64)) + " not found");
    }
    return NameNotFound(s.GetProjectBySlug(std::string(param)), kName, param);
  }
  static Result<std::vector<Record>> List(store::InventoryStore& s, const http::Request&) {
    return s.ListProjects();
  }
  static void Apply(ObjectReader& r, bool creating, const Aux&, Record& rec) {
    detail::ApplyProject(r, creating, rec);
  }
  static Status Validate(const Record& rec) { return ingest::ValidateProject(rec); }
  // The project registry is shared: every role reads it, only operators write it.
  static Status CheckOwner(Ctx&, const Record&) { return OkStatus(); }
  static Status CheckReferences(Ctx& ctx, const Record& rec, FieldErrors& errors) {
    if (!rec.owner_community_id) return OkStatus();
    return CheckExists(ctx.store.GetCommunity(*rec.owner_community_id).status(), errors,
                       "ownerCommunityId", "community");
  }
  static Result<Record> Create(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.CreateProject(r, now);
  }
  static Result<Record> Update(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.UpdateProject(r, now);
  }
  static Status Delete(store::InventoryStore& s, store::Id id) { return s.DeleteProject(id); }
  static Json ToJson(const Record& r, const Aux&) { return detail::ProjectToJson(r); }
};

struct CampaignApi {
  using Record = store::CampaignRecord;
  using Aux = ProjectNames;
  static constexpr std::string_view kName = "campaign";
  static constexpr std::string_view kPlural = "campaigns";
  static Result<Aux> LoadAux(store::InventoryStore& s) {
    ADS_ASSIGN_OR_RETURN(std::vector<store::ProjectRecord> projects, s.ListProjects());
    return ProjectNames(projects);
  }
  static Result<Record> Find(store::InventoryStore& s, std::string_view param) {
    return FindById<Record>(param, kName, [&](store::Id id) { return s.GetCampaign(id); });
  }
  static Result<std::vector<Record>> List(store::InventoryStore& s, const http::Request& request) {
    ADS_ASSIGN_OR_RETURN(std::vector<Record> campaigns, s.ListCampaigns());
    ADS_RETURN_IF_ERROR(DropByArchived(request, campaigns));
    return campaigns;
  }
  static void Apply(ObjectReader& r, bool creating, const Aux& names, Record& rec) {
    std::vector<store::Id> before;
    if (rec.conversion) before = rec.conversion->projects;
    detail::ApplyCampaign(r, creating, names, rec);
    CheckConversionOwners(r, names, before, rec);
  }
  // Issue 39: a campaign counts as conversions only transactions with projects an operator
  // verified as its community's own (otherwise naming a popular project would list which
  // wallets saw the ads). The same rule for every writer: an operator sets the owner first.
  // Only projects the write adds are checked: one named before the rule (or before its owner
  // changed) does not block pausing the campaign, and the catalog never counts it anyway.
  static void CheckConversionOwners(ObjectReader& r, const Aux& names,
                                    const std::vector<store::Id>& before, const Record& rec) {
    if (!rec.conversion) return;
    const std::vector<store::Id>& projects = rec.conversion->projects;
    for (size_t i = 0; i < projects.size(); ++i) {
      if (!names.slugs.contains(projects[i])) continue;  // unknown: ApplyCampaign said so
      if (std::find(before.begin(), before.end(), projects[i]) != before.end()) continue;
      if (names.OwnerOf(projects[i]) == rec.community_id) continue;
      const std::string slug = names.SlugOf(projects[i]);
      r.Error("conversion.projects[" + std::to_string(i) + "]",
              "project '" + slug +
                  "' is not verified as this community's own; ask an operator to verify it "
                  "(POST /admin/v1/projects/" +
                  slug + "/ownership-requests)");
    }
  }
  static Status Validate(const Record& rec) { return ingest::ValidateCampaign(rec); }
  static Status CheckOwner(Ctx& ctx, const Record& rec) {
    return CheckCommunity(ctx.principal, rec.community_id, "campaign " + std::to_string(rec.id));
  }
  // Another tenant's community reads as unknown.
  static Status CheckReferences(Ctx& ctx, const Record& rec, FieldErrors& errors) {
    Status looked_up = ctx.store.GetCommunity(rec.community_id).status();
    if (looked_up.ok() && !CheckCommunity(ctx.principal, rec.community_id, "").ok()) {
      looked_up = NotFoundError("community");
    }
    return CheckExists(looked_up, errors, "communityId", "community");
  }
  static Result<Record> Create(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.CreateCampaign(r, now);
  }
  static Result<Record> Update(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.UpdateCampaign(r, now);
  }
  static Status Delete(store::InventoryStore& s, store::Id id) { return s.DeleteCampaign(id); }
  static Json ToJson(const Record& r, const Aux& names) {
    return detail::CampaignToJson(r, names);
  }
};

struct AdApi {
  using Record = store::AdRecord;
  using Aux = NoAux;
  static constexpr std::string_view kName = "ad";
  static constexpr std::string_view kPlural = "ads";
  static Result<Aux> LoadAux(store::InventoryStore&) { return Aux{}; }
  static Result<Record> Find(store::InventoryStore& s, std::string_view param) {
    return FindById<Record>(param, kName, [&](store::Id id) { return s.GetAd(id); });
  }
  // ?campaignId=N filters by campaign, ?reviewStatus=pending|approved|rejected by review
  // state (the operator's review queue).
  static Result<std::vector<Record>> List(store::InventoryStore& s, const http::Request& request) {
    ADS_ASSIGN_OR_RETURN(std::optional<store::ReviewStatus> review, ReviewFilter(request));
    std::optional<store::Id> campaign_id;
    if (std::optional<std::string_view> filter = QueryParam(request.query, "campaignId")) {
      campaign_id = ParseId(*filter);
      if (!campaign_id) {
        return InvalidFieldError("campaignId", "must be a positive integer campaign id");
      }
    }
    ADS_ASSIGN_OR_RETURN(std::vector<Record> ads, s.ListAds(campaign_id));
    if (review) std::erase_if(ads, [&](const Record& a) { return a.review_status != *review; });
    ADS_RETURN_IF_ERROR(DropByArchived(request, ads));
    return ads;
  }
  // A campaignId filter names one of the caller's campaigns: another community's → 404
  // (issue 39: was 200 with no ads). An unparsable one is List's 400.
  static Status CheckFilters(Ctx& ctx, const http::Request& request) {
    std::optional<std::string_view> filter = QueryParam(request.query, "campaignId");
    std::optional<store::Id> id = filter ? ParseId(*filter) : std::nullopt;
    if (!id) return OkStatus();
    return CheckCampaignFilter(ctx.principal, ctx.store, *id);
  }
  static void Apply(ObjectReader& r, bool creating, const Aux&, Record& rec) {
    detail::ApplyAd(r, creating, rec);
  }
  static Status Validate(const Record& rec) { return ingest::ValidateAd(rec); }
  // An ad belongs to its campaign's community.
  static Status CheckOwner(Ctx& ctx, const Record& rec) {
    if (ctx.principal.IsOperator()) return OkStatus();
    Result<store::CampaignRecord> campaign = ctx.store.GetCampaign(rec.campaign_id);
    if (!campaign.ok() && campaign.status().code() != Code::kNotFound) return campaign.status();
    std::string what = "ad " + std::to_string(rec.id);
    if (!campaign.ok()) return NotFoundError(what + " not found");
    return CheckCommunity(ctx.principal, campaign->community_id, what);
  }
  // Another tenant's campaign reads as unknown.
  static Status CheckReferences(Ctx& ctx, const Record& rec, FieldErrors& errors) {
    Result<store::CampaignRecord> campaign = ctx.store.GetCampaign(rec.campaign_id);
    Status looked_up = campaign.status();
    if (campaign.ok() && !CheckCommunity(ctx.principal, campaign->community_id, "").ok()) {
      looked_up = NotFoundError("campaign");
    }
    return CheckExists(looked_up, errors, "campaignId", "campaign");
  }
  // Creative review (issue 16): only operators set reviewStatus/reviewReason; an advertiser's
  // create or edit of the creative makes the ad pending.
  static Status BeforeWrite(Ctx& ctx, Json& body, Record& rec) {
    return ReadReview(ctx, body, "ads", {"headline", "content", "ctaUrl", "ctaLabel", "images"},
                      rec);
  }
  static Result<Record> Create(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.CreateAd(r, now);
  }
  static Result<Record> Update(store::InventoryStore& s, const Record& r, int64_t now) {
    return s.UpdateAd(r, now);
  }
  static Status Delete(store::InventoryStore& s, store::Id id) { return s.DeleteAd(id); }
  static Json ToJson(const Record& r, const Aux&) { return detail::AdToJson(r); }
};

// Create, read, list, update (PATCH: merge given fields, validate the result) and delete for
// one resource described by traits T.
template <typename T>
struct Crud {
  using Record = typename T::Record;

  // Reads `body` onto `record`, then validates the whole record and its references.
  static Status Decode(Ctx& ctx, const Json& body, bool creating, const typename T::Aux& aux,
                       Record& record) {
    FieldErrors errors;
    ObjectReader reader(body, "", errors);
    T::Apply(reader, creating, aux, record);
    errors.AddAll(T::Validate(record));
    if (errors.empty()) ADS_RETURN_IF_ERROR(T::CheckReferences(ctx, record, errors));
    return errors.ToStatus();
  }

  // Resource-specific preparation of a write (the ads' review fields); most have none.
  static Status BeforeWrite(Ctx& ctx, Json& body, Record& record) {
    if constexpr (requires { T::BeforeWrite(ctx, body, record); }) {
      return T::BeforeWrite(ctx, body, record);
    }
    return OkStatus();
  }

  // The record at the path's {id}, or NotFound when it is another tenant's.
  static Result<Record> FindOwned(Ctx& ctx, const http::Request& request) {
    ADS_ASSIGN_OR_RETURN(Record record, T::Find(ctx.store, request.Param("id")));
    Status owned = T::CheckOwner(ctx, record);
    if (!owned.ok()) {
      if (owned.code() != Code::kNotFound) return owned;
      return NotFoundError(std::string(T::kName) + " " +
                           std::string(request.Param("id").substr(0, 64)) + " not found");
    }
    return record;
  }

  static http::Response Create(Ctx& ctx, const http::Request& request) {
    std::variant<Json, http::Response> body = ReadJsonObject(request);
    if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
    Result<typename T::Aux> aux = T::LoadAux(ctx.store);
    if (!aux.ok()) return Fail(aux.status());
    Record record;
    Status prepared = BeforeWrite(ctx, std::get<Json>(body), record);
    if (!prepared.ok()) return Fail(prepared);
    Status decoded = Decode(ctx, std::get<Json>(body), /*creating=*/true, *aux, record);
    if (!decoded.ok()) return Fail(decoded);
    Result<Record> created = T::Create(ctx.store, record, ctx.clock.NowSeconds());
    if (!created.ok()) return Fail(created.status());
    Refresh(ctx);
    return JsonResponse(201, T::ToJson(*created, *aux));
  }

  static http::Response Get(Ctx& ctx, const http::Request& request) {
    Result<Record> record = FindOwned(ctx, request);
    if (!record.ok()) return Fail(record.status());
    Result<typename T::Aux> aux = T::LoadAux(ctx.store);
    if (!aux.ok()) return Fail(aux.status());
    return JsonResponse(200, T::ToJson(*record, *aux));
  }

  static http::Response List(Ctx& ctx, const http::Request& request) {
    if constexpr (requires { T::CheckFilters(ctx, request); }) {
      if (Status filters = T::CheckFilters(ctx, request); !filters.ok()) return Fail(filters);
    }
    Result<std::vector<Record>> records = T::List(ctx.store, request);
    if (!records.ok()) return Fail(records.status());
    // Lists hold the caller's tenant only.
    std::vector<Record> owned;
    for (Record& r : *records) {
      Status st = T::CheckOwner(ctx, r);
      if (st.ok()) owned.push_back(std::move(r));
      if (!st.ok() && st.code() != Code::kNotFound) return Fail(st);
    }
    records = std::move(owned);
    Result<typename T::Aux> aux = T::LoadAux(ctx.store);
    if (!aux.ok()) return Fail(aux.status());
    Json items = Json::array();
    for (const Record& r : *records) items.push_back(T::ToJson(r, *aux));
    return JsonResponse(200, Json{{std::string(T::kPlural), std::move(items)}});
  }

  static http::Response Patch(Ctx& ctx, const http::Request& request) {
    std::variant<Json, http::Response> body = ReadJsonObject(request);
    if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
    Result<Record> record = FindOwned(ctx, request);
    if (!record.ok()) return Fail(record.status());
    Result<typename T::Aux> aux = T::LoadAux(ctx.store);
    if (!aux.ok()) return Fail(aux.status());
    Status prepared = BeforeWrite(ctx, std::get<Json>(body), *record);
    if (!prepared.ok()) return Fail(prepared);
    Status decoded = Decode(ctx, std::get<Json>(body), /*creating=*/false, *aux, *record);
    if (!decoded.ok()) return Fail(decoded);
    Result<Record> updated = T::Update(ctx.store, *record, ctx.clock.NowSeconds());
    if (!updated.ok()) return Fail(updated.status());
    Refresh(ctx);
    return JsonResponse(200, T::ToJson(*updated, *aux));
  }

  static http::Response Delete(Ctx& ctx, const http::Request& request) {
    Result<Record> record = FindOwned(ctx, request);
    if (!record.ok()) return Fail(record.status());
    Status deleted = T::Delete(ctx.store, record->id);
    if (!deleted.ok()) return Fail(deleted);
    Refresh(ctx);
    http::Response response;
    response.status = 204;
    response.SetHeader("Cache-Control", "no-store");
    return response;
  }
};

// ---- Publisher keys.

http::Response CreateKey(Ctx& ctx, const http::Request& request) {
  std::variant<Json, http::Response> body = ReadJsonObject(request, /*allow_empty=*/true);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  store::ApiKeyRecord key;
  reader.ReadBool("test", key.test);
  reader.RejectUnknown();
  if (!errors.empty()) return Fail(errors.ToStatus());
  Result<store::PublisherRecord> publisher = Crud<PublisherApi>::FindOwned(ctx, request);
  if (!publisher.ok()) return Fail(publisher.status());
  // 34 characters as spec 5.2 requires; only the hash and the prefix are stored.
  std::string secret = "spk_" + RandomAlphanumeric(30);
  key.publisher_id = publisher->id;
  key.hash = Sha256(secret);
  key.prefix = secret.substr(0, 8);
  Result<store::ApiKeyRecord> created = ctx.store.CreateApiKey(key, ctx.clock.NowSeconds());
  if (!created.ok()) return Fail(created.status());
  Refresh(ctx);
  Json out = detail::ApiKeyToJson(*created);
  out["key"] = secret;
  return JsonResponse(201, out);
}

http::Response ListKeys(Ctx& ctx, const http::Request& request) {
  Result<store::PublisherRecord> publisher = Crud<PublisherApi>::FindOwned(ctx, request);
  if (!publisher.ok()) return Fail(publisher.status());
  Result<std::vector<store::ApiKeyRecord>> keys = ctx.store.ListApiKeys(publisher->id);
  if (!keys.ok()) return Fail(keys.status());
  Json items = Json::array();
  for (const store::ApiKeyRecord& k : *keys) items.push_back(detail::ApiKeyToJson(k));
  return JsonResponse(200, Json{{"keys", std::move(items)}});
}

http::Response RevokeKey(Ctx& ctx, const http::Request& request) {
  Result<store::PublisherRecord> publisher = Crud<PublisherApi>::FindOwned(ctx, request);
  if (!publisher.ok()) return Fail(publisher.status());
  std::string_view key_param = request.Param("keyId");
  std::optional<store::Id> key_id = ParseId(key_param);
  Result<store::ApiKeyRecord> revoked =
      key_id ? NameNotFound(ctx.store.RevokeApiKey(publisher->id, *key_id, ctx.clock.NowSeconds()),
                            "key", key_param)
             : Result<store::ApiKeyRecord>(NotFoundError("key not found"));
  if (!revoked.ok()) return Fail(revoked.status());
  // Serving must reject the key as soon as this call returns.
  Refresh(ctx);
  return JsonResponse(200, detail::ApiKeyToJson(*revoked));
}

// ---- Advertiser keys (issue 15): the keys of POST /v1/events, shaped like publisher keys.

// The community at {id} when it is the caller's (publishers read communities but do not hold
// their keys).
Result<store::CommunityRecord> OwnCommunity(Ctx& ctx, const http::Request& request) {
  ADS_ASSIGN_OR_RETURN(store::CommunityRecord community,
                       CommunityApi::Find(ctx.store, request.Param("id")));
  ADS_RETURN_IF_ERROR(
      CheckCommunity(ctx.principal, community.id, "community " + std::to_string(community.id)));
  return community;
}

Json AdvertiserKeyToJson(const store::AdvertiserKeyRecord& k) {
  return Json{{"id", k.id},
              {"communityId", k.community_id},
              {"prefix", k.prefix},
              {"test", k.test},
              {"createdAt", detail::TimeToJson(k.created_at)},
              {"revokedAt", k.revoked_at ? detail::TimeToJson(*k.revoked_at) : Json(nullptr)}};
}

http::Response CreateAdvertiserKey(Ctx& ctx, const http::Request& request) {
  std::variant<Json, http::Response> body = ReadJsonObject(request, /*allow_empty=*/true);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  store::AdvertiserKeyRecord key;
  reader.ReadBool("test", key.test);
  reader.RejectUnknown();
  if (!errors.empty()) return Fail(errors.ToStatus());
  Result<store::CommunityRecord> community = OwnCommunity(ctx, request);
  if (!community.ok()) return Fail(community.status());
  // "sak_" + 30 characters (34, like publisher keys); only the hash and the prefix are stored.
  std::string secret = "sak_" + RandomAlphanumeric(30);
  key.community_id = community->id;
  key.hash = Sha256(secret);
  key.prefix = secret.substr(0, 8);
  Result<store::AdvertiserKeyRecord> created =
      ctx.store.CreateAdvertiserKey(key, ctx.clock.NowSeconds());
  if (!created.ok()) return Fail(created.status());
  Refresh(ctx);
  Json out = AdvertiserKeyToJson(*created);
  out["key"] = secret;
  return JsonResponse(201, out);
}

http::Response ListAdvertiserKeys(Ctx& ctx, const http::Request& request) {
  Result<store::CommunityRecord> community = OwnCommunity(ctx, request);
  if (!community.ok()) return Fail(community.status());
  Result<std::vector<store::AdvertiserKeyRecord>> keys =
      ctx.store.ListAdvertiserKeys(community->id);
  if (!keys.ok()) return Fail(keys.status());
  Json items = Json::array();
  for (const store::AdvertiserKeyRecord& k : *keys) items.push_back(AdvertiserKeyToJson(k));
  return JsonResponse(200, Json{{"keys", std::move(items)}});
}

http::Response RevokeAdvertiserKey(Ctx& ctx, const http::Request& request) {
  Result<store::CommunityRecord> community = OwnCommunity(ctx, request);
  if (!community.ok()) return Fail(community.status());
  std::string_view key_param = request.Param("keyId");
  std::optional<store::Id> key_id = ParseId(key_param);
  Result<store::AdvertiserKeyRecord> revoked =
      key_id ? NameNotFound(
                   ctx.store.RevokeAdvertiserKey(community->id, *key_id, ctx.clock.NowSeconds()),
                   "key", key_param)
             : Result<store::AdvertiserKeyRecord>(NotFoundError("key not found"));
  if (!revoked.ok()) return Fail(revoked.status());
  // The events endpoint must reject the key as soon as this call returns.
  Refresh(ctx);
  return JsonResponse(200, AdvertiserKeyToJson(*revoked));
}

// ---- Project ownership requests (issue 39): a community asks an operator to verify a project
// as its own, so that its campaigns may count the project's transactions as conversions.

Json OwnershipRequestToJson(const store::OwnershipRequestRecord& r,
                            const detail::ProjectNames& names) {
  return Json{{"projectId", r.project_id},
              {"project", names.SlugOf(r.project_id)},
              {"communityId", r.community_id},
              {"note", r.note},
              {"requestedAt", detail::TimeToJson(r.requested_at)}};
}

// The community a request names: an advertiser's own (communityId optional, and only its
// own), an operator's communityId (required).
Result<store::Id> RequestingCommunity(Ctx& ctx, std::optional<int64_t> named) {
  if (ctx.principal.IsOperator()) {
    if (!named) return InvalidFieldError("communityId", "is required for operators");
    Status exists = ctx.store.GetCommunity(*named).status();
    if (exists.code() == Code::kNotFound) {
      return InvalidFieldError("communityId", "unknown community");
    }
    ADS_RETURN_IF_ERROR(exists);
    return *named;
  }
  const std::optional<store::Id> own = ctx.principal.community_id;
  if (!own) return PermissionDeniedError("only advertisers request project ownership");
  if (named && *named != *own) return InvalidFieldError("communityId", "unknown community");
  return *own;
}

http::Response RequestOwnership(Ctx& ctx, const http::Request& request) {
  std::variant<Json, http::Response> body = ReadJsonObject(request, /*allow_empty=*/true);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  std::optional<int64_t> named;
  if (reader.Find("communityId") != nullptr) {
    int64_t id = 0;
    reader.ReadInt("communityId", id);
    named = id;
  }
  store::OwnershipRequestRecord record;
  reader.ReadOptionalString("note", record.note);
  reader.RejectUnknown();
  if (record.note.size() > 1000) errors.Add("note", "must be at most 1000 characters");
  if (!errors.empty()) return Fail(errors.ToStatus());
  Result<store::ProjectRecord> project = ProjectApi::Find(ctx.store, request.Param("id"));
  if (!project.ok()) return Fail(project.status());
  Result<store::Id> community = RequestingCommunity(ctx, named);
  if (!community.ok()) return Fail(community.status());
  if (project->owner_community_id == *community) {
    return Fail(ConflictError("project '" + project->slug + "' is already verified as community " +
                              std::to_string(*community) + "'s own"));
  }
  record.project_id = project->id;
  record.community_id = *community;
  Result<store::OwnershipRequestRecord> stored =
      ctx.store.RequestOwnership(record, ctx.clock.NowSeconds());
  if (!stored.ok()) return Fail(stored.status());
  return JsonResponse(201, OwnershipRequestToJson(*stored, detail::ProjectNames({*project})));
}

// GET /admin/v1/projects: the whole registry, or with any of q, ownerCommunityId, chainId,
// category, source (issue 40), fields, limit and offset a page of matches (issue 38 item 5:
// detail::SearchProjects), with the total and the next page's offset. fields=summary answers
// each project without its contracts (their count instead).
http::Response ListProjects(Ctx& ctx, const http::Request& request) {
  const std::optional<std::string_view> q = QueryParam(request.query, "q");
  const std::optional<std::string_view> owner = QueryParam(request.query, "ownerCommunityId");
  const std::optional<std::string_view> chain = QueryParam(request.query, "chainId");
  const std::optional<std::string_view> category = QueryParam(request.query, "category");
  const std::optional<std::string_view> source = QueryParam(request.query, "source");
  const std::optional<std::string_view> fields = QueryParam(request.query, "fields");
  const std::optional<std::string_view> limit = QueryParam(request.query, "limit");
  const std::optional<std::string_view> offset = QueryParam(request.query, "offset");
  if (!q && !owner && !chain && !category && !source && !fields && !limit && !offset) {
    return Crud<ProjectApi>::List(ctx, request);
  }
  detail::ProjectSearch search;
  FieldErrors errors;
  if (q) {
    search.text = detail::PercentDecode(*q);
    if (search.text.size() > 200) errors.Add("q", "must be at most 200 characters");
  }
  if (category) {
    search.category = detail::PercentDecode(*category);
    if (search.category.size() > 200) errors.Add("category", "must be at most 200 characters");
  }
  if (source) {
    search.source = detail::PercentDecode(*source);
    if (search.source.size() > 200) errors.Add("source", "must be at most 200 characters");
  }
  // A picker needs names, not the contracts (Aave's 4,510 made one page 325 KB).
  const bool summary = fields && *fields == "summary";
  if (fields && !summary && *fields != "all") {
    errors.Add("fields", "must be all or summary");
  }
  if (owner && !(search.owner = ParseId(*owner))) {
    errors.Add("ownerCommunityId", "must be a positive integer");
  }
  if (chain && !(search.chain_id = detail::ParsePositiveInt(*chain))) {
    errors.Add("chainId", "must be a positive integer");
  }
  if (limit) {
    std::optional<int64_t> n = detail::ParsePositiveInt(*limit);
    if (!n || *n > 100) errors.Add("limit", "must be 1 to 100");
    if (n) search.limit = std::min<int64_t>(*n, 100);
  }
  if (offset) {
    std::optional<int64_t> n =
        *offset == "0" ? std::optional<int64_t>(0) : detail::ParsePositiveInt(*offset);
    if (!n || *n > 1'000'000'000) errors.Add("offset", "must be 0 to 1000000000");
    if (n) search.offset = *n;
  }
  if (!errors.empty()) return Fail(errors.ToStatus());
  Result<detail::RegistryCache::Projects> projects = ctx.registry.Get(ctx.store);
  if (!projects.ok()) return Fail(projects.status());
  const detail::ProjectPage page = detail::SearchProjects(**projects, search);
  Json items = Json::array();
  for (const store::ProjectRecord* p : page.items) {
    items.push_back(summary ? detail::ProjectSummaryToJson(*p) : detail::ProjectToJson(*p));
  }
  return JsonResponse(
      200, Json{{"projects", std::move(items)},
                {"total", page.total},
                {"nextOffset", page.next_offset ? Json(*page.next_offset) : Json(nullptr)}});
}

// Operators: every request (?communityId=N narrows); advertisers: their community's.
http::Response ListOwnershipRequests(Ctx& ctx, const http::Request& request) {
  std::optional<store::Id> community = ctx.principal.community_id;
  if (ctx.principal.IsOperator()) {
    community.reset();
    if (std::optional<std::string_view> text = QueryParam(request.query, "communityId")) {
      community = ParseId(*text);
      if (!community) return Fail(InvalidFieldError("communityId", "must be a positive integer"));
    }
  }
  Result<std::vector<store::OwnershipRequestRecord>> requests =
      ctx.store.ListOwnershipRequests(community);
  if (!requests.ok()) return Fail(requests.status());
  Result<std::vector<store::ProjectRecord>> projects = ctx.store.ListProjects();
  if (!projects.ok()) return Fail(projects.status());
  detail::ProjectNames names(*projects);
  Json items = Json::array();
  for (const store::OwnershipRequestRecord& r : *requests) {
    items.push_back(OwnershipRequestToJson(r, names));
  }
  return JsonResponse(200, Json{{"requests", std::move(items)}});
}

// An advertiser withdraws its community's request; an operator declines any.
http::Response DeleteOwnershipRequest(Ctx& ctx, const http::Request& request) {
  Result<store::ProjectRecord> project = ProjectApi::Find(ctx.store, request.Param("id"));
  if (!project.ok()) return Fail(project.status());
  std::optional<store::Id> community = ParseId(request.Param("communityId"));
  Status owned = community ? CheckCommunity(ctx.principal, *community, "ownership request")
                           : NotFoundError("ownership request not found");
  if (!owned.ok()) return Fail(owned);
  Status deleted = ctx.store.DeleteOwnershipRequest(project->id, *community);
  if (!deleted.ok()) return Fail(deleted);
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  return response;
}

// ---- Activity and reload.

// An activity upload: what the body is and how to read it.
struct ActivityUpload {
  std::string_view body;              // as sent (gzip or plain)
  ingest::BulkImportOptions options;  // mapping, chain_id, force, ledger, size bound
  bool mapped = false;                // ?map or ?chain_id given: always the bulk importer
};

// Media types an activity body may have; the content itself decides CSV vs JSON lines and
// gzip (application/json stays 415: its bodies are single JSON documents).
constexpr std::string_view kActivityTypes[] = {"application/x-ndjson",
                                               "application/jsonl",
                                               "application/ndjson",
                                               "application/x-jsonlines",
                                               "text/csv",
                                               "application/csv",
                                               "text/plain",
                                               "application/gzip",
                                               "application/x-gzip",
                                               "application/octet-stream"};

using detail::PercentDecode;

// Reads ?map=ROLE=COL[,COL] (repeatable), ?chain_id=N and ?force=true into `upload`.
Status ReadActivityQuery(std::string_view query, ActivityUpload& upload) {
  std::vector<FieldError> errors;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    if (name == "map") {
      Status st = ingest::AddMapping(value, upload.options.mapping);
      if (!st.ok()) errors.push_back({"map", st.message()});
      upload.mapped = true;
    } else if (name == "chain_id") {
      std::optional<store::Id> chain = ParseId(value);
      if (!chain) errors.push_back({"chain_id", "must be a positive integer"});
      if (chain) upload.options.chain_id = *chain;
      upload.mapped = true;
    } else if (name == "force") {
      if (value != "true" && value != "false" && value != "1" && value != "0") {
        errors.push_back({"force", "must be true or false"});
      }
      upload.options.force = value == "true" || value == "1";
    } else {
      errors.push_back({name.substr(0, 64), "unknown query parameter (map, chain_id, force)"});
    }
  }
  if (errors.empty()) return OkStatus();
  return InvalidArgumentError("invalid activity import parameters", std::move(errors));
}

// Checks the headers and query of POST /admin/v1/activity; the error response otherwise.
std::variant<ActivityUpload, http::Response> ReadActivityUpload(const Ctx& ctx,
                                                                const http::Request& request) {
  std::string_view type = request.Header("Content-Type");
  bool known_type = std::any_of(std::begin(kActivityTypes), std::end(kActivityTypes),
                                [&](std::string_view t) { return HasMediaType(type, t); });
  if (!known_type) {
    return http::ErrorResponse(
        415, "Content-Type must be application/x-ndjson, text/csv or application/gzip");
  }
  std::string_view encoding = request.Header("Content-Encoding");
  bool gzip = HasMediaType(encoding, "gzip") || HasMediaType(encoding, "x-gzip");
  if (!encoding.empty() && !gzip && !HasMediaType(encoding, "identity")) {
    return http::ErrorResponse(415, "Content-Encoding must be gzip or identity");
  }
  if (gzip && !ingest::IsGzipContent(request.body)) {
    return Fail(InvalidFieldError("body", "Content-Encoding is gzip but the body is not gzip"));
  }
  ActivityUpload upload;
  upload.body = request.body;
  Status query = ReadActivityQuery(request.query, upload);
  if (!query.ok()) return Fail(query);
  upload.options.ledger_path = ctx.options.import_ledger_path;
  upload.options.max_input_bytes = ctx.options.max_decompressed_bytes;
  upload.options.transactions = ctx.options.transactions;
  return upload;
}

// Statuses of reading a body: InvalidArgument without a field names the body; a decompressed
// body over the limit is 413 like a raw one.
http::Response BodyFail(const Status& status) {
  if (status.code() != Code::kInvalidArgument) return Fail(status);
  if (status.details().empty()) return Fail(InvalidFieldError("body", status.message()));
  if (status.message().find("exceeds the limit") != std::string::npos) {
    return http::ErrorResponse(413, status.message(), status.details());
  }
  return Fail(status);
}

Json ErrorsJson(const std::vector<ingest::ImportError>& errors) {
  Json out = Json::array();
  for (const ingest::ImportError& e : errors) {
    out.push_back(Json{{"line", e.line}, {"message", e.message}});
  }
  return out;
}

// adserver's own NDJSON keeps its strict per-line rules (unknown slugs and contracts are
// rejected lines, future timestamps too); the ledger makes a re-sent body a no-op. A gzip body
// is inflated twice while it is read (once for the ledger's digest, once to import), never
// held inflated.
http::Response ImportOwnNdjson(Ctx& ctx, const ActivityUpload& upload) {
  auto start = std::chrono::steady_clock::now();
  const bool gzip = ingest::IsGzipContent(upload.body);
  Result<std::string> digest =
      gzip ? ingest::DecompressedDigestHex(upload.body, upload.options.max_input_bytes)
           : Result<std::string>(ingest::ContentDigestHex(upload.body));
  if (!digest.ok()) return BodyFail(digest.status());
  ingest::ImportSummary summary;
  Result<bool> wrote = ingest::WriteOnce(
      upload.options.ledger_path, *digest, "POST /admin/v1/activity", upload.options.force,
      [&]() -> Result<uint64_t> {
        ADS_ASSIGN_OR_RETURN(
            summary, gzip ? ingest::ImportActivityNdjsonBuffer(
                                upload.body, upload.options.max_input_bytes, ctx.store,
                                ctx.activity, ctx.clock, ctx.options.transactions)
                          : ingest::ImportActivityNdjson(upload.body, ctx.store, ctx.activity,
                                                         ctx.clock, ctx.options.transactions));
        return summary.imported + summary.rejected;
      });
  if (!wrote.ok()) return BodyFail(wrote.status());
  if (summary.imported > 0) Refresh(ctx);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t rows = summary.imported + summary.rejected;
  return JsonResponse(200, Json{{"imported", summary.imported},
                                {"rejected", summary.rejected},
                                {"errors", ErrorsJson(summary.errors)},
                                {"shape", "adserver"},
                                {"rows", rows},
                                {"interactions", summary.imported},
                                {"unknownContract", 0},
                                {"failedTransactions", 0},
                                {"alreadyImported", !*wrote},
                                {"seconds", seconds},
                                {"rowsPerSecond", seconds > 0 ? double(rows) / seconds : 0.0}});
}

http::Response ImportBulk(Ctx& ctx, const ActivityUpload& upload) {
  Result<ingest::BulkImportSummary> summary = ingest::BulkImportBuffer(
      upload.body, "POST /admin/v1/activity", ctx.store, ctx.activity, upload.options, ctx.clock);
  if (!summary.ok()) return BodyFail(summary.status());
  const ingest::BulkImportSummary& s = *summary;
  if (s.interactions > 0 && !s.already_imported) Refresh(ctx);
  // `imported` keeps its meaning: interactions written (none if the ledger had the content).
  return JsonResponse(200,
                      Json{{"imported", s.already_imported ? 0 : s.interactions},
                           {"rejected", s.rejected},
                           {"errors", ErrorsJson(s.errors)},
                           {"shape", s.shape},
                           {"rows", s.rows},
                           {"interactions", s.interactions},
                           {"unknownContract", s.unknown_contract},
                           {"failedTransactions", s.skipped_failed},
                           {"transactions", s.transactions},
                           {"transactionsDropped", s.transactions_dropped},
                           {"invalidTxHashes", s.invalid_tx_hashes},
                           {"alreadyImported", s.already_imported},
                           {"seconds", s.seconds},
                           {"rowsPerSecond", s.seconds > 0 ? double(s.rows) / s.seconds : 0.0}});
}

// True if the first non-blank line is a JSON object with a "wallet" key (adserver's NDJSON).
bool IsOwnNdjson(std::string_view content) {
  size_t start = content.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || content[start] != '{') return false;
  std::string_view line = content.substr(start, content.find('\n', start) - start);
  Json first = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  return first.is_object() && first.contains("wallet");
}

// POST /admin/v1/activity: adserver's NDJSON (strict, as before) or any export the bulk CLI
// import reads, plain or gzip, with an optional column mapping. See docs/admin-api.md.
http::Response ImportActivity(Ctx& ctx, const http::Request& request) {
  std::variant<ActivityUpload, http::Response> read = ReadActivityUpload(ctx, request);
  if (auto* error = std::get_if<http::Response>(&read)) return std::move(*error);
  const ActivityUpload& upload = std::get<ActivityUpload>(read);
  if (upload.mapped) return ImportBulk(ctx, upload);
  // Our NDJSON is recognised by its first line; a gzip one is inflated (bounded) first.
  Result<std::string> head = ingest::DecompressedPrefix(upload.body, 64 * 1024);
  if (!head.ok()) return BodyFail(head.status());
  if (!IsOwnNdjson(*head)) return ImportBulk(ctx, upload);
  return ImportOwnNdjson(ctx, upload);
}

// POST /admin/v1/projects/import: one project list (token list, contract map or address book);
// ?entries=named|unnamed takes one pass of a set of lists (ingest::ImportEntries), default all.
http::Response ImportProjects(Ctx& ctx, const http::Request& request) {
  if (!HasMediaType(request.Header("Content-Type"), "application/json")) {
    return http::ErrorResponse(415, "Content-Type must be application/json");
  }
  ingest::ImportEntries entries = ingest::ImportEntries::kAll;
  if (std::optional<std::string_view> pass = QueryParam(request.query, "entries")) {
    if (*pass == "named") {
      entries = ingest::ImportEntries::kNamed;
    } else if (*pass == "unnamed") {
      entries = ingest::ImportEntries::kUnnamed;
    } else if (*pass != "all") {
      return Fail(InvalidFieldError("entries", "must be all, named or unnamed"));
    }
  }
  Result<ingest::RegistryImportSummary> summary =
      ingest::ImportProjectList(request.body, ctx.store, ctx.clock.NowSeconds(), entries);
  if (!summary.ok()) return Fail(summary.status());
  if (summary->added + summary->merged + summary->sources_added > 0) Refresh(ctx);
  Json skipped = Json::object();
  for (const auto& [reason, count] : summary->skipped) skipped[reason] = count;
  return JsonResponse(200, Json{{"format", ingest::ProjectListFormatName(summary->format)},
                                {"entries", summary->entries},
                                {"added", summary->added},
                                {"merged", summary->merged},
                                {"unchanged", summary->unchanged},
                                {"contractsAdded", summary->contracts_added},
                                {"sourcesAdded", summary->sources_added},
                                {"skipped", std::move(skipped)}});
}

http::Response WalletActivity(Ctx& ctx, const http::Request& request) {
  std::optional<Address> wallet = ParseAddress(request.Param("wallet"));
  if (!wallet) {
    return Fail(InvalidFieldError("wallet", "must be 0x followed by 40 hex digits"));
  }
  Result<std::vector<store::ActivityRecord>> rows = ctx.activity.ActivityForWallet(*wallet);
  if (!rows.ok()) return Fail(rows.status());
  Result<ProjectNames> names = CampaignApi::LoadAux(ctx.store);
  if (!names.ok()) return Fail(names.status());
  Json interactions = Json::array();
  for (const store::ActivityRecord& row : *rows) {
    interactions.push_back(Json{{"project", names->SlugOf(row.project_id)},
                                {"chainId", row.chain_id},
                                {"lastSeen", detail::TimeToJson(row.last_seen)},
                                {"count", row.count}});
  }
  return JsonResponse(200, Json{{"wallet", FormatAddress(*wallet)},
                                {"interactions", std::move(interactions)}});
}

http::Response Reload(Ctx& ctx, const http::Request&) {
  Status st = ctx.snapshots.RefreshNow();
  if (!st.ok()) return Fail(st);
  return JsonResponse(200, Json{{"ok", true}});
}

struct RouteSpec {
  http::Method method;
  const char* pattern;
  HandlerFn handler;
  Audience audience;  // who may call it (issue 16); handlers narrow to the caller's tenant
  bool bulk = false;  // a bulk import: bodies up to max_import_body_bytes, else max_body_bytes
};

using http::Method;
template <typename T>
using C = Crud<T>;

constexpr RouteSpec kRoutes[] = {
    {Method::kPost, "/admin/v1/publishers", &C<PublisherApi>::Create, Audience::kOperator},
    {Method::kGet, "/admin/v1/publishers", &C<PublisherApi>::List, Audience::kPublisher},
    {Method::kGet, "/admin/v1/publishers/{id}", &C<PublisherApi>::Get, Audience::kPublisher},
    {Method::kPatch, "/admin/v1/publishers/{id}", &C<PublisherApi>::Patch, Audience::kPublisher},
    {Method::kDelete, "/admin/v1/publishers/{id}", &C<PublisherApi>::Delete, Audience::kOperator},
    {Method::kPost, "/admin/v1/publishers/{id}/keys", &CreateKey, Audience::kPublisher},
    {Method::kGet, "/admin/v1/publishers/{id}/keys", &ListKeys, Audience::kPublisher},
    {Method::kDelete, "/admin/v1/publishers/{id}/keys/{keyId}", &RevokeKey, Audience::kPublisher},
    {Method::kPost, "/admin/v1/communities", &C<CommunityApi>::Create, Audience::kOperator},
    {Method::kGet, "/admin/v1/communities", &C<CommunityApi>::List, Audience::kAnyUser},
    {Method::kGet, "/admin/v1/communities/{id}", &C<CommunityApi>::Get, Audience::kAnyUser},
    {Method::kPatch, "/admin/v1/communities/{id}", &C<CommunityApi>::Patch, Audience::kAdvertiser},
    {Method::kDelete, "/admin/v1/communities/{id}", &C<CommunityApi>::Delete, Audience::kOperator},
    {Method::kPost, "/admin/v1/communities/{id}/keys", &CreateAdvertiserKey, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/communities/{id}/keys", &ListAdvertiserKeys, Audience::kAdvertiser},
    {Method::kDelete, "/admin/v1/communities/{id}/keys/{keyId}", &RevokeAdvertiserKey,
     Audience::kAdvertiser},
    {Method::kPost, "/admin/v1/projects", &C<ProjectApi>::Create, Audience::kOperator},
    {Method::kPost, "/admin/v1/projects/import", &ImportProjects, Audience::kOperator, true},
    {Method::kGet, "/admin/v1/projects", &ListProjects, Audience::kAnyUser},
    {Method::kGet, "/admin/v1/projects/{id}", &C<ProjectApi>::Get, Audience::kAnyUser},
    {Method::kPatch, "/admin/v1/projects/{id}", &C<ProjectApi>::Patch, Audience::kOperator},
    {Method::kDelete, "/admin/v1/projects/{id}", &C<ProjectApi>::Delete, Audience::kOperator},
    {Method::kPost, "/admin/v1/projects/{id}/ownership-requests", &RequestOwnership,
     Audience::kAdvertiser},
    {Method::kDelete, "/admin/v1/projects/{id}/ownership-requests/{communityId}",
     &DeleteOwnershipRequest, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/ownership-requests", &ListOwnershipRequests, Audience::kAdvertiser},
    {Method::kPost, "/admin/v1/campaigns", &C<CampaignApi>::Create, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/campaigns", &C<CampaignApi>::List, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/campaigns/{id}", &C<CampaignApi>::Get, Audience::kAdvertiser},
    {Method::kPatch, "/admin/v1/campaigns/{id}", &C<CampaignApi>::Patch, Audience::kAdvertiser},
    {Method::kDelete, "/admin/v1/campaigns/{id}", &C<CampaignApi>::Delete, Audience::kAdvertiser},
    {Method::kPost, "/admin/v1/ads", &C<AdApi>::Create, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/ads", &C<AdApi>::List, Audience::kAdvertiser},
    {Method::kGet, "/admin/v1/ads/{id}", &C<AdApi>::Get, Audience::kAdvertiser},
    {Method::kPatch, "/admin/v1/ads/{id}", &C<AdApi>::Patch, Audience::kAdvertiser},
    {Method::kDelete, "/admin/v1/ads/{id}", &C<AdApi>::Delete, Audience::kAdvertiser},
    {Method::kPost, "/admin/v1/activity", &ImportActivity, Audience::kOperator, true},
    {Method::kGet, "/admin/v1/activity/{wallet}", &WalletActivity, Audience::kOperator},
    {Method::kPost, "/admin/v1/reload", &Reload, Audience::kOperator},
};

}  // namespace

AdminApi::AdminApi(store::InventoryStore& store, store::ActivityStore& activity,
                   ingest::SnapshotPublisher& snapshots, const Clock& clock, AdminOptions options,
                   const Authenticator& auth)
    : store_(store),
      activity_(activity),
      snapshots_(snapshots),
      clock_(clock),
      options_(std::move(options)),
      auth_(auth),
      registry_(std::make_shared<detail::RegistryCache>()) {}

void AdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions options = detail::GuardedRoute(auth_, options_.max_body_bytes);
  http::RouteOptions bulk = detail::GuardedRoute(auth_, options_.max_import_body_bytes);
  // A bulk body past what any other admin route may send is written to a file as it arrives
  // (http::ServerOptions::spool_dir) and read from there: uploads do not hold the heap.
  bulk.spool_after_bytes = options_.max_body_bytes;
  for (const RouteSpec& route : kRoutes) {
    HandlerFn handler = route.handler;
    router.Add(
        route.method, route.pattern,
        [this, handler, audience = route.audience](const http::Request& request) {
          return detail::Guarded(auth_, audience, request, [&](const Principal& principal) {
            Ctx ctx{store_, activity_, snapshots_, clock_, options_, principal, *registry_};
            return handler(ctx, request);
          });
        },
        route.bulk ? bulk : options);
  }
}

}  // namespace adserver::admin
