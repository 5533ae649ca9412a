#include "store/sql/sql_inventory.h"

#include <charconv>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/json_writer.h"
#include "store/sql/detail/advertiser_keys.h"
#include "store/sql/detail/controls.h"
#include "store/sql/detail/row_helpers.h"
#include "store/sql/detail/transact.h"

namespace adserver::store::sql {
namespace {

using sql_rows::Exists;
using sql_rows::ForEachRow;
using sql_rows::MissingReference;

Status Corrupt(std::string_view what, Id id) {
  return InternalError("corrupt " + std::string(what) + " in row " + std::to_string(id));
}

Status Missing(std::string_view kind, Id id) {
  return NotFoundError(std::string(kind) + " " + std::to_string(id) + " not found");
}

// The single record of a Load*(..., id) result, or NotFound.
template <typename R>
Result<R> Single(Result<std::vector<R>> rows, std::string_view kind, Id id) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Missing(kind, id);
  return std::move(rows->front());
}

// The id an `INSERT ... RETURNING id` statement created.
Result<Id> InsertedId(Statement& s) {
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return InternalError("INSERT ... RETURNING id returned no row");
  return s.Int(0);
}

// `base`, plus `filter` when `id` is set, plus `order`. Parameter ?1 is the id.
std::string Sql(std::string_view base, std::optional<Id> id, std::string_view filter,
                std::string_view order) {
  std::string sql(base);
  if (id.has_value()) sql.append(" ").append(filter);
  sql.append(" ").append(order);
  return sql;
}

Result<Statement> Query(Connection& c, const std::string& sql, std::optional<Id> id) {
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(sql));
  if (id.has_value()) s.Bind(1, *id);
  return s;
}

// Runs `sql` (parameter ?1 = parent id filter) and hands each row to `add` together with the
// record its column 0 points at.
template <typename R, typename F>
Status LoadChildren(Connection& c, const std::string& sql, std::optional<Id> id,
                    std::vector<R>& parents, F&& add) {
  std::unordered_map<Id, R*> by_id;
  for (R& r : parents) by_id[r.id] = &r;
  ADS_ASSIGN_OR_RETURN(Statement s, Query(c, sql, id));
  return ForEachRow(s, [&]() -> Status {
    auto it = by_id.find(s.Int(0));
    return it == by_id.end() ? OkStatus() : add(*it->second, s);
  });
}

// Runs a single-row DELETE/UPDATE; NotFound when it matched nothing.
Status RunOnRow(Connection& c, Statement& s, std::string_view kind, Id id) {
  ADS_RETURN_IF_ERROR(s.Run());
  return c.Changes() == 0 ? Missing(kind, id) : OkStatus();
}

// ---- Encodings of list columns.

std::string EncodeOrigins(const std::vector<std::string>& origins) {
  std::string json = "[";
  for (size_t i = 0; i < origins.size(); ++i) {
    if (i > 0) json += ',';
    AppendJsonString(json, origins[i]);
  }
  return json + "]";
}

std::string EncodeChains(const std::vector<int64_t>& chains) {
  std::string text;
  for (size_t i = 0; i < chains.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(chains[i]);
  }
  return text;
}

std::optional<std::vector<int64_t>> DecodeChains(std::string_view text) {
  std::vector<int64_t> chains;
  while (!text.empty()) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) return std::nullopt;
    chains.push_back(v);
    text.remove_prefix(end - text.data());
    if (text.empty()) break;
    if (text.front() != ',') return std::nullopt;
    text.remove_prefix(1);
  }
  return chains;
}

// ---- Publishers.

std::string_view PayoutModelName(PayoutRule::Model model) {
  return model == PayoutRule::Model::kCpm ? "cpm" : "revshare";
}

Result<std::vector<PublisherRecord>> LoadPublishers(Connection& c, std::optional<Id> id) {
  std::vector<PublisherRecord> out;
  {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         Query(c,
                               Sql("SELECT id, name, created_at, updated_at, payout_model, "
                                   "payout_percent, payout_cpm_micros FROM publishers",
                                   id, "WHERE id = ?1", "ORDER BY id"),
                               id));
    ADS_RETURN_IF_ERROR(ForEachRow(s, [&] {
      PublisherRecord& p = out.emplace_back();
      p.id = s.Int(0);
      p.name = s.Text(1);
      p.created_at = s.Int(2);
      p.updated_at = s.Int(3);
      p.payout.model = s.Text(4) == "cpm" ? PayoutRule::Model::kCpm : PayoutRule::Model::kRevshare;
      p.payout.percent = s.Double(5);
      p.payout.cpm_micros = s.Int(6);
      return OkStatus();
    }));
  }
  ADS_RETURN_IF_ERROR(LoadChildren(
      c,
      Sql(c.dialect() == Dialect::kSqlite
              ? "SELECT p.id, j.value FROM publishers p, json_each(p.allowed_origins) j"
              : "SELECT p.id, j.value FROM publishers p, "
                "json_array_elements_text(p.allowed_origins::json) "
                "WITH ORDINALITY AS j(value, key)",
          id, "WHERE p.id = ?1", "ORDER BY p.id, j.key"),
      id, out, [](PublisherRecord& p, Statement& s) {
        p.allowed_origins.push_back(s.Text(1));
        return OkStatus();
      }));
  ADS_RETURN_IF_ERROR(
      LoadChildren(c,
                   Sql("SELECT publisher_id, community_id FROM publisher_blocked_communities", id,
                       "WHERE publisher_id = ?1", "ORDER BY publisher_id, position"),
                   id, out, [](PublisherRecord& p, Statement& s) {
                     p.blocked_communities.push_back(s.Int(1));
                     return OkStatus();
                   }));
  ADS_RETURN_IF_ERROR(LoadPublisherControls(c, out));
  return out;
}

