#include "sim/simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "common/clock.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "decision/engine.h"
#include "decision/live_state.h"

namespace adserver::sim {
namespace {

using Json = nlohmann::json;

constexpr int64_t kStart = 1'767'225'600;  // 2026-01-01 00:00 UTC
constexpr uint32_t kProject = 1;
constexpr int kWallets = 4096;

Status Field(const std::string& field, const std::string& message) {
  return InvalidFieldError(field, message);
}

Result<double> NumberAt(const Json& object, const std::string& key, const std::string& field,
                        double lo, double hi, std::optional<double> fallback) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return Field(field, "is required");
  }
  if (!it->is_number()) return Field(field, "must be a number");
  const double v = it->get<double>();
  if (!(v >= lo && v <= hi)) {
    return Field(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return v;
}

Result<SimCampaign> ParseCampaign(const Json& j, const std::string& at) {
  if (!j.is_object()) return Field(at, "must be an object");
  SimCampaign c;
  ADS_ASSIGN_OR_RETURN(double id, NumberAt(j, "id", at + ".id", 1, 1e9, std::nullopt));
  c.id = static_cast<int64_t>(id);
  const std::string model = j.value("model", "");
  if (model == "cpm") {
    c.model = Model::kCpm;
  } else if (model == "cpc") {
    c.model = Model::kCpc;
  } else if (model == "cpa") {
    c.model = Model::kCpa;
  } else {
    return Field(at + ".model", "must be cpm, cpc or cpa");
  }
  ADS_ASSIGN_OR_RETURN(c.bid, NumberAt(j, "bid", at + ".bid", 1e-6, 1e6, std::nullopt));
  ADS_ASSIGN_OR_RETURN(c.start, NumberAt(j, "start", at + ".start", 0, 0.999, 0.0));
  ADS_ASSIGN_OR_RETURN(double community, NumberAt(j, "community", at + ".community", 1, 1e6, 1.0));
  c.community = static_cast<int64_t>(community);
  if (c.model == Model::kCpm) return c;
  if (auto factors = j.find("publisherFactors"); factors != j.end()) {
    if (!factors->is_object()) {
      return Field(at + ".publisherFactors", "must be an object of publisher id: factor");
    }
    for (const auto& [key, value] : factors->items()) {
      const std::string where = at + ".publisherFactors." + key;
      char* end = nullptr;
      const long long id = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 1) return Field(where, "must be a publisher id");
      if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 1e3)) {
        return Field(where, "must be a number between 0 and 1000");
      }
      c.publisher_factors.emplace_back(id, value.get<double>());
    }
  }
  if (auto factors = j.find("formatFactors"); factors != j.end()) {
    if (!factors->is_object()) {
      return Field(at + ".formatFactors", "must be an object of image format: factor");
    }
    for (const auto& [key, value] : factors->items()) {
      const std::string where = at + ".formatFactors." + key;
      const std::optional<ImageFormat> format = ParseImageFormat(key);
      if (!format) return Field(where, "must be LANDSCAPE, LONG_BANNER, SHORT_BANNER or NO_IMAGE");
      if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 1e3)) {
        return Field(where, "must be a number between 0 and 1000");
      }
      c.format_factors.emplace_back(*format, value.get<double>());
    }
  }
  const std::string rate_key = c.model == Model::kCpc ? "ctr" : "cvr";
  ADS_ASSIGN_OR_RETURN(c.rate, NumberAt(j, rate_key, at + "." + rate_key, 0, 1, std::nullopt));
  if (auto changes = j.find("changes"); changes != j.end()) {
    if (!changes->is_array()) return Field(at + ".changes", "must be an array");
    for (size_t k = 0; k < changes->size(); ++k) {
      const std::string where = at + ".changes[" + std::to_string(k) + "]";
      const Json& change = (*changes)[k];
      if (!change.is_object()) return Field(where, "must be an object");
      RateChange rc;
      ADS_ASSIGN_OR_RETURN(rc.at, NumberAt(change, "at", where + ".at", 0, 1, std::nullopt));
      ADS_ASSIGN_OR_RETURN(rc.rate,
                           NumberAt(change, rate_key, where + "." + rate_key, 0, 1, std::nullopt));
      c.changes.push_back(rc);
    }
    std::stable_sort(c.changes.begin(), c.changes.end(),
                     [](const RateChange& a, const RateChange& b) { return a.at < b.at; });
  }
  if (c.model == Model::kCpa) {
    auto delay = j.find("delayDays");
    if (delay != j.end()) {
      if (!delay->is_object()) return Field(at + ".delayDays", "must be {\"min\": d, \"max\": d}");
      ADS_ASSIGN_OR_RETURN(c.delay_min_days,
                           NumberAt(*delay, "min", at + ".delayDays.min", 0, 365, std::nullopt));
      ADS_ASSIGN_OR_RETURN(c.delay_max_days, NumberAt(*delay, "max", at + ".delayDays.max",
                                                      c.delay_min_days, 365, std::nullopt));
    }
  }
  return c;
}

