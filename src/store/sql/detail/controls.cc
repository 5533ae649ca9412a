#include "store/sql/detail/controls.h"

#include <charconv>
#include <string>
#include <string_view>
#include <unordered_map>

namespace adserver::store::sql {
namespace {

// Lists are stored comma-separated (ids, categories and arm names contain no commas).
template <typename T>
std::string Join(const std::vector<T>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    if constexpr (std::is_same_v<T, std::string>) {
      out += items[i];
    } else {
      out += std::to_string(items[i]);
    }
  }
  return out;
}

std::vector<std::string> SplitStrings(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    out.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<Id> SplitIds(std::string_view text) {
  std::vector<Id> out;
  for (const std::string& item : SplitStrings(text)) {
    Id v = 0;
    std::from_chars(item.data(), item.data() + item.size(), v);
    out.push_back(v);
  }
  return out;
}

// Runs `sql` (no parameters) and hands each row to `fn` with the record whose id is column 0.
template <typename Record, typename Fn>
Status ForEachControl(Connection& c, const char* sql, std::vector<Record>& out, Fn fn) {
  if (out.empty()) return OkStatus();
  std::unordered_map<Id, Record*> by_id;
  for (Record& r : out) by_id.emplace(r.id, &r);
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare(sql));
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return OkStatus();
    auto it = by_id.find(s.Int(0));
    if (it != by_id.end()) fn(*it->second, s);
  }
}

}  // namespace

Status LoadPublisherControls(Connection& c, std::vector<PublisherRecord>& out) {
  return ForEachControl(
      c,
      "SELECT publisher_id, allowed_communities, category_opt_ins, floor_cpm_micros, ab_arms, "
      "rate_per_second, rate_burst FROM publisher_controls",
      out, [](PublisherRecord& p, Statement& s) {
        p.allowed_communities = SplitIds(s.Text(1));
        p.category_opt_ins = SplitStrings(s.Text(2));
        p.floor_cpm_micros = s.OptInt(3);
        p.ab_arms = SplitStrings(s.Text(4));
        p.rate_limit.reset();
        if (!s.IsNull(5) && !s.IsNull(6)) {
          p.rate_limit = RateLimit{.per_second = s.Double(5), .burst = s.Int(6)};
        }
      });
}

Status LoadCampaignControls(Connection& c, std::vector<CampaignRecord>& out) {
  return ForEachControl(
      c,
      "SELECT campaign_id, category, allowed_publishers, pacing, advertiser_project_id, "
      "exclude_existing_users, conversion_projects, conversion_kind, "
      "conversion_returning_after_days, conversion_window_days, conversion_once_per_person, "
      "explore FROM campaign_controls",
      out, [](CampaignRecord& r, Statement& s) {
        r.category = s.Text(1);
        r.allowed_publishers = SplitIds(s.Text(2));
        r.pacing = s.Text(3);
        r.advertiser_project = s.OptInt(4);
        r.exclude_existing_users = s.Int(5) != 0;
        r.explore = s.Int(11) != 0;
        r.conversion.reset();
        if (!s.IsNull(6)) {
          ConversionRule rule;
          rule.projects = SplitIds(s.Text(6));
          std::string kind = s.Text(7);
          rule.kind = kind == "new"         ? ConversionKind::kNew
                      : kind == "returning" ? ConversionKind::kReturning
                                            : ConversionKind::kAny;
          rule.returning_after_days = static_cast<int32_t>(s.Int(8));
          rule.window_days = static_cast<int32_t>(s.Int(9));
          rule.count_once_per_person = s.Int(10) != 0;
          r.conversion = std::move(rule);
        }
      });
}

Status LoadAdControls(Connection& c, std::vector<AdRecord>& out) {
  return ForEachControl(c, "SELECT ad_id, ab_arm FROM ad_controls", out,
                        [](AdRecord& a, Statement& s) { a.ab_arm = s.Text(1); });
}

Status WritePublisherControls(Connection& c, Id id, const PublisherRecord& p) {
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      c.Prepare("INSERT INTO publisher_controls (publisher_id, allowed_communities, "
                "category_opt_ins, floor_cpm_micros, ab_arms, rate_per_second, rate_burst) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (publisher_id) DO UPDATE SET "
                "allowed_communities = excluded.allowed_communities, "
                "category_opt_ins = excluded.category_opt_ins, "
                "floor_cpm_micros = excluded.floor_cpm_micros, ab_arms = excluded.ab_arms, "
                "rate_per_second = excluded.rate_per_second, rate_burst = excluded.rate_burst"));
  s.Bind(1, id)
      .Bind(2, Join(p.allowed_communities))
      .Bind(3, Join(p.category_opt_ins))
      .Bind(4, p.floor_cpm_micros)
      .Bind(5, Join(p.ab_arms));
  if (p.rate_limit) {
    s.BindDouble(6, p.rate_limit->per_second).Bind(7, p.rate_limit->burst);
  } else {
    s.BindNull(6).BindNull(7);
  }
  return s.Run();
}

Status WriteCampaignControls(Connection& c, Id id, const CampaignRecord& r) {
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      c.Prepare("INSERT INTO campaign_controls (campaign_id, category, "
                "allowed_publishers, pacing, advertiser_project_id, exclude_existing_users, "
                "conversion_projects, conversion_kind, conversion_returning_after_days, "
                "conversion_window_days, conversion_once_per_person, explore) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
                "ON CONFLICT (campaign_id) DO UPDATE SET category = excluded.category, "
                "allowed_publishers = excluded.allowed_publishers, pacing = excluded.pacing, "
                "advertiser_project_id = excluded.advertiser_project_id, "
                "exclude_existing_users = excluded.exclude_existing_users, "
                "conversion_projects = excluded.conversion_projects, "
                "conversion_kind = excluded.conversion_kind, "
                "conversion_returning_after_days = excluded.conversion_returning_after_days, "
                "conversion_window_days = excluded.conversion_window_days, "
                "conversion_once_per_person = excluded.conversion_once_per_person, "
                "explore = excluded.explore"));
  s.Bind(1, id)
      .Bind(2, r.category)
      .Bind(3, Join(r.allowed_publishers))
      .Bind(4, r.pacing)
      .Bind(5, r.advertiser_project)
      .Bind(6, int64_t{r.exclude_existing_users ? 1 : 0})
      .Bind(12, int64_t{r.explore ? 1 : 0});
  if (r.conversion) {
    const ConversionRule& rule = *r.conversion;
    s.Bind(7, Join(rule.projects))
        .Bind(8, std::string_view(rule.kind == ConversionKind::kNew         ? "new"
                                  : rule.kind == ConversionKind::kReturning ? "returning"
                                                                            : "any"))
        .Bind(9, int64_t{rule.returning_after_days})
        .Bind(10, int64_t{rule.window_days})
        .Bind(11, int64_t{rule.count_once_per_person ? 1 : 0});
  } else {
    s.BindNull(7)
        .Bind(8, std::string_view("any"))
        .Bind(9, int64_t{45})
        .Bind(10, int64_t{14})
        .Bind(11, int64_t{1});
  }
  return s.Run();
}

Status WriteAdControls(Connection& c, Id id, const AdRecord& a) {
  ADS_ASSIGN_OR_RETURN(Statement s,
                       c.Prepare("INSERT INTO ad_controls (ad_id, ab_arm) VALUES (?1, ?2) "
                                 "ON CONFLICT (ad_id) DO UPDATE SET ab_arm = excluded.ab_arm"));
  return s.Bind(1, id).Bind(2, a.ab_arm).Run();
}

}  // namespace adserver::store::sql