Status WriteBlockedCommunities(Connection& c, Id publisher_id, const std::vector<Id>& blocked) {
  {
    ADS_ASSIGN_OR_RETURN(
        Statement del,
        c.Prepare("DELETE FROM publisher_blocked_communities WHERE publisher_id = ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, publisher_id).Run());
  }
  ADS_ASSIGN_OR_RETURN(Statement ins,
                       c.Prepare("INSERT INTO publisher_blocked_communities "
                                 "(publisher_id, community_id, position) VALUES (?1, ?2, ?3) "
                                 "ON CONFLICT DO NOTHING"));
  for (size_t i = 0; i < blocked.size(); ++i) {
    ins.Reset();
    Status s = ins.Bind(1, publisher_id).Bind(2, blocked[i]).Bind(3, int64_t(i)).Run();
    if (!s.ok()) return MissingReference(c, s, "communities", "community", blocked[i]);
  }
  return OkStatus();
}

// ---- API keys.

Result<std::vector<ApiKeyRecord>> LoadApiKeys(Connection& c, std::string_view filter,
                                              std::optional<Id> id) {
  std::vector<ApiKeyRecord> out;
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      Query(c,
            Sql("SELECT id, publisher_id, key_hash, prefix, test, created_at, revoked_at "
                "FROM api_keys",
                id, filter, "ORDER BY id"),
            id));
  ADS_RETURN_IF_ERROR(ForEachRow(s, [&] {
    ApiKeyRecord& k = out.emplace_back();
    k.id = s.Int(0);
    k.publisher_id = s.Int(1);
    if (!s.Blob(2, k.hash.data(), k.hash.size())) return Corrupt("api_keys.key_hash", k.id);
    k.prefix = s.Text(3);
    k.test = s.Int(4) != 0;
    k.created_at = s.Int(5);
    k.revoked_at = s.OptInt(6);
    return OkStatus();
  }));
  return out;
}

// Names the cause of a Conflict from inserting an api key: missing publisher or duplicate hash.
Status ApiKeyConflict(Connection& c, Status s, Id publisher_id) {
  if (s.code() != Code::kConflict) return s;
  ADS_ASSIGN_OR_RETURN(bool publisher_exists, Exists(c, "publishers", publisher_id));
  if (!publisher_exists) {
    return ConflictError("publisher " + std::to_string(publisher_id) + " does not exist");
  }
  return ConflictError("an api key with the same hash already exists");
}

// ---- Communities.

Result<std::vector<CommunityRecord>> LoadCommunities(Connection& c, std::optional<Id> id) {
  std::vector<CommunityRecord> out;
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      Query(c,
            Sql("SELECT id, name, logo_url, created_at, updated_at, review_status, review_reason, "
                "approved_name, approved_logo_url FROM communities",
                id, "WHERE id = ?1", "ORDER BY id"),
            id));
  ADS_RETURN_IF_ERROR(ForEachRow(s, [&]() -> Status {
    CommunityRecord& r = out.emplace_back();
    r.id = s.Int(0);
    r.name = s.Text(1);
    r.logo_url = s.Text(2);
    r.created_at = s.Int(3);
    r.updated_at = s.Int(4);
    std::optional<ReviewStatus> review = ParseReviewStatus(s.Text(5));
    if (!review) return Corrupt("communities.review_status", r.id);
    r.review_status = *review;
    r.review_reason = s.Text(6);
    // The approved brand (issue 39): NULL when none was ever approved.
    if (!s.IsNull(7)) r.approved = CommunityBrand{.name = s.Text(7), .logo_url = s.Text(8)};
    return OkStatus();
  }));
  return out;
}

// Binds ?2.. with every mutable community column (?1 is the id for UPDATE).
void BindCommunity(Statement& s, const CommunityRecord& r, int64_t now) {
  s.Bind(2, r.name).Bind(3, r.logo_url).Bind(4, now);
  s.Bind(5, ReviewStatusName(r.review_status)).Bind(6, r.review_reason);
  if (r.approved) {
    s.Bind(7, r.approved->name).Bind(8, r.approved->logo_url);
  } else {
    s.BindNull(7).BindNull(8);
  }
}

// ---- Projects.

// projects.sources holds one "package@version" per line.
std::vector<std::string> SplitSources(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end != 0) out.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::string JoinSources(const std::vector<std::string>& sources) {
  std::string out;
  for (const std::string& s : sources) {
    if (!out.empty()) out.push_back('\n');
    out += s;
  }
  return out;
}

Result<std::vector<ProjectRecord>> LoadProjects(Connection& c, std::optional<Id> id) {
  std::vector<ProjectRecord> out;
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s, Query(c,
                           Sql("SELECT id, slug, name, logo_url, category, created_at, updated_at, "
                               "owner_community_id, symbol, sources FROM projects",
                               id, "WHERE id = ?1", "ORDER BY id"),
                           id));
    ADS_RETURN_IF_ERROR(ForEachRow(s, [&] {
      ProjectRecord& p = out.emplace_back();
      p.id = s.Int(0);
      p.slug = s.Text(1);
      p.name = s.Text(2);
      p.logo_url = s.Text(3);
      p.category = s.Text(4);
      p.created_at = s.Int(5);
      p.updated_at = s.Int(6);
      p.owner_community_id = s.OptInt(7);
      p.symbol = s.Text(8);
      p.sources = SplitSources(s.Text(9));
      return OkStatus();
    }));
  }
  ADS_RETURN_IF_ERROR(
      LoadChildren(c,
                   Sql("SELECT project_id, chain_id, address FROM project_contracts", id,
                       "WHERE project_id = ?1", "ORDER BY project_id, position"),
                   id, out, [](ProjectRecord& p, Statement& s) {
                     ContractRef& ref = p.contracts.emplace_back();
                     ref.chain_id = s.Int(1);
                     if (!s.Blob(2, ref.address.bytes.data(), ref.address.bytes.size())) {
                       return Corrupt("project_contracts.address", p.id);
                     }
                     return OkStatus();
                   }));
  return out;
}