Result<SimUnit> ParseUnit(const Json& j, const std::string& at) {
  if (!j.is_object()) return Field(at, "must be an object");
  SimUnit u;
  u.id = j.value("id", "");
  if (u.id.empty()) return Field(at + ".id", "is required");
  const std::optional<ImageFormat> format = ParseImageFormat(j.value("format", "LANDSCAPE"));
  if (!format)
    return Field(at + ".format", "must be LANDSCAPE, LONG_BANNER, SHORT_BANNER or NO_IMAGE");
  u.format = *format;
  ADS_ASSIGN_OR_RETURN(u.share, NumberAt(j, "share", at + ".share", 1e-9, 1e9, 1.0));
  return u;
}

// The true rate of `c` on publisher `publisher`, in a placement of `format`, after `progress`
// (fraction of the run's requests).
double TrueRate(const SimCampaign& c, double progress, int64_t publisher, ImageFormat format) {
  double rate = c.rate;
  for (const RateChange& change : c.changes) {
    if (progress >= change.at) rate = change.rate;
  }
  for (const auto& [id, factor] : c.publisher_factors) {
    if (id == publisher) rate *= factor;
  }
  for (const auto& [f, factor] : c.format_factors) {
    if (f == format) rate *= factor;
  }
  return std::min(1.0, rate);
}

// What one impression of `c` earns in expectation, in micro-units.
double TrueValueMicros(const SimCampaign& c, double progress, int64_t publisher,
                       ImageFormat format) {
  const double bid_micros = c.bid * 1e6;
  return c.model == Model::kCpm ? bid_micros / 1000
                                : bid_micros * TrueRate(c, progress, publisher, format);
}

// Unix seconds of the request at `progress` (a fraction of the run).
int64_t TimeAt(const Scenario& s, double progress) {
  return kStart + static_cast<int64_t>(s.days * 86400 * progress);
}

decision::Catalog BuildCatalog(const Scenario& s) {
  decision::Catalog catalog;
  for (const SimPublisher& p : s.publishers) {
    catalog.publishers.push_back({.id = p.id, .name = "publisher " + std::to_string(p.id)});
  }
  std::map<int64_t, decision::Index> communities;
  for (const SimCampaign& sc : s.campaigns) {
    if (communities.emplace(sc.community, catalog.communities.size()).second) {
      catalog.communities.push_back({.id = sc.community,
                                     .name = "advertiser " + std::to_string(sc.community),
                                     .logo_url = "https://a/l.png"});
    }
  }
  for (const SimCampaign& sc : s.campaigns) {
    decision::Campaign c;
    c.id = sc.id;
    c.id_str = std::to_string(sc.id);
    c.community = communities.at(sc.community);
    c.community_id = sc.community;
    if (sc.start > 0) c.starts_at = TimeAt(s, sc.start);
    c.bid_micros = static_cast<Micros>(std::llround(sc.bid * 1e6));
    c.pricing_model = sc.model == Model::kCpm   ? PricingModel::kCpm
                      : sc.model == Model::kCpc ? PricingModel::kCpc
                                                : PricingModel::kCpa;
    // As ingest::BuildCatalog values bids: CPM bid / 1000, CPC/CPA bid x the default rate.
    c.value_micros = sc.model == Model::kCpm   ? static_cast<double>(c.bid_micros) / 1000
                     : sc.model == Model::kCpc ? static_cast<double>(c.bid_micros) * s.default_ctr
                                               : static_cast<double>(c.bid_micros) * s.default_cvr;
    c.target_projects = {kProject};
    // A CPA campaign's conversions count within a window covering the scenario's delays.
    if (sc.model == Model::kCpa) {
      c.conversion = decision::ConversionRule{
          .window_days = static_cast<int32_t>(std::ceil(std::max(1.0, sc.delay_max_days)))};
    }
    catalog.campaigns.push_back(std::move(c));
    decision::Ad ad;
    ad.id = sc.id;
    ad.id_str = std::to_string(sc.id);
    ad.campaign = static_cast<decision::Index>(catalog.campaigns.size() - 1);
    ad.headline = "Ad " + ad.id_str;
    ad.content = "Simulated";
    ad.content_chars = 9;
    ad.cta_url = "https://example.com/" + ad.id_str;
    ad.cta_label = "Go";
    ad.images = {"https://img/l.png", "https://img/lb.png", "https://img/sb.png"};
    catalog.ads.push_back(std::move(ad));
  }
  catalog.BuildAdLists();
  catalog.BuildIndexes();
  return catalog;
}

