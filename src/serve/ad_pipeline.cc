#include "serve/ad_pipeline.h"

#include <string>
#include <utility>

#include "serve/ad_response.h"

namespace adserver::serve {
namespace {

// Runs after identity resolution (serve/identity_binding.h), which fills `wallets` from the
// identity cookie or a known localId when it can. Returns the response when the request still
// has no wallets to be served from.
std::optional<http::Response> CheckWalletPresence(const AdRequest& request) {
  if (!request.wallets.empty()) return std::nullopt;
  if (!IsEarlier(request.variant)) {
    return ErrorAnswer(
        400, "Invalid request",
        {{"walletAddresses",
          "walletAddresses is required unless the request carries the identity cookie"}});
  }
  // Only `walletAddresses: []` with a localId relaxes the minimum; this one is unknown.
  if (request.wallets_present && request.local_id) return NoAdEarlier("WALLET_CACHE_VOID");
  return ErrorAnswer(400, "Invalid request",
                     {{"walletAddresses", "at least one address is required"}});
}

http::Response NoAd(const AdRequest& request) {
  return request.bound_local_id ? NoAdEarlier(*request.bound_local_id) : NoFill(request.variant);
}

}  // namespace

std::optional<decision::Decision> AdPipeline::Choose(const AdInput& input, const AdRequest& request,
                                                     decision::Explanation* explain) const {
  decision::DecisionRequest decision_request{
      .wallets = request.wallets,
      .format = request.format,
      .earlier_variant = IsEarlier(request.variant),
      .publisher = &input.publisher,
      .now_seconds = input.now_seconds,
  };
  if (input.key.test) {
    // Test keys are served samples; their explanation replays what a live key would get, with
    // a private RNG and without billing.
    if (explain != nullptr) {
      decision::DecisionRequest replay = decision_request;
      replay.ad_unit_id = request.ad_unit();
      ports_.budgets->Prepare(replay);
      replay.explain = explain;
      decision::Rng rng(explain_seed_);
      decision::Decide(replay, input.catalog, input.activity, rng);
    }
    // Test keys get rotating sample ads without targeting (compatibility.md, Keys).
    uint64_t counter = sample_counter_.fetch_add(1, std::memory_order_relaxed);
    return decision::SampleDecision(decision_request, input.catalog, counter);
  }
  decision_request.ad_unit_id = request.ad_unit();
  ports_.budgets->Prepare(decision_request);
  decision_request.explain = explain;
  return decision::Decide(decision_request, input.catalog, input.activity, input.rng);
}

AdAnswer AdPipeline::ServeAd(const AdInput& input, const AdRequest& request,
                             const decision::Decision& decision) const {
  if (input.key.test) {
    // Test keys keep the ad's own URL and never touch budgets, events or counters.
    return {.response = JsonResponse(200, AdResponseBody(request, decision))};
  }
  // An invalid impression is answered like any other but bills nothing, counts toward no cap
  // or learned rate, and exposes no one (so no conversion is attributed to it).
  const events::InvalidReason invalid =
      ports_.impressions->Check(input.http, request.wallets, input.publisher.id, input.now_seconds);
  const bool valid = invalid == events::InvalidReason::kNone;
  // Cluster mode: a billable impression is paid from this node's budget lease first; when
  // another request took the last of it, no ad (never an impression past the budget).
  if (valid && !ports_.budgets->Authorize(decision)) {
    return {.response = NoAd(request), .no_fill = NoFillReason::kNoEligibleAd};
  }
  AdAnswer answer;
  answer.served = {.campaign_id = decision.campaign->id,
                   .ad_id = decision.ad->id,
                   .spend = valid ? decision::ImpressionPrice(*decision.campaign) : 0,
                   .invalid = invalid};
  // Live keys' ads link through the click redirect.
  const std::string click_url = ports_.impressions->Seal({.http = input.http,
                                                          .request = request,
                                                          .publisher = input.publisher,
                                                          .decision = decision,
                                                          .now_micros = input.now_micros,
                                                          .now_seconds = input.now_seconds,
                                                          .invalid = invalid});
  answer.response = JsonResponse(200, AdResponseBody(request, decision, click_url));
  if (valid) ports_.budgets->Record(decision, request.wallets, input.now_seconds);
  return answer;
}

AdAnswer AdPipeline::Run(const AdInput& input, AdRequest& request) const {
  // The identity cookie is only for the publisher's own pages (issue 39): a browser request
  // from an origin the publisher has not listed (any origin when it lists none, `null` too) is
  // answered as if the visitor had not consented, so no other site can learn what the
  // visitor's identity is shown. A listed origin got this far (AdHandler checks it); requests
  // without an Origin come from servers, which hold the cookie only if the visitor gave it.
  if (request.cookie_consent && input.http.HasHeader("Origin") &&
      input.publisher.allowed_origins.empty()) {
    request.cookie_consent = false;
  }
  IdentityOutcome identity =
      ports_.identity->Resolve(input.http, request, input.key.test, input.now_seconds);
  if (identity.no_fill) {
    return {.response = NoFill(request.variant), .no_fill = NoFillReason::kNoIdentity};
  }
  if (auto response = CheckWalletPresence(request)) return {.response = std::move(*response)};
  decision::Explanation explanation;
  const ExplainScope explain_scope = ports_.budgets->Explain(input.http, input.key.test);
  const bool explain = explain_scope != ExplainScope::kNone;
  std::optional<decision::Decision> decision =
      Choose(input, request, explain ? &explanation : nullptr);
  AdAnswer answer;
  if (!decision || decision->ad == nullptr || decision->campaign == nullptr) {
    answer = {.response = NoAd(request), .no_fill = NoFillReason::kNoEligibleAd};
  } else {
    answer = ServeAd(input, request, *decision);
  }
  if (explain) {
    answer.response.SetHeader(
        kExplainHeader,
        ExplanationJson(explanation, false, explain_scope == ExplainScope::kOperator));
  }
  for (const std::string& cookie : identity.set_cookies) {
    answer.response.SetHeader("Set-Cookie", cookie);
  }
  return answer;
}

void AdPipeline::Count(const AdInput& input, Variant variant,
                       std::optional<std::string_view> ad_unit_id, int status,
                       const ServedInfo& served) const {
  events::ServeOutcome outcome = status == 200 ? events::ServeOutcome::kFill
                                 : status == 204 || (status == 404 && IsEarlier(variant))
                                     ? events::ServeOutcome::kNoFill
                                     : events::ServeOutcome::kError;
  ports_.impressions->Count({.unix_seconds = input.now_seconds,
                             .publisher_id = input.publisher.id,
                             .ad_unit_id = ad_unit_id.value_or(std::string_view()),
                             .campaign_id = served.campaign_id,
                             .ad_id = served.ad_id,
                             .arm = decision::ArmFor(input.publisher, ad_unit_id)},
                            outcome, served);
}

}  // namespace adserver::serve