// A write of `p` that failed on a foreign key because its owner community does not exist:
// that error; OK otherwise (the caller goes on to its other explanations of `st`).
Status OwnerReference(Connection& c, const Status& st, const ProjectRecord& p) {
  if (st.code() != Code::kConflict || !p.owner_community_id) return OkStatus();
  ADS_ASSIGN_OR_RETURN(bool exists, Exists(c, "communities", *p.owner_community_id));
  if (exists) return OkStatus();
  return ConflictError("community " + std::to_string(*p.owner_community_id) + " does not exist");
}

// Conflict for a contract that already has a row: names the project that owns it.
Status ContractConflict(Connection& c, Id project_id, const ContractRef& ref) {
  std::string name = std::to_string(ref.chain_id) + ":" + FormatAddress(ref.address);
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT p.id, p.slug FROM project_contracts pc "
                                              "JOIN projects p ON p.id = pc.project_id "
                                              "WHERE pc.chain_id = ?1 AND pc.address = ?2"));
  s.Bind(1, ref.chain_id).BindBlob(2, ref.address.bytes.data(), ref.address.bytes.size());
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return ConflictError("contract " + name + " already exists");
  if (s.Int(0) == project_id) return ConflictError("contract " + name + " is listed twice");
  return ConflictError("contract " + name + " already belongs to project '" + s.Text(1) + "'");
}