Address WalletAt(int i) {
  Address a;
  a.bytes.fill(0);
  for (int b = 0; b < 4; ++b) a.bytes[b] = static_cast<uint8_t>(i >> (8 * b));
  a.bytes[19] = 0x5A;
  return a;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Field("scenario", "must be a JSON object");
  Scenario s;
  s.name = j.value("name", "");
  if (s.name.empty()) return Field("name", "is required");
  s.description = j.value("description", "");
  ADS_ASSIGN_OR_RETURN(double requests, NumberAt(j, "requests", "requests", 1, 1e9, 20'000));
  s.requests = static_cast<int64_t>(requests);
  ADS_ASSIGN_OR_RETURN(s.days, NumberAt(j, "days", "days", 1.0 / 24, 3650, 1.0));
  ADS_ASSIGN_OR_RETURN(s.default_ctr, NumberAt(j, "defaultCtr", "defaultCtr", 1e-9, 1, 0.01));
  ADS_ASSIGN_OR_RETURN(s.default_cvr, NumberAt(j, "defaultCvr", "defaultCvr", 1e-9, 1, 0.001));
  for (auto [key, out, lo] : {std::tuple{"ctrPriorWeight", &s.ctr_prior_weight, 1.0},
                              std::tuple{"cvrPriorWeight", &s.cvr_prior_weight, 1.0},
                              std::tuple{"halfLifeImpressions", &s.half_life_impressions, 0.0},
                              std::tuple{"conversionDelayDays", &s.conversion_delay_days, 0.0},
                              std::tuple{"changeThreshold", &s.change_threshold, 0.0}}) {
    if (!j.contains(key)) continue;
    ADS_ASSIGN_OR_RETURN(double value, NumberAt(j, key, key, lo, 1e9, std::nullopt));
    *out = value;
  }
  ADS_ASSIGN_OR_RETURN(s.guard, NumberAt(j, "guard", "guard", 0, 1, 0.0));
  if (auto publishers = j.find("publishers"); publishers != j.end()) {
    if (!publishers->is_array() || publishers->empty()) {
      return Field("publishers", "must be a non-empty array");
    }
    s.publishers.clear();
    for (size_t k = 0; k < publishers->size(); ++k) {
      const std::string at = "publishers[" + std::to_string(k) + "]";
      const Json& p = (*publishers)[k];
      if (!p.is_object()) return Field(at, "must be an object");
      SimPublisher sp;
      ADS_ASSIGN_OR_RETURN(double id, NumberAt(p, "id", at + ".id", 1, 1e9, std::nullopt));
      sp.id = static_cast<int64_t>(id);
      ADS_ASSIGN_OR_RETURN(sp.share, NumberAt(p, "share", at + ".share", 1e-9, 1e9, 1.0));
      if (auto units = p.find("units"); units != p.end()) {
        if (!units->is_array() || units->empty()) {
          return Field(at + ".units", "must be a non-empty array");
        }
        for (size_t u = 0; u < units->size(); ++u) {
          const std::string where = at + ".units[" + std::to_string(u) + "]";
          ADS_ASSIGN_OR_RETURN(SimUnit unit, ParseUnit((*units)[u], where));
          for (const SimUnit& other : sp.units) {
            if (other.id == unit.id) return Field(where + ".id", "is repeated");
          }
          sp.units.push_back(std::move(unit));
        }
      }
      for (const SimPublisher& other : s.publishers) {
        if (other.id == sp.id) return Field(at + ".id", "is repeated");
      }
      s.publishers.push_back(sp);
    }
  }
  auto campaigns = j.find("campaigns");
  if (campaigns == j.end() || !campaigns->is_array() || campaigns->empty()) {
    return Field("campaigns", "must be a non-empty array");
  }
  for (size_t k = 0; k < campaigns->size(); ++k) {
    ADS_ASSIGN_OR_RETURN(SimCampaign c,
                         ParseCampaign((*campaigns)[k], "campaigns[" + std::to_string(k) + "]"));
    for (const SimCampaign& other : s.campaigns) {
      if (other.id == c.id) return Field("campaigns[" + std::to_string(k) + "].id", "is repeated");
    }
    s.campaigns.push_back(std::move(c));
  }
  return s;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgumentError("cannot read scenario " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str());
}

RunResult Run(const Scenario& s, const Policy& policy, uint64_t seed) {
  const auto started = std::chrono::steady_clock::now();
  const decision::Catalog catalog = BuildCatalog(s);
  decision::ActivityIndex activity;
  const auto today = static_cast<uint32_t>(DayOf(kStart));
  for (int w = 0; w < kWallets; ++w) {
    activity.Add(WalletAt(w),
                 {.project_id = kProject, .chain_id = 1, .last_seen_day = today, .count = 1});
  }
  activity.Finalize();
  decision::DecisionOptions options;
  options.explore = policy.explore;
  options.peer_priors = policy.peer_priors;
  if (policy.placement_prior_events) {
    options.placement_prior_events = *policy.placement_prior_events;
  }
  if (policy.placement_ad_units) options.placement_ad_units = *policy.placement_ad_units;
  if (s.ctr_prior_weight) options.ctr_prior_weight = *s.ctr_prior_weight;
  if (s.cvr_prior_weight) options.cvr_prior_weight = *s.cvr_prior_weight;
  if (s.half_life_impressions) options.half_life_impressions = *s.half_life_impressions;
  if (s.conversion_delay_days) options.conversion_delay_days = *s.conversion_delay_days;
  if (s.change_threshold) options.change_threshold = *s.change_threshold;
  decision::LiveState live(
      decision::LiveStateOptions{.ledger_capacity = 1024, .frequency_capacity = 1024}, options);
  decision::Rng engine_rng(seed);
  std::mt19937_64 world(seed ^ 0x5EEDF00DULL);
  std::uniform_real_distribution<double> uniform(0, 1);

  RunResult r;
  r.impressions.assign(s.campaigns.size(), 0);
  std::vector<double> decile_revenue(10, 0), decile_oracle(10, 0);
  // Conversions waiting for their time: (due second, campaign index, publisher index, the
  // AdUnitKey of its placement, the impression's second).
  using Due = std::tuple<int64_t, size_t, size_t, uint64_t, int64_t>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> pending;
  int64_t recomputed_at = -1;
  std::vector<double> true_value(s.campaigns.size());
  // Which publisher each request comes from: its own stream, the same for every policy.
  std::mt19937_64 sites(seed ^ 0x517E5ULL);
  std::vector<double> shares;
  for (const SimPublisher& p : s.publishers) shares.push_back(p.share);
  std::discrete_distribution<size_t> site(shares.begin(), shares.end());
  // And which of its placements (drawn only for publishers that have some).
  std::vector<std::discrete_distribution<size_t>> unit_of;
  std::vector<std::vector<uint64_t>> unit_keys;
  for (const SimPublisher& p : s.publishers) {
    std::vector<double> unit_shares;
    unit_keys.emplace_back();
    for (const SimUnit& u : p.units) {
      unit_shares.push_back(u.share);
      unit_keys.back().push_back(decision::AdUnitKey(u.id));
    }
    unit_of.emplace_back(unit_shares.begin(), unit_shares.end());
  }

  for (int64_t k = 0; k < s.requests; ++k) {
    const double progress = static_cast<double>(k) / static_cast<double>(s.requests);
    const int64_t now = TimeAt(s, progress);
    while (!pending.empty() && std::get<0>(pending.top()) <= now) {
      const auto [due, c, p, unit, touched] = pending.top();
      pending.pop();
      decision::RecordConversion(live, catalog.campaigns[c], due);
      live.placement_feed.Add({catalog.campaigns[c].id, catalog.publishers[p].id, unit}, 0, 1);
      live.delay_feed.Add(catalog.campaigns[c].id, static_cast<double>(due - touched));
    }
    // `serve` recomputes the lift ceilings after every counter flush (each second).
    if (now != recomputed_at) {
      decision::RecomputeRateLift(live, catalog, now);
      recomputed_at = now;
    }
    const size_t pub = site(sites);
    const int64_t publisher_id = catalog.publishers[pub].id;
    const std::vector<SimUnit>& units = s.publishers[pub].units;
    const std::optional<size_t> unit =
        units.empty() ? std::nullopt : std::optional<size_t>(unit_of[pub](sites));
    const ImageFormat format = unit ? units[*unit].format : ImageFormat::kLandscape;
    const uint64_t unit_key = unit ? unit_keys[pub][*unit] : 0;
    double best = 0;
    for (size_t c = 0; c < s.campaigns.size(); ++c) {
      true_value[c] = TrueValueMicros(s.campaigns[c], progress, publisher_id, format);
      // A campaign not started yet is not available to the oracle either.
      const auto& starts = catalog.campaigns[c].starts_at;
      if (!starts || now >= *starts) best = std::max(best, true_value[c]);
    }
    const Address wallet = WalletAt(static_cast<int>(k % kWallets));
    decision::DecisionRequest request{.wallets = std::span<const Address>(&wallet, 1),
                                      .format = format,
                                      .publisher = &catalog.publishers[pub],
                                      .now_seconds = now,
                                      .live = &live};
    if (unit) request.ad_unit_id = units[*unit].id;
    const std::optional<decision::Decision> d =
        decision::Decide(request, catalog, activity, engine_rng);
    ++r.decisions;
    const auto decile = static_cast<size_t>(std::min<int64_t>(9, k * 10 / s.requests));
    decile_oracle[decile] += best;
    r.oracle += best;
    if (!d) {
      ++r.unfilled;
      continue;
    }
    const auto c = static_cast<size_t>(d->campaign - catalog.campaigns.data());
    ++r.impressions[c];
    r.revenue += true_value[c];
    decile_revenue[decile] += true_value[c];
    decision::RecordImpression(live, *d->campaign, request.wallets, now);
    // As `serve` feeds the serving counters' flush, the click and conversion handlers.
    live.placement_feed.Add({d->campaign->id, publisher_id, unit_key}, 1, 0);
    const SimCampaign& sc = s.campaigns[c];
    if (sc.model == Model::kCpm ||
        !(uniform(world) < TrueRate(sc, progress, publisher_id, format))) {
      continue;
    }
    if (sc.model == Model::kCpc) {
      decision::RecordClick(live, *d->campaign, now);
      live.placement_feed.Add({d->campaign->id, publisher_id, unit_key}, 0, 1);
      continue;
    }
    const double delay =
        (sc.delay_min_days + (sc.delay_max_days - sc.delay_min_days) * uniform(world)) * 86400;
    pending.emplace(now + static_cast<int64_t>(delay), c, pub, unit_key, now);
  }
  r.revenue /= 1e6;
  r.oracle /= 1e6;
  for (size_t d = 0; d < 10; ++d) {
    r.decile_share.push_back(decile_oracle[d] > 0 ? decile_revenue[d] / decile_oracle[d] : 0);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace adserver::sim
