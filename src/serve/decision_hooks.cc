#include "serve/decision_hooks.h"

#include <cstdio>

#include "common/json_writer.h"

namespace adserver::serve {
namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

void AppendNumber(std::string& out, double v) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%.6g", v);
  out.append(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

void PrepareDecision(const DecisionHooks& hooks, std::optional<std::string_view> ad_unit_id,
                     decision::DecisionRequest& request) {
  request.ad_unit_id = ad_unit_id;
  request.live = hooks.live;
  request.options = &hooks.options;
}

bool AuthorizeServed(const DecisionHooks& hooks, const decision::Decision& decision) {
  if (hooks.live == nullptr || decision.campaign == nullptr) return true;
  return decision::AuthorizeImpression(*hooks.live, *decision.campaign);
}

void RecordServed(const DecisionHooks& hooks, const decision::Decision& decision,
                  std::span<const Address> wallets, int64_t now) {
  if (hooks.live == nullptr || decision.campaign == nullptr) return;
  decision::RecordImpression(*hooks.live, *decision.campaign, wallets, now);
}

ExplainScope ExplainAllowed(const DecisionHooks& hooks, const http::Request& request,
                            bool test_key) {
  if (!request.HasHeader(kExplainHeader)) return ExplainScope::kNone;
  const ExplainScope otherwise = test_key ? ExplainScope::kPublisher : ExplainScope::kNone;
  if (!hooks.admin_token_hash) return otherwise;
  std::string_view auth = TrimSpaces(request.Header("Authorization"));
  constexpr std::string_view kBearer = "Bearer ";
  if (!auth.starts_with(kBearer)) return otherwise;
  return ConstantTimeEqual(Sha256(TrimSpaces(auth.substr(kBearer.size()))), *hooks.admin_token_hash)
             ? ExplainScope::kOperator
             : otherwise;
}

std::string ExplanationJson(const decision::Explanation& e, bool all, bool values) {
  std::string out;
  out.reserve(128 + e.candidates.size() * 120);
  out += "{\"arm\":";
  AppendJsonString(out, e.arm);
  out += ",\"winner\":";
  if (e.winner_campaign_id == 0) {
    out += "null";
  } else {
    out += "{\"campaignId\":\"" + std::to_string(e.winner_campaign_id) + "\",\"adId\":\"" +
           std::to_string(e.winner_ad_id) + "\"}";
  }
  out += ",\"candidates\":[";
  size_t unmatched = 0;
  bool first = true;
  for (const decision::CandidateExplanation& c : e.candidates) {
    if (!all && c.rule == decision::DropRule::kNoMatchingActivity) {
      ++unmatched;
      continue;
    }
    if (!first) out += ',';
    first = false;
    out += "{\"campaignId\":\"" + std::to_string(c.campaign_id) + "\",\"rule\":\"";
    out += decision::DropRuleName(c.rule);
    if (!values) {
      out += "\"}";
      continue;
    }
    out += "\",\"valueMicros\":";
    AppendNumber(out, c.value_micros);
    if (c.rate.learned) {
      // Issue 36: what the value was drawn from (or, without exploration, is the mean of).
      out += ",\"meanValueMicros\":";
      AppendNumber(out, c.mean_value_micros);
      out += c.sampled ? ",\"sampled\":true" : ",\"sampled\":false";
      if (c.sampled) {
        out += ",\"placementFactor\":";
        AppendNumber(out, c.placement_factor);
      }
      out += ",\"rate\":{\"mean\":";
      AppendNumber(out, c.rate.mean);
      out += ",\"priorMean\":";
      AppendNumber(out, c.rate.prior_mean);
      out += ",\"priorWeight\":";
      AppendNumber(out, c.rate.prior_weight);
      out += ",\"events\":";
      AppendNumber(out, c.rate.successes);
      out += ",\"impressions\":";
      AppendNumber(out, c.rate.trials);
      out += '}';
    }
    out += ",\"relevance\":";
    AppendNumber(out, c.relevance);
    out += ",\"pacingFactor\":";
    AppendNumber(out, c.pacing_factor);
    out += ",\"score\":";
    AppendNumber(out, c.score);
    out += '}';
  }
  out += "],\"unmatched\":" + std::to_string(unmatched) + "}";
  return out;
}

}  // namespace adserver::serve