Status WriteContracts(Connection& c, Id project_id, const std::vector<ContractRef>& contracts) {
  {
    ADS_ASSIGN_OR_RETURN(Statement del,
                         c.Prepare("DELETE FROM project_contracts WHERE project_id = ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, project_id).Run());
  }
  ADS_ASSIGN_OR_RETURN(Statement ins, c.Prepare("INSERT INTO project_contracts "
                                                "(project_id, chain_id, address, position) "
                                                "VALUES (?1, ?2, ?3, ?4)"));
  for (size_t i = 0; i < contracts.size(); ++i) {
    const ContractRef& ref = contracts[i];
    ins.Reset();
    Status s = ins.Bind(1, project_id)
                   .Bind(2, ref.chain_id)
                   .BindBlob(3, ref.address.bytes.data(), ref.address.bytes.size())
                   .Bind(4, int64_t(i))
                   .Run();
    if (s.code() == Code::kConflict) return ContractConflict(c, project_id, ref);
    ADS_RETURN_IF_ERROR(s);
  }
  return OkStatus();
}

Status SlugConflict(Status s, const std::string& slug) {
  if (s.code() != Code::kConflict) return s;
  return ConflictError("project slug '" + slug + "' already exists");
}

// ---- Campaigns.

Result<std::vector<CampaignRecord>> LoadCampaignRows(Connection& c, std::optional<Id> id) {
  std::vector<CampaignRecord> out;
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      Query(c,
            Sql("SELECT id, community_id, name, status, starts_at, ends_at, pricing_model, "
                "bid_micros, total_budget_micros, daily_budget_micros, chains, recency_days, "
                "frequency_cap_count, frequency_cap_hours, created_at, updated_at, archived_at "
                "FROM campaigns",
                id, "WHERE id = ?1", "ORDER BY id"),
            id));
  ADS_RETURN_IF_ERROR(ForEachRow(s, [&]() -> Status {
    CampaignRecord& r = out.emplace_back();
    r.id = s.Int(0);
    r.community_id = s.Int(1);
    r.name = s.Text(2);
    std::optional<CampaignStatus> status = ParseCampaignStatus(s.Text(3));
    std::optional<PricingModel> pricing = ParsePricingModel(s.Text(6));
    std::optional<std::vector<int64_t>> chains = DecodeChains(s.Text(10));
    if (!status || !pricing || !chains) return Corrupt("campaigns", r.id);
    r.status = *status;
    r.starts_at = s.OptInt(4);
    r.ends_at = s.OptInt(5);
    r.pricing_model = *pricing;
    r.bid_micros = s.Int(7);
    r.total_budget_micros = s.OptInt(8);
    r.daily_budget_micros = s.OptInt(9);
    r.chains = std::move(*chains);
    if (!s.IsNull(11)) r.recency_days = static_cast<int32_t>(s.Int(11));
    if (!s.IsNull(12)) {
      r.frequency_cap = FrequencyCap{.count = static_cast<int32_t>(s.Int(12)),
                                     .hours = static_cast<int32_t>(s.Int(13))};
    }
    r.created_at = s.Int(14);
    r.updated_at = s.Int(15);
    r.archived_at = s.OptInt(16);
    r.archived = r.archived_at.has_value();
    return OkStatus();
  }));
  return out;
}

Result<std::vector<CampaignRecord>> LoadCampaigns(Connection& c, std::optional<Id> id) {
  ADS_ASSIGN_OR_RETURN(std::vector<CampaignRecord> out, LoadCampaignRows(c, id));
  ADS_RETURN_IF_ERROR(
      LoadChildren(c,
                   Sql("SELECT campaign_id, project_id, kind FROM campaign_projects", id,
                       "WHERE campaign_id = ?1", "ORDER BY campaign_id, kind, position"),
                   id, out, [](CampaignRecord& r, Statement& s) {
                     std::string kind = s.Text(2);
                     if (kind == "target") {
                       r.target_projects.push_back(s.Int(1));
                     } else if (kind == "exclude") {
                       r.exclude_projects.push_back(s.Int(1));
                     } else {
                       return Corrupt("campaign_projects.kind", r.id);
                     }
                     return OkStatus();
                   }));
  ADS_RETURN_IF_ERROR(LoadCampaignControls(c, out));
  return out;
}

// When a campaign or ad written now was archived: kept once set, the write's time when it is
// archived by this write, NULL when it is not archived.
template <typename Record>
std::optional<int64_t> ArchivedAt(const Record& r, int64_t now) {
  if (!r.archived) return std::nullopt;
  return r.archived_at.value_or(now);
}

// Binds ?2.. with every mutable campaign column (?1 is the id for UPDATE, unused by INSERT).
void BindCampaign(Statement& s, const CampaignRecord& r, int64_t now) {
  s.Bind(2, r.community_id)
      .Bind(3, r.name)
      .Bind(4, CampaignStatusName(r.status))
      .Bind(5, r.starts_at)
      .Bind(6, r.ends_at)
      .Bind(7, PricingModelName(r.pricing_model))
      .Bind(8, r.bid_micros)
      .Bind(9, r.total_budget_micros)
      .Bind(10, r.daily_budget_micros)
      .Bind(11, EncodeChains(r.chains))
      .Bind(12, r.recency_days);
  if (r.frequency_cap.has_value()) {
    s.Bind(13, int64_t{r.frequency_cap->count}).Bind(14, int64_t{r.frequency_cap->hours});
  } else {
    s.BindNull(13).BindNull(14);
  }
  s.Bind(15, now).Bind(16, ArchivedAt(r, now));
}

Status InsertCampaignProjects(Connection& c, Statement& ins, Id campaign_id,
                              const std::vector<Id>& projects, std::string_view kind) {
  for (size_t i = 0; i < projects.size(); ++i) {
    ins.Reset();
    Status s =
        ins.Bind(1, campaign_id).Bind(2, projects[i]).Bind(3, kind).Bind(4, int64_t(i)).Run();
    if (!s.ok()) return MissingReference(c, s, "projects", "project", projects[i]);
  }
  return OkStatus();
}

Status WriteCampaignProjects(Connection& c, const CampaignRecord& r) {
  {
    ADS_ASSIGN_OR_RETURN(Statement del,
                         c.Prepare("DELETE FROM campaign_projects WHERE campaign_id = ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, r.id).Run());
  }
  ADS_ASSIGN_OR_RETURN(Statement ins, c.Prepare("INSERT INTO campaign_projects "
                                                "(campaign_id, project_id, kind, position) "
                                                "VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING"));
  ADS_RETURN_IF_ERROR(InsertCampaignProjects(c, ins, r.id, r.target_projects, "target"));
  return InsertCampaignProjects(c, ins, r.id, r.exclude_projects, "exclude");
}

// ---- Ads.

constexpr const char* kAdColumns =
    "SELECT id, campaign_id, headline, content, cta_url, cta_label, image_landscape, "
    "image_long_banner, image_short_banner, weight, status, created_at, updated_at, review_status, "
    "review_reason, approved_headline, approved_content, approved_cta_url, approved_cta_label, "
    "approved_image_landscape, approved_image_long_banner, approved_image_short_banner, "
    "archived_at FROM ads";

Result<std::vector<AdRecord>> LoadAds(Connection& c, std::string_view filter,
                                      std::optional<Id> id) {
  std::vector<AdRecord> out;
  ADS_ASSIGN_OR_RETURN(Statement s, Query(c, Sql(kAdColumns, id, filter, "ORDER BY id"), id));
  ADS_RETURN_IF_ERROR(ForEachRow(s, [&]() -> Status {
    AdRecord& a = out.emplace_back();
    a.id = s.Int(0);
    a.campaign_id = s.Int(1);
    a.headline = s.Text(2);
    a.content = s.Text(3);
    a.cta_url = s.Text(4);
    a.cta_label = s.Text(5);
    for (int f = 0; f < kImageFormatsWithImage; ++f) a.images[f] = s.Text(6 + f);
    a.weight = static_cast<int32_t>(s.Int(9));
    std::optional<AdStatus> status = ParseAdStatus(s.Text(10));
    if (!status) return Corrupt("ads.status", a.id);
    a.status = *status;
    a.created_at = s.Int(11);
    a.updated_at = s.Int(12);
    std::optional<ReviewStatus> review = ParseReviewStatus(s.Text(13));
    if (!review) return Corrupt("ads.review_status", a.id);
    a.review_status = *review;
    a.review_reason = s.Text(14);
    // The approved creative (issue 39): NULL columns when no version was ever approved.
    if (!s.IsNull(17)) {
      AdCreative& approved = a.approved.emplace();
      approved.headline = s.Text(15);
      approved.content = s.Text(16);
      approved.cta_url = s.Text(17);
      approved.cta_label = s.Text(18);
      for (int f = 0; f < kImageFormatsWithImage; ++f) approved.images[f] = s.Text(19 + f);
    }
    a.archived_at = s.OptInt(22);
    a.archived = a.archived_at.has_value();
    return OkStatus();
  }));
  ADS_RETURN_IF_ERROR(LoadAdControls(c, out));
  return out;
}

// Binds ?2.. with every mutable ad column (?1 is the id for UPDATE, unused by INSERT).
void BindAd(Statement& s, const AdRecord& a, int64_t now) {
  s.Bind(2, a.campaign_id)
      .Bind(3, a.headline)
      .Bind(4, a.content)
      .Bind(5, a.cta_url)
      .Bind(6, a.cta_label);
  for (int f = 0; f < kImageFormatsWithImage; ++f) s.Bind(7 + f, a.images[f]);
  s.Bind(10, int64_t{a.weight}).Bind(11, AdStatusName(a.status)).Bind(12, now);
  s.Bind(13, ReviewStatusName(a.review_status)).Bind(14, a.review_reason);
  s.Bind(22, ArchivedAt(a, now));
  if (!a.approved) {
    for (int i = 15; i <= 21; ++i) s.BindNull(i);
    return;
  }
  s.Bind(15, a.approved->headline)
      .Bind(16, a.approved->content)
      .Bind(17, a.approved->cta_url)
      .Bind(18, a.approved->cta_label);
  for (int f = 0; f < kImageFormatsWithImage; ++f) s.Bind(19 + f, a.approved->images[f]);
}

}  // namespace

SqlInventory::SqlInventory(Runner& runner) : runner_(runner) {}

// ---- Publishers and keys.

Result<PublisherRecord> SqlInventory::CreatePublisher(const PublisherRecord& p, int64_t now) {
  return TransactWrite<
      PublisherRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<PublisherRecord> {
    Id id = 0;
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("INSERT INTO publishers (name, allowed_origins, created_at, "
                    "updated_at, payout_model, payout_percent, "
                    "payout_cpm_micros) VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6) RETURNING id"));
      s.Bind(1, p.name)
          .Bind(2, EncodeOrigins(p.allowed_origins))
          .Bind(3, now)
          .Bind(4, PayoutModelName(p.payout.model))
          .BindDouble(5, p.payout.percent)
          .Bind(6, p.payout.cpm_micros);
      ADS_ASSIGN_OR_RETURN(id, InsertedId(s));
    }
    ADS_RETURN_IF_ERROR(WriteBlockedCommunities(c, id, p.blocked_communities));
    ADS_RETURN_IF_ERROR(WritePublisherControls(c, id, p));
    return Single(LoadPublishers(c, id), "publisher", id);
  });
}

Result<PublisherRecord> SqlInventory::GetPublisher(Id id) {
  return TransactRead<PublisherRecord>(runner_, [&](Connection& c) -> Result<PublisherRecord> {
    return Single(LoadPublishers(c, id), "publisher", id);
  });
}

Result<std::vector<PublisherRecord>> SqlInventory::ListPublishers() {
  return TransactRead<std::vector<PublisherRecord>>(
      runner_, [&](Connection& c) { return LoadPublishers(c, std::nullopt); });
}

Result<PublisherRecord> SqlInventory::UpdatePublisher(const PublisherRecord& p, int64_t now) {
  return TransactWrite<
      PublisherRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<PublisherRecord> {
    {
      ADS_ASSIGN_OR_RETURN(Statement s,
                           c.Prepare("UPDATE publishers SET name = ?2, allowed_origins = ?3, "
                                     "updated_at = ?4, payout_model = ?5, payout_percent = ?6, "
                                     "payout_cpm_micros = ?7 WHERE id = ?1"));
      s.Bind(1, p.id).Bind(2, p.name).Bind(3, EncodeOrigins(p.allowed_origins)).Bind(4, now);
      s.Bind(5, PayoutModelName(p.payout.model))
          .BindDouble(6, p.payout.percent)
          .Bind(7, p.payout.cpm_micros);
      ADS_RETURN_IF_ERROR(RunOnRow(c, s, "publisher", p.id));
    }
    ADS_RETURN_IF_ERROR(WriteBlockedCommunities(c, p.id, p.blocked_communities));
    ADS_RETURN_IF_ERROR(WritePublisherControls(c, p.id, p));
    return Single(LoadPublishers(c, p.id), "publisher", p.id);
  });
}

Status SqlInventory::DeletePublisher(Id id) {
  return runner_.Write(Runner::kCatalog, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM publishers WHERE id = ?1"));
    s.Bind(1, id);
    return RunOnRow(c, s, "publisher", id);
  });
}

Result<ApiKeyRecord> SqlInventory::CreateApiKey(const ApiKeyRecord& k, int64_t now) {
  return TransactWrite<
      ApiKeyRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<ApiKeyRecord> {
    Id id = 0;
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("INSERT INTO api_keys (publisher_id, key_hash, prefix, test, "
                    "created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id"));
      s.Bind(1, k.publisher_id)
          .BindBlob(2, k.hash.data(), k.hash.size())
          .Bind(3, k.prefix)
          .Bind(4, int64_t{k.test})
          .Bind(5, now)
          .Bind(6, k.revoked_at);
      Result<Id> inserted = InsertedId(s);
      ADS_RETURN_IF_ERROR(ApiKeyConflict(c, inserted.status(), k.publisher_id));
      id = *inserted;
    }
    return Single(LoadApiKeys(c, "WHERE id = ?1", id), "api key", id);
  });
}

Result<std::vector<ApiKeyRecord>> SqlInventory::ListApiKeys(Id publisher_id) {
  return TransactRead<std::vector<ApiKeyRecord>>(runner_, [&](Connection& c) {
    return LoadApiKeys(c, "WHERE publisher_id = ?1", publisher_id);
  });
}

Result<ApiKeyRecord> SqlInventory::RevokeApiKey(Id publisher_id, Id key_id, int64_t now) {
  return TransactWrite<ApiKeyRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<ApiKeyRecord> {
        {
          ADS_ASSIGN_OR_RETURN(
              Statement s, c.Prepare("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?3) "
                                     "WHERE id = ?1 AND publisher_id = ?2"));
          ADS_RETURN_IF_ERROR(s.Bind(1, key_id).Bind(2, publisher_id).Bind(3, now).Run());
          if (c.Changes() == 0) {
            return NotFoundError("api key " + std::to_string(key_id) + " of publisher " +
                                 std::to_string(publisher_id) + " not found");
          }
        }
        return Single(LoadApiKeys(c, "WHERE id = ?1", key_id), "api key", key_id);
      });
}

// ---- Advertiser keys (issue 15; SQL in advertiser_keys.cc).

Result<AdvertiserKeyRecord> SqlInventory::CreateAdvertiserKey(const AdvertiserKeyRecord& k,
                                                              int64_t now) {
  return TransactWrite<AdvertiserKeyRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<AdvertiserKeyRecord> {
        ADS_ASSIGN_OR_RETURN(Id id, InsertAdvertiserKey(c, k, now));
        return Single(LoadAdvertiserKeys(c, std::nullopt, id), "advertiser key", id);
      });
}

Result<std::vector<AdvertiserKeyRecord>> SqlInventory::ListAdvertiserKeys(Id community_id) {
  return TransactRead<std::vector<AdvertiserKeyRecord>>(
      runner_, [&](Connection& c) { return LoadAdvertiserKeys(c, community_id, std::nullopt); });
}

Result<AdvertiserKeyRecord> SqlInventory::RevokeAdvertiserKey(Id community_id, Id key_id,
                                                              int64_t now) {
  return TransactWrite<AdvertiserKeyRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<AdvertiserKeyRecord> {
        ADS_RETURN_IF_ERROR(sql::RevokeAdvertiserKey(c, community_id, key_id, now));
        return Single(LoadAdvertiserKeys(c, std::nullopt, key_id), "advertiser key", key_id);
      });
}

// ---- Communities.

Result<CommunityRecord> SqlInventory::CreateCommunity(const CommunityRecord& r, int64_t now) {
  return TransactWrite<CommunityRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<CommunityRecord> {
        Id id = 0;
        {
          CommunityRecord stored = r;
          SettleApproval(stored);
          ADS_ASSIGN_OR_RETURN(
              Statement s,
              c.Prepare("INSERT INTO communities (name, logo_url, created_at, updated_at, "
                        "review_status, review_reason, approved_name, approved_logo_url) "
                        "VALUES (?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8) RETURNING id"));
          BindCommunity(s, stored, now);
          ADS_ASSIGN_OR_RETURN(id, InsertedId(s));
        }
        return Single(LoadCommunities(c, id), "community", id);
      });
}

Result<CommunityRecord> SqlInventory::GetCommunity(Id id) {
  return TransactRead<CommunityRecord>(runner_, [&](Connection& c) -> Result<CommunityRecord> {
    return Single(LoadCommunities(c, id), "community", id);
  });
}

Result<std::vector<CommunityRecord>> SqlInventory::ListCommunities() {
  return TransactRead<std::vector<CommunityRecord>>(
      runner_, [&](Connection& c) { return LoadCommunities(c, std::nullopt); });
}

Result<CommunityRecord> SqlInventory::UpdateCommunity(const CommunityRecord& r, int64_t now) {
  return TransactWrite<CommunityRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<CommunityRecord> {
        {
          CommunityRecord stored = r;
          SettleApproval(stored);
          ADS_ASSIGN_OR_RETURN(
              Statement s,
              c.Prepare("UPDATE communities SET name = ?2, logo_url = ?3, updated_at = ?4, "
                        "review_status = ?5, review_reason = ?6, approved_name = ?7, "
                        "approved_logo_url = ?8 WHERE id = ?1"));
          s.Bind(1, r.id);
          BindCommunity(s, stored, now);
          ADS_RETURN_IF_ERROR(RunOnRow(c, s, "community", r.id));
        }
        return Single(LoadCommunities(c, r.id), "community", r.id);
      });
}

Status SqlInventory::DeleteCommunity(Id id) {
  return runner_.Write(Runner::kCatalog, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM communities WHERE id = ?1"));
    s.Bind(1, id);
    Status st = RunOnRow(c, s, "community", id);
    if (st.code() == Code::kConflict) {
      return ConflictError("community " + std::to_string(id) + " is used by campaigns");
    }
    return st;
  });
}

// ---- Projects.

Result<ProjectRecord> SqlInventory::CreateProject(const ProjectRecord& p, int64_t now) {
  return TransactWrite<ProjectRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<ProjectRecord> {
        Id id = 0;
        {
          ADS_ASSIGN_OR_RETURN(Statement s,
                               c.Prepare("INSERT INTO projects (slug, name, logo_url, category, "
                                         "created_at, updated_at, owner_community_id, symbol, "
                                         "sources) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8) "
                                         "RETURNING id"));
          s.Bind(1, p.slug).Bind(2, p.name).Bind(3, p.logo_url).Bind(4, p.category).Bind(5, now);
          s.Bind(6, p.owner_community_id).Bind(7, p.symbol).Bind(8, JoinSources(p.sources));
          Result<Id> inserted = InsertedId(s);
          ADS_RETURN_IF_ERROR(OwnerReference(c, inserted.status(), p));
          ADS_RETURN_IF_ERROR(SlugConflict(inserted.status(), p.slug));
          id = *inserted;
        }
        ADS_RETURN_IF_ERROR(WriteContracts(c, id, p.contracts));
        return Single(LoadProjects(c, id), "project", id);
      });
}

Result<ProjectRecord> SqlInventory::GetProject(Id id) {
  return TransactRead<ProjectRecord>(runner_, [&](Connection& c) -> Result<ProjectRecord> {
    return Single(LoadProjects(c, id), "project", id);
  });
}

Result<ProjectRecord> SqlInventory::GetProjectBySlug(const std::string& slug) {
  return TransactRead<ProjectRecord>(runner_, [&](Connection& c) -> Result<ProjectRecord> {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT id FROM projects WHERE slug = ?1"));
    ADS_ASSIGN_OR_RETURN(bool row, s.Bind(1, slug).Step());
    if (!row) return NotFoundError("project '" + slug + "' not found");
    Id id = s.Int(0);
    return Single(LoadProjects(c, id), "project", id);
  });
}

Result<std::vector<ProjectRecord>> SqlInventory::ListProjects() {
  return TransactRead<std::vector<ProjectRecord>>(
      runner_, [&](Connection& c) { return LoadProjects(c, std::nullopt); });
}

Result<ProjectRecord> SqlInventory::UpdateProject(const ProjectRecord& p, int64_t now) {
  return TransactWrite<ProjectRecord>(
      runner_, Runner::kCatalog, [&](Connection& c) -> Result<ProjectRecord> {
        {
          ADS_ASSIGN_OR_RETURN(Statement s,
                               c.Prepare("UPDATE projects SET slug = ?2, name = ?3, logo_url = ?4, "
                                         "category = ?5, updated_at = ?6, owner_community_id = ?7, "
                                         "symbol = ?8, sources = ?9 WHERE id = ?1"));
          s.Bind(1, p.id).Bind(2, p.slug).Bind(3, p.name).Bind(4, p.logo_url).Bind(5, p.category);
          s.Bind(6, now);
          s.Bind(7, p.owner_community_id).Bind(8, p.symbol).Bind(9, JoinSources(p.sources));
          Status updated = RunOnRow(c, s, "project", p.id);
          ADS_RETURN_IF_ERROR(OwnerReference(c, updated, p));
          ADS_RETURN_IF_ERROR(SlugConflict(updated, p.slug));
        }
        // A project with an owner answers every request for it (the owner's is granted, the
        // others declined).
        if (p.owner_community_id) {
          ADS_ASSIGN_OR_RETURN(
              Statement done,
              c.Prepare("DELETE FROM project_ownership_requests WHERE project_id = ?1"));
          ADS_RETURN_IF_ERROR(done.Bind(1, p.id).Run());
        }
        ADS_RETURN_IF_ERROR(WriteContracts(c, p.id, p.contracts));
        return Single(LoadProjects(c, p.id), "project", p.id);
      });
}

Status SqlInventory::DeleteProject(Id id) {
  return runner_.Write(Runner::kCatalog | Runner::kActivity, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM projects WHERE id = ?1"));
    s.Bind(1, id);
    Status st = RunOnRow(c, s, "project", id);
    if (st.code() != Code::kConflict) return st;
    ADS_ASSIGN_OR_RETURN(
        Statement user,
        c.Prepare("SELECT campaign_id FROM campaign_projects WHERE project_id = ?1 LIMIT 1"));
    ADS_ASSIGN_OR_RETURN(bool row, user.Bind(1, id).Step());
    if (!row) return st;
    return ConflictError("project " + std::to_string(id) + " is referenced by campaign " +
                         std::to_string(user.Int(0)));
  });
}

// ---- Project ownership requests (issue 39).

Result<OwnershipRequestRecord> SqlInventory::RequestOwnership(const OwnershipRequestRecord& r,
                                                              int64_t now) {
  OwnershipRequestRecord stored = r;
  stored.requested_at = now;
  ADS_RETURN_IF_ERROR(runner_.Write(/*bump=*/0, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare("INSERT INTO project_ownership_requests (project_id, community_id, note, "
                  "requested_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (project_id, community_id) "
                  "DO UPDATE SET note = excluded.note, requested_at = excluded.requested_at"));
    Status st = s.Bind(1, r.project_id).Bind(2, r.community_id).Bind(3, r.note).Bind(4, now).Run();
    ADS_RETURN_IF_ERROR(MissingReference(c, st, "projects", "project", r.project_id));
    return MissingReference(c, st, "communities", "community", r.community_id);
  }));
  return stored;
}

Result<std::vector<OwnershipRequestRecord>> SqlInventory::ListOwnershipRequests(
    std::optional<Id> community_id) {
  std::vector<OwnershipRequestRecord> out;
  ADS_RETURN_IF_ERROR(runner_.Read([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(
        Statement s,
        c.Prepare(std::string("SELECT project_id, community_id, note, requested_at FROM "
                              "project_ownership_requests") +
                  (community_id ? " WHERE community_id = ?1" : "") +
                  " ORDER BY requested_at, project_id, community_id"));
    if (community_id) s.Bind(1, *community_id);
    return ForEachRow(s, [&] {
      out.push_back({.project_id = s.Int(0),
                     .community_id = s.Int(1),
                     .note = s.Text(2),
                     .requested_at = s.Int(3)});
      return OkStatus();
    });
  }));
  return out;
}

Status SqlInventory::DeleteOwnershipRequest(Id project_id, Id community_id) {
  return runner_.Write(/*bump=*/0, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s,
                         c.Prepare("DELETE FROM project_ownership_requests WHERE project_id = ?1 "
                                   "AND community_id = ?2 RETURNING project_id"));
    ADS_ASSIGN_OR_RETURN(bool row, s.Bind(1, project_id).Bind(2, community_id).Step());
    if (!row) {
      return NotFoundError("no ownership request of community " + std::to_string(community_id) +
                           " for project " + std::to_string(project_id));
    }
    return OkStatus();
  });
}

// ---- Campaigns.

Result<CampaignRecord> SqlInventory::CreateCampaign(const CampaignRecord& r, int64_t now) {
  return TransactWrite<
      CampaignRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<CampaignRecord> {
    CampaignRecord stored = r;
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("INSERT INTO campaigns (community_id, name, status, starts_at, ends_at, "
                    "pricing_model, bid_micros, total_budget_micros, daily_budget_micros, "
                    "chains, recency_days, frequency_cap_count, frequency_cap_hours, "
                    "created_at, updated_at, archived_at) VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                    "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, ?16) RETURNING id"));
      BindCampaign(s, r, now);
      Result<Id> inserted = InsertedId(s);
      ADS_RETURN_IF_ERROR(
          MissingReference(c, inserted.status(), "communities", "community", r.community_id));
      stored.id = *inserted;
    }
    ADS_RETURN_IF_ERROR(WriteCampaignProjects(c, stored));
    ADS_RETURN_IF_ERROR(WriteCampaignControls(c, stored.id, r));
    return Single(LoadCampaigns(c, stored.id), "campaign", stored.id);
  });
}

Result<CampaignRecord> SqlInventory::GetCampaign(Id id) {
  return TransactRead<CampaignRecord>(runner_, [&](Connection& c) -> Result<CampaignRecord> {
    return Single(LoadCampaigns(c, id), "campaign", id);
  });
}

Result<std::vector<CampaignRecord>> SqlInventory::ListCampaigns() {
  return TransactRead<std::vector<CampaignRecord>>(
      runner_, [&](Connection& c) { return LoadCampaigns(c, std::nullopt); });
}

Result<CampaignRecord> SqlInventory::UpdateCampaign(const CampaignRecord& r, int64_t now) {
  return TransactWrite<
      CampaignRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<CampaignRecord> {
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("UPDATE campaigns SET community_id = ?2, name = ?3, status = ?4, "
                    "starts_at = ?5, ends_at = ?6, pricing_model = ?7, bid_micros = ?8, "
                    "total_budget_micros = ?9, daily_budget_micros = ?10, chains = ?11, "
                    "recency_days = ?12, frequency_cap_count = ?13, frequency_cap_hours = ?14, "
                    "updated_at = ?15, archived_at = ?16 WHERE id = ?1"));
      s.Bind(1, r.id);
      BindCampaign(s, r, now);
      ADS_RETURN_IF_ERROR(MissingReference(c, RunOnRow(c, s, "campaign", r.id), "communities",
                                           "community", r.community_id));
    }
    ADS_RETURN_IF_ERROR(WriteCampaignProjects(c, r));
    ADS_RETURN_IF_ERROR(WriteCampaignControls(c, r.id, r));
    return Single(LoadCampaigns(c, r.id), "campaign", r.id);
  });
}

Status SqlInventory::DeleteCampaign(Id id) {
  return runner_.Write(Runner::kCatalog, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM campaigns WHERE id = ?1"));
    s.Bind(1, id);
    return RunOnRow(c, s, "campaign", id);
  });
}

// ---- Ads.

Result<AdRecord> SqlInventory::CreateAd(const AdRecord& written, int64_t now) {
  AdRecord a = written;
  SettleApproval(a);
  return TransactWrite<AdRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<AdRecord> {
    Id id = 0;
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s,
          c.Prepare("INSERT INTO ads (campaign_id, headline, content, cta_url, cta_label, "
                    "image_landscape, image_long_banner, image_short_banner, weight, status, "
                    "created_at, updated_at, review_status, review_reason, approved_headline, "
                    "approved_content, approved_cta_url, approved_cta_label, "
                    "approved_image_landscape, approved_image_long_banner, "
                    "approved_image_short_banner, archived_at) VALUES (?2, ?3, ?4, ?5, ?6, ?7, "
                    "?8, ?9, ?10, ?11, ?12, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
                    "?22) RETURNING id"));
      BindAd(s, a, now);
      Result<Id> inserted = InsertedId(s);
      ADS_RETURN_IF_ERROR(
          MissingReference(c, inserted.status(), "campaigns", "campaign", a.campaign_id));
      id = *inserted;
    }
    ADS_RETURN_IF_ERROR(WriteAdControls(c, id, a));
    return Single(LoadAds(c, "WHERE id = ?1", id), "ad", id);
  });
}

Result<AdRecord> SqlInventory::GetAd(Id id) {
  return TransactRead<AdRecord>(runner_, [&](Connection& c) -> Result<AdRecord> {
    return Single(LoadAds(c, "WHERE id = ?1", id), "ad", id);
  });
}

Result<std::vector<AdRecord>> SqlInventory::ListAds(std::optional<Id> campaign_id) {
  return TransactRead<std::vector<AdRecord>>(
      runner_, [&](Connection& c) { return LoadAds(c, "WHERE campaign_id = ?1", campaign_id); });
}

Result<AdRecord> SqlInventory::UpdateAd(const AdRecord& written, int64_t now) {
  AdRecord a = written;
  SettleApproval(a);
  return TransactWrite<AdRecord>(runner_, Runner::kCatalog, [&](Connection& c) -> Result<AdRecord> {
    {
      ADS_ASSIGN_OR_RETURN(
          Statement s, c.Prepare("UPDATE ads SET campaign_id = ?2, headline = ?3, content = ?4, "
                                 "cta_url = ?5, cta_label = ?6, image_landscape = ?7, "
                                 "image_long_banner = ?8, image_short_banner = ?9, weight = ?10, "
                                 "status = ?11, updated_at = ?12, review_status = ?13, "
                                 "review_reason = ?14, approved_headline = ?15, "
                                 "approved_content = ?16, approved_cta_url = ?17, "
                                 "approved_cta_label = ?18, approved_image_landscape = ?19, "
                                 "approved_image_long_banner = ?20, "
                                 "approved_image_short_banner = ?21, archived_at = ?22 "
                                 "WHERE id = ?1"));
      s.Bind(1, a.id);
      BindAd(s, a, now);
      ADS_RETURN_IF_ERROR(
          MissingReference(c, RunOnRow(c, s, "ad", a.id), "campaigns", "campaign", a.campaign_id));
    }
    ADS_RETURN_IF_ERROR(WriteAdControls(c, a.id, a));
    return Single(LoadAds(c, "WHERE id = ?1", a.id), "ad", a.id);
  });
}

Status SqlInventory::DeleteAd(Id id) {
  return runner_.Write(Runner::kCatalog, [&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("DELETE FROM ads WHERE id = ?1"));
    s.Bind(1, id);
    return RunOnRow(c, s, "ad", id);
  });
}

// ---- Catalog.

Result<CatalogData> SqlInventory::LoadCatalogData() {
  CatalogData d;
  ADS_RETURN_IF_ERROR(runner_.Read([&](Connection& c) -> Status {
    ADS_ASSIGN_OR_RETURN(d.publishers, LoadPublishers(c, std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.api_keys, LoadApiKeys(c, "", std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.communities, LoadCommunities(c, std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.projects, LoadProjects(c, std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.campaigns, LoadCampaigns(c, std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.ads, LoadAds(c, "", std::nullopt));
    ADS_ASSIGN_OR_RETURN(d.advertiser_keys, LoadAdvertiserKeys(c, std::nullopt, std::nullopt));
    return OkStatus();
  }));
  return d;
}

}  // namespace adserver::store::sql
