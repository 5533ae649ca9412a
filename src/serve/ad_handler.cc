#include "serve/ad_handler.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/crypto.h"
#include "common/ip_address.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "events/click_token.h"
#include "events/decision_id.h"
#include "serve/ad_request.h"
#include "serve/decision_hooks.h"
#include "serve/identity_binding.h"

namespace adserver::serve {
namespace {

using decision::Variant;

constexpr std::string_view kJsonContentType = "application/json; charset=utf-8";
constexpr size_t kMaxBodyBytes = 64 * 1024;
// Bodies parsed before the key is checked (see Serve); larger ones are parsed after it.
constexpr size_t kEarlyParseBytes = 8 * 1024;
constexpr std::string_view kKeyPrefix = "spk_";
constexpr size_t kKeyLength = 34;

bool IsEarlier(Variant variant) { return variant == Variant::kEarlier; }

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// "spk_" + exactly 30 characters of [A-Za-z0-9].
bool IsWellFormedKey(std::string_view key) {
  if (key.size() != kKeyLength || !key.starts_with(kKeyPrefix)) return false;
  for (char c : key.substr(kKeyPrefix.size())) {
    if (!IsAlnum(c)) return false;
  }
  return true;
}

// application/json, media type case-insensitive, any parameters (charset=utf-8, ...).
bool IsJsonContentType(std::string_view value) {
  return EqualsIgnoreCase(TrimOws(value.substr(0, value.find(';'))), "application/json");
}

http::Response JsonResponse(int status, std::string body) {
  http::Response response;
  response.status = status;
  response.SetHeader("Cache-Control", "no-store");
  response.SetHeader("Content-Type", kJsonContentType);
  response.body = std::move(body);
  return response;
}

http::Response Error(int status, std::string_view message,
                     const std::vector<FieldError>& details = {}) {
  return JsonResponse(status, http::ErrorBody(message, details));
}

// A handler outcome plus whether CORS may expose it to the calling origin.
struct Outcome {
  http::Response response;
  bool expose_to_origin = true;
};

Outcome KeyError(Variant variant, std::string message) {
  return {Error(401, IsEarlier(variant) ? "Invalid API key" : "Invalid or missing API key",
                {FieldError{"x-api-key", std::move(message)}})};
}

Outcome Unavailable(Variant variant) {
  return IsEarlier(variant) ? Outcome{Error(500, "Internal server error")}
                            : Outcome{Error(503, "Serving unavailable")};
}

// The earlier variant's no-fill 404, optionally telling the SDK to forget its localId.
http::Response NoAdEarlier(std::optional<std::string_view> local_id) {
  std::string body;
  body.reserve(80);
  JsonObjectWriter writer(body);
  writer.String("error", "No ad available").Raw("details", "[]");
  if (local_id) writer.String("localId", *local_id);
  writer.Close();
  return JsonResponse(404, std::move(body));
}

http::Response NoFill(Variant variant) {
  if (IsEarlier(variant)) return NoAdEarlier(std::nullopt);
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  return response;
}

// CORS (not in the spec; required by the clients, compatibility.md): /v1/ads is credentialed
// and echoes the Origin; /api/ads is public and answers "*".
void AddCors(http::Response& response, const http::Request& request, Variant variant,
             bool expose_to_origin) {
  if (IsEarlier(variant)) {
    response.SetHeader("Access-Control-Allow-Origin", "*");
    return;
  }
  if (!request.HasHeader("Origin")) return;
  if (expose_to_origin) {
    response.SetHeader("Access-Control-Allow-Origin", request.Header("Origin"));
    response.SetHeader("Access-Control-Allow-Credentials", "true");
  }
  response.SetHeader("Vary", "Origin");
}

// Runs after identity resolution (serve/identity_binding.h), which fills `wallets` from the
// identity cookie or a known localId when it can. Returns the response when the request still
// has no wallets to be served from.
std::optional<http::Response> CheckWalletPresence(const AdRequest& request) {
  if (!request.wallets.empty()) return std::nullopt;
  if (!IsEarlier(request.variant)) {
    return Error(400, "Invalid request",
                 {{"walletAddresses",
                   "walletAddresses is required unless the request carries the identity cookie"}});
  }
  // Only `walletAddresses: []` with a localId relaxes the minimum; this one is unknown.
  if (request.wallets_present && request.local_id) return NoAdEarlier("WALLET_CACHE_VOID");
  return Error(400, "Invalid request", {{"walletAddresses", "at least one address is required"}});
}

std::optional<std::string_view> AdUnitOf(const AdRequest& request) {
  if (!request.ad_unit_id) return std::nullopt;
  return std::string_view(*request.ad_unit_id);
}

// Everything HandleWith needs, bundled so the steps below stay small.
struct Context {
  const http::Request& request;
  Variant variant;
  const decision::Catalog* catalog;
  const decision::ActivityIndex* activity;
  int64_t now_seconds;
  decision::Rng& rng;
  const ServeOptions& options;
  std::atomic<uint64_t>& sample_counter;
  const identity::IdentityService* identity;  // null = identity disabled
  const DecisionHooks* hooks = nullptr;  // null = no budgets, caps, billing or explain
  const EventHooks* events = nullptr;    // null = no click URLs, no serving counters
  int64_t now_micros = 0;
  RateLimiter* rate_limiter = nullptr;  // null = publishers' rate limits are not applied
  AdMetrics* metrics = nullptr;          // null = not counted
  NoFillReason* no_fill = nullptr;       // set by ServeForKey when it answers without an ad
};

// What a live key's request ended with, for the serving counters.
struct ServedInfo {
  int64_t campaign_id = 0;
  int64_t ad_id = 0;
  Micros spend = 0;
  events::InvalidReason invalid = events::InvalidReason::kNone;
};

// The invalid-traffic checks of a live key's served impression (issue 18): a browser's request
// (it sent an Origin) for its user agent and address, every request for its wallets.
events::InvalidReason CheckImpression(const TrafficGuard& traffic, const http::Request& request,
                                      std::span<const Address> wallets, int64_t publisher_id,
                                      int64_t now_seconds) {
  if (traffic.checks == nullptr) return events::InvalidReason::kNone;
  const bool browser = !request.Header("Origin").empty();
  std::optional<IpAddress> ip;
  if (browser) {
    ip = traffic.proxies != nullptr ? http::ClientIp(request, *traffic.proxies)
                                    : ParseIp(request.remote_ip);
  }
  return traffic.checks->CheckImpression({.user_agent = request.Header("User-Agent"),
                                          .ip = ip,
                                          .browser = browser,
                                          .wallets = wallets,
                                          .publisher_id = publisher_id,
                                          .now_seconds = now_seconds});
}

// The click URL of a live key's ad: {public_url}/v1/click/{token}, the token sealing what the
// click needs (events/click_token.h) under a new decision id.
std::string ClickUrl(const Context& ctx, const decision::Publisher& publisher,
                     const AdRequest& request, const decision::Decision& decision,
                     const events::DecisionId& id, uint64_t person, std::string_view arm,
                     events::InvalidReason impression) {
  const decision::Campaign& campaign = *decision.campaign;
  events::ClickClaims claims{
      .decision = id,
      .publisher_id = publisher.id,
      .campaign_id = campaign.id,
      .ad_id = decision.ad->id,
      .served_at = ctx.now_seconds,
      .price = campaign.pricing_model == PricingModel::kCpc ? campaign.bid_micros : 0,
      .person = person,
      .earlier_variant = IsEarlier(request.variant),
      .arm = std::string(arm),
      .ad_unit_id = request.ad_unit_id.value_or(std::string()),
      // For the click's invalid-traffic checks (too_fast, user_agent_mismatch).
      .serve_context = true,
      .served_at_millis = static_cast<int32_t>((ctx.now_micros / 1000) % 1000),
      .user_agent_hash = events::UserAgentHash(ctx.request.Header("User-Agent")),
      // A click on an invalid impression is invalid too.
      .serve_invalid = static_cast<uint8_t>(impression),
  };
  std::string url;
  url.reserve(ctx.events->click_prefix.size() + 160 + claims.ad_unit_id.size());
  url += ctx.events->click_prefix;
  events::SealClick(ctx.events->service->click_keys(), claims, url);
  return url;
}

// The key's checks before its lookup: present and well formed, and a catalog to look it up in.
std::optional<Outcome> PrecheckKey(const Context& ctx) {
  std::string_view key = ctx.request.Header("x-api-key");
  if (key.empty()) return KeyError(ctx.variant, "x-api-key header is required");
  if (!IsWellFormedKey(key)) {
    return KeyError(ctx.variant, "x-api-key must be spk_ followed by 30 letters or digits");
  }
  // Keys are looked up in the catalog, so an unready catalog is answered before that.
  if (ctx.catalog == nullptr || ctx.activity == nullptr) return Unavailable(ctx.variant);
  return std::nullopt;
}

// The active key `key` (raw, as sent) names in `catalog`, or null. A publisher's pages send one
// key with every request, so each thread remembers the last key that resolved and what it
// resolved to, and a repeat skips hashing it. The memo holds for one catalog (its address and
// generation: a key revoked or changed comes with a new catalog) and is compared in constant
// time, so answering from it reveals nothing a caller without the key could learn.
const decision::ApiKey* FindKey(const decision::Catalog& catalog, std::string_view key) {
  struct Memo {
    const decision::Catalog* catalog = nullptr;
    uint64_t generation = 0;
    std::array<char, kKeyLength> key{};
    const decision::ApiKey* api_key = nullptr;
  };
  thread_local Memo memo;
  if (memo.catalog == &catalog && memo.generation == catalog.generation() &&
      ConstantTimeEqual(key, std::string_view(memo.key.data(), memo.key.size()))) {
    return memo.api_key;
  }
  const decision::ApiKey* api_key = catalog.FindKey(Sha256(key));
  if (api_key != nullptr && key.size() == kKeyLength) {
    memo.catalog = &catalog;
    memo.generation = catalog.generation();
    std::copy(key.begin(), key.end(), memo.key.begin());
    memo.api_key = api_key;
  }
  return api_key;
}

// Looks the key up and checks the Origin against the key's publisher. Returns the key, or the
// response that ends the request. REQUIRES: PrecheckKey passed.
std::variant<const decision::ApiKey*, Outcome> Authenticate(const Context& ctx) {
  const decision::ApiKey* api_key = FindKey(*ctx.catalog, ctx.request.Header("x-api-key"));
  if (api_key == nullptr) return KeyError(ctx.variant, "x-api-key is not an active API key");
  if (api_key->publisher >= ctx.catalog->publishers.size()) return Unavailable(ctx.variant);
  const decision::Publisher& publisher = ctx.catalog->publishers[api_key->publisher];
  if (ctx.request.HasHeader("Origin") && !publisher.allowed_origins.empty() &&
      !publisher.AllowsOrigin(ctx.request.Header("Origin"))) {
    return Outcome{Error(401, "Origin not allowed for this API key",
                         {{"Origin", "Origin is not in the allowed origins of this API key"}}),
                   /*expose_to_origin=*/false};
  }
  if (publisher.rate_per_second > 0 && ctx.rate_limiter != nullptr) {
    int64_t wait = ctx.rate_limiter->Admit(publisher.id, publisher.rate_per_second,
                                           publisher.rate_burst, ctx.now_micros);
    if (wait > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", publisher.rate_per_second);
      http::Response response =
          Error(429, "Too many requests",
                {{"x-api-key", std::string("this key's publisher is limited to ") + rate +
                                   " requests per second (burst " +
                                   std::to_string(publisher.rate_burst) + ")"}});
      response.SetHeader("Retry-After", std::to_string((wait + 999'999) / 1'000'000));
      return Outcome{std::move(response)};
    }
  }
  return api_key;
}

// Test keys are served samples; their explanation replays what a live key would get, with a
// private RNG and without billing.
void ExplainReplay(const Context& ctx, const AdRequest& request,
                   decision::DecisionRequest decision_request, decision::Explanation* explain) {
  PrepareDecision(*ctx.hooks, AdUnitOf(request), decision_request);
  decision_request.explain = explain;
  decision::Rng rng(ctx.options.rng_seed);
  decision::Decide(decision_request, *ctx.catalog, *ctx.activity, rng);
}

std::optional<decision::Decision> Choose(const Context& ctx, const decision::ApiKey& key,
                                         const AdRequest& request,
                                         decision::Explanation* explain) {
  decision::DecisionRequest decision_request{
      .wallets = request.wallets,
      .format = request.format,
      .variant = ctx.variant,
      .publisher = &ctx.catalog->publishers[key.publisher],
      .now_seconds = ctx.now_seconds,
  };
  if (key.test) {
    if (explain != nullptr && ctx.hooks != nullptr) {
      ExplainReplay(ctx, request, decision_request, explain);
    }
    // Test keys get rotating sample ads without targeting (compatibility.md, Keys).
    uint64_t counter = ctx.sample_counter.fetch_add(1, std::memory_order_relaxed);
    return decision::SampleDecision(decision_request, *ctx.catalog, counter);
  }
  if (ctx.hooks != nullptr) PrepareDecision(*ctx.hooks, AdUnitOf(request), decision_request);
  decision_request.explain = explain;
  return decision::Decide(decision_request, *ctx.catalog, *ctx.activity, ctx.rng);
}

// The request being served on this thread, reused so that parsing allocates nothing once its
// vectors have grown. Requests on one thread run one after the other (Serve is not reentrant).
AdRequest& ThreadAdRequest() {
  thread_local AdRequest request;
  return request;
}

// Check order: key, Origin, Content-Type, body, wallet presence, decision. The body is parsed
// before the key is hashed (its errors still come after the key's and the Content-Type's), so
// that the wallet index starts loading where the request's wallets are (ActivityIndex::Prefetch)
// while the key is checked.
//
// Only bodies up to kEarlyParseBytes (a 50-wallet request is about 2.3 KB) are parsed before the
// key check, so a request with a made-up key still costs little to refuse.
Outcome ServeForKey(const Context& ctx, const decision::ApiKey& key, AdRequest& parsed, bool json,
                    bool early, Status body, ServedInfo& served);

Outcome Serve(const Context& ctx) {
  if (auto outcome = PrecheckKey(ctx)) return std::move(*outcome);
  const bool json = IsJsonContentType(ctx.request.Header("Content-Type"));
  const bool early = json && ctx.request.body.size() <= kEarlyParseBytes;
  AdRequest& parsed = ThreadAdRequest();
  Status body =
      early ? ParseAdRequest(ctx.request.body, ctx.variant, ctx.options, parsed) : OkStatus();
  if (early && body.ok()) ctx.activity->Prefetch(parsed.wallets);
  auto auth = Authenticate(ctx);
  if (auto* outcome = std::get_if<Outcome>(&auth)) return std::move(*outcome);
  const decision::ApiKey& key = *std::get<const decision::ApiKey*>(auth);
  ServedInfo served;
  Outcome outcome = ServeForKey(ctx, key, parsed, json, early, std::move(body), served);
  // Serving counters: every request a live key made (test keys write nothing).
  if (ctx.events != nullptr && !key.test) {
    const decision::Publisher& publisher = ctx.catalog->publishers[key.publisher];
    int status = outcome.response.status;
    events::ServeOutcome result = status == 200 ? events::ServeOutcome::kFill
                                  : status == 204 || (status == 404 && IsEarlier(ctx.variant))
                                      ? events::ServeOutcome::kNoFill
                                      : events::ServeOutcome::kError;
    bool parsed_ok = status != 400;
    std::optional<std::string_view> ad_unit = parsed_ok ? AdUnitOf(parsed) : std::nullopt;
    ctx.events->service->served().Count({.unix_seconds = ctx.now_seconds,
                                         .publisher_id = publisher.id,
                                         .ad_unit_id = ad_unit.value_or(std::string_view()),
                                         .campaign_id = served.campaign_id,
                                         .ad_id = served.ad_id,
                                         .arm = decision::ArmFor(publisher, ad_unit)},
                                        result, served.spend, served.invalid);
    if (ctx.metrics != nullptr && result == events::ServeOutcome::kFill) {
      ctx.metrics->CountImpression(served.invalid);
    }
  }
  return outcome;
}

// A live key's served ad: its decision id, the click URL sealed with it (the ad links through
// the click redirect), what `served` counts, and the exposure a CPA campaign remembers.
std::string SealServed(const Context& ctx, const decision::ApiKey& key, const AdRequest& parsed,
                       const decision::Decision& chosen, events::InvalidReason invalid,
                       ServedInfo& served) {
  const decision::Publisher& publisher = ctx.catalog->publishers[key.publisher];
  events::DecisionId id = events::NewDecisionId(ctx.now_micros / 1000);
  uint64_t person = ctx.events->service->PersonDigest(parsed.wallets);
  std::string_view arm = decision::ArmFor(publisher, AdUnitOf(parsed));
  served = {.campaign_id = chosen.campaign->id,
            .ad_id = chosen.ad->id,
            .spend = decision::ImpressionPrice(*chosen.campaign),
            .invalid = invalid};
  std::string click_url = ClickUrl(ctx, publisher, parsed, chosen, id, person, arm, served.invalid);
  // An invalid impression is answered like any other but bills nothing, counts toward no
  // cap or learned rate, and exposes no one (so no conversion is attributed to it).
  if (served.invalid != events::InvalidReason::kNone) served.spend = 0;
  // Campaigns billed on onchain conversions remember whom they were shown to.
  if (chosen.campaign->conversion && ctx.events->exposures != nullptr &&
      served.invalid == events::InvalidReason::kNone) {
    store::ExposureEntry exposure{
        .decision_id = id.bytes,
        .exposed_at = ctx.now_seconds,
        .ad_id = chosen.ad->id,
        .publisher_id = publisher.id,
        .person = person,
        .arm = std::string(arm.substr(0, store::kMaxExposureArmBytes)),
        .ad_unit_id = std::string(AdUnitOf(parsed)
                                      .value_or(std::string_view())
                                      .substr(0, store::kMaxExposureAdUnitBytes))};
    ctx.events->exposures->Record(chosen.campaign->id, exposure, parsed.wallets);
  }
  return click_url;
}

Outcome ServeForKey(const Context& ctx, const decision::ApiKey& key, AdRequest& parsed, bool json,
                    bool early, Status body, ServedInfo& served) {
  if (!json) {
    return {Error(400, "Unsupported Content-Type",
                  {{"Content-Type", "Content-Type must be application/json"}})};
  }
  if (!early) body = ParseAdRequest(ctx.request.body, ctx.variant, ctx.options, parsed);
  if (!body.ok()) return {Error(400, body.message(), body.details())};
  // The identity cookie is only for the publisher's own pages (issue 39): a browser request
  // from an origin the publisher has not listed (any origin when it lists none, `null` too) is
  // answered as if the visitor had not consented, so no other site can learn what the
  // visitor's identity is shown. A listed origin got this far (Authenticate); requests without
  // an Origin come from servers, which hold the cookie only if the visitor gave it to them.
  if (parsed.cookie_consent && ctx.request.HasHeader("Origin") &&
      ctx.catalog->publishers[key.publisher].allowed_origins.empty()) {
    parsed.cookie_consent = false;
  }
  IdentityOutcome identity =
      ResolveIdentity(ctx.identity, ctx.request, parsed, key.test, ctx.now_seconds);
  if (identity.no_fill) {
    if (ctx.no_fill) *ctx.no_fill = NoFillReason::kNoIdentity;
    return {NoFill(ctx.variant)};
  }
  if (auto response = CheckWalletPresence(parsed)) return {std::move(*response)};
  decision::Explanation explanation;
  const ExplainScope explain_scope = ctx.hooks != nullptr
                                         ? ExplainAllowed(*ctx.hooks, ctx.request, key.test)
                                         : ExplainScope::kNone;
  const bool explain = explain_scope != ExplainScope::kNone;
  std::optional<decision::Decision> decision =
      Choose(ctx, key, parsed, explain ? &explanation : nullptr);
  // Invalid-traffic checks of the impression (live keys with events on): an invalid one is
  // answered like any other but bills nothing.
  events::InvalidReason invalid = events::InvalidReason::kNone;
  if (decision && decision->ad != nullptr && decision->campaign != nullptr &&
      ctx.events != nullptr && !key.test) {
    invalid = CheckImpression(ctx.events->traffic, ctx.request, parsed.wallets,
                              ctx.catalog->publishers[key.publisher].id, ctx.now_seconds);
  }
  Outcome outcome;
  if (!decision || decision->ad == nullptr || decision->campaign == nullptr ||
      // Cluster mode: a billable impression is paid from this node's budget lease first; when
      // another request took the last of it, no ad (never an impression past the budget).
      (ctx.hooks != nullptr && !key.test && invalid == events::InvalidReason::kNone &&
       !AuthorizeServed(*ctx.hooks, *decision))) {
    if (ctx.no_fill) *ctx.no_fill = NoFillReason::kNoEligibleAd;
    outcome = {parsed.bound_local_id ? NoAdEarlier(*parsed.bound_local_id) : NoFill(ctx.variant)};
  } else {
    // Live keys' ads link through the click redirect; test keys keep the ad's own URL.
    std::string click_url;
    if (ctx.events != nullptr && !key.test) {
      click_url = SealServed(ctx, key, parsed, *decision, invalid, served);
    }
    outcome = {JsonResponse(200, AdResponseBody(parsed, *decision, click_url))};
    // Billable: a valid 200 served by a live key (test keys never touch budgets).
    if (ctx.hooks != nullptr && !key.test && invalid == events::InvalidReason::kNone) {
      RecordServed(*ctx.hooks, *decision, parsed.wallets, ctx.now_seconds);
    }
  }
  if (explain) {
    outcome.response.SetHeader(
        kExplainHeader,
        ExplanationJson(explanation, false, explain_scope == ExplainScope::kOperator));
  }
  for (const std::string& cookie : identity.set_cookies) {
    outcome.response.SetHeader("Set-Cookie", cookie);
  }
  return outcome;
}

// Per-request failures are rare faults (a broken snapshot), so each one is logged.
void LogFailure(std::string_view what) { ADS_LOG(error, "ad request failed", "error", what); }

// Per-thread tie-break RNG; thread i (in order of first use) is seeded with seed + i.
decision::Rng& ThreadRng(uint64_t seed) {
  static std::atomic<uint64_t> next_thread{0};
  thread_local decision::Rng rng(seed + next_thread.fetch_add(1, std::memory_order_relaxed));
  return rng;
}

http::Response WithCors(Outcome outcome, const http::Request& request, Variant variant) {
  AddCors(outcome.response, request, variant, outcome.expose_to_origin);
  return std::move(outcome.response);
}

// The answer while the server sheds load (http::ServerOptions::shed_after): the variant's
// server-fault status (503 current, 500 earlier, spec section 7) with Retry-After, and CORS so a
// browser SDK can read it and show its fallback.
http::Response Overloaded(const http::Request& request, Variant variant) {
  Outcome outcome{Error(IsEarlier(variant) ? 500 : 503,
                        IsEarlier(variant) ? "Internal server error" : "Serving unavailable",
                        {{"request", "the server is overloaded; retry after 1 s"}})};
  outcome.response.SetHeader("Retry-After", "1");
  return WithCors(std::move(outcome), request, variant);
}

// `literal` (pre-escaped by Catalog::BuildIndexes) or, for a catalog built without it, `text`
// escaped now.
void AppendLiteral(std::string& out, const std::string& literal, std::string_view text) {
  if (!literal.empty()) {
    out += literal;
  } else {
    AppendJsonString(out, text);
  }
}

}  // namespace

// Written field by field from the catalog's pre-escaped literals: only the wallet, adUnitId and
// localId (request data) are escaped per request.
std::string AdResponseBody(const AdRequest& request, const decision::Decision& decision,
                           std::string_view click_url) {
  // string_view literals: appending a `const char*` makes std::string::append call strlen.
  using namespace std::string_view_literals;
  const decision::Ad& ad = *decision.ad;
  const decision::Community* community = decision.community;
  bool earlier = IsEarlier(request.variant);
  const auto f = static_cast<size_t>(request.format);
  const bool has_image = request.format != ImageFormat::kNoImage && !ad.images[f].empty();
  std::string body;
  body.reserve(256 + ad.json.headline.size() + ad.json.content.size() + ad.json.cta_url.size() +
               ad.json.cta_label.size() + (has_image ? ad.json.images[f].size() : 0) +
               (community ? community->json_name.size() + community->json_logo_url.size() : 0) +
               (request.ad_unit_id ? request.ad_unit_id->size() : 0) + click_url.size());
  body += '{';
  if (earlier) {
    size_t matched =
        decision.matched_wallet < request.wallet_texts.size() ? decision.matched_wallet : 0;
    body += "\"walletAddress\":"sv;
    AppendJsonString(body, request.wallet_texts[matched]);
    body += ',';
  }
  // Ids are decimal digits: nothing to escape.
  body += "\"campaignId\":\""sv;
  body += decision.campaign->id_str;
  body += "\",\"adId\":\""sv;
  body += ad.id_str;
  body += "\",\"headline\":"sv;
  AppendLiteral(body, ad.json.headline, ad.headline);
  body += ",\"content\":"sv;
  AppendLiteral(body, ad.json.content, ad.content);
  body += ",\"ctaUrl\":"sv;
  if (!click_url.empty()) {
    AppendJsonString(body, click_url);
  } else {
    AppendLiteral(body, ad.json.cta_url, ad.cta_url);
  }
  body += ",\"ctaLabel\":"sv;
  AppendLiteral(body, ad.json.cta_label, ad.cta_label);
  body += ",\"imageUrl\":"sv;
  if (has_image) {
    AppendLiteral(body, ad.json.images[f], ad.images[f]);
  } else {
    body += earlier ? "\"\""sv : "null"sv;
  }
  body += ",\"communityName\":"sv;
  if (community != nullptr) {
    AppendLiteral(body, community->json_name, community->name);
  } else {
    body += "\"\""sv;
  }
  body += ",\"communityLogo\":"sv;
  if (community != nullptr) {
    AppendLiteral(body, community->json_logo_url, community->logo_url);
  } else {
    body += "\"\""sv;
  }
  body += ",\"imageFormat\":\""sv;
  body += ImageFormatName(request.format);
  body += '"';
  if (!earlier && request.ad_unit_id) {
    body += ",\"adUnitId\":"sv;
    AppendJsonString(body, *request.ad_unit_id);
  }
  if (earlier && request.bound_local_id) {
    body += ",\"localId\":"sv;
    AppendJsonString(body, *request.bound_local_id);
  }
  body += '}';
  return body;
}

AdHandler::AdHandler(const Published<decision::Catalog>& catalogs,
                     const Published<decision::ActivityIndex>& activity, const Clock& clock,
                     const ServeOptions& options, const identity::IdentityService* identity)
    : catalogs_(catalogs),
      activity_(activity),
      clock_(clock),
      options_(options),
      identity_(identity) {}

void AdHandler::RegisterRoutes(http::Router& router) const {
  http::RouteOptions route{.dispatch = http::Dispatch::kInline, .max_body_bytes = kMaxBodyBytes};
  struct Endpoint {
    std::string_view path;
    Variant variant;
  };
  for (Endpoint e :
       {Endpoint{"/v1/ads", Variant::kCurrent}, Endpoint{"/api/ads", Variant::kEarlier}}) {
    Variant variant = e.variant;
    http::RouteOptions post = route;
    post.overloaded = [variant](const http::Request& request) {
      return Overloaded(request, variant);
    };
    router.Add(
        http::Method::kPost, std::string(e.path),
        [this, variant](const http::Request& request) { return Handle(request, variant); }, post);
    router.Add(
        http::Method::kOptions, std::string(e.path),
        [this, variant](const http::Request& request) { return Preflight(request, variant); },
        route);
  }
}

http::Response AdHandler::Handle(const http::Request& request, Variant variant) const {
  std::shared_ptr<const decision::Catalog> catalog;
  std::shared_ptr<const decision::ActivityIndex> activity;
  try {
    catalog = catalogs_.Current();
    activity = activity_.Current();
  } catch (const std::exception& e) {
    LogFailure(e.what());
    return WithCors(Unavailable(variant), request, variant);
  }
  int64_t now_micros = clock_.NowMicros();
  return HandleAt(request, variant, catalog.get(), activity.get(), now_micros,
                  ThreadRng(options_.rng_seed));
}

void AdHandler::SetEvents(events::EventsService* events, std::string_view public_url,
                          events::ExposureRecorder* exposures) {
  if (events == nullptr) {
    events_.store(nullptr, std::memory_order_release);
    return;
  }
  std::string prefix(public_url);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  prefix += "/v1/click/";
  event_hooks_.push_back(std::make_unique<EventHooks>(EventHooks{.service = events,
                                                                 .traffic = traffic_,
                                                                 .exposures = exposures,
                                                                 .click_prefix = std::move(prefix)}));
  events_.store(event_hooks_.back().get(), std::memory_order_release);
}

http::Response AdHandler::HandleWith(const http::Request& request, Variant variant,
                                     const decision::Catalog* catalog,
                                     const decision::ActivityIndex* activity, int64_t now_seconds,
                                     decision::Rng& rng) const {
  return HandleAt(request, variant, catalog, activity, now_seconds * 1'000'000, rng);
}

http::Response AdHandler::HandleAt(const http::Request& request, Variant variant,
                                   const decision::Catalog* catalog,
                                   const decision::ActivityIndex* activity, int64_t now_micros,
                                   decision::Rng& rng) const {
  int64_t now_seconds =
      now_micros >= 0 ? now_micros / 1'000'000 : (now_micros - 999'999) / 1'000'000;
  Context ctx{request, variant,  catalog,         activity, now_seconds,
              rng,     options_, sample_counter_, identity_};
  ctx.hooks = hooks_;
  ctx.events = events_.load(std::memory_order_acquire);
  ctx.rate_limiter = &rate_limiter_;
  ctx.now_micros = now_micros;
  NoFillReason no_fill = NoFillReason::kNone;
  ctx.metrics = &metrics_;
  ctx.no_fill = &no_fill;
  Outcome outcome;
  try {
    outcome = Serve(ctx);
  } catch (const std::exception& e) {
    LogFailure(e.what());
    outcome = Unavailable(variant);
  } catch (...) {
    LogFailure("unknown exception");
    outcome = Unavailable(variant);
  }
  metrics_.CountAnswer(variant, outcome.response.status, no_fill);
  return WithCors(std::move(outcome), request, variant);
}

http::Response AdHandler::Preflight(const http::Request& request, Variant variant) const {
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  if (IsEarlier(variant)) {
    response.SetHeader("Access-Control-Allow-Origin", "*");
  } else {
    // Browsers send no key on a preflight, so the publisher's origin list cannot apply here;
    // the actual request is checked.
    if (request.HasHeader("Origin")) {
      response.SetHeader("Access-Control-Allow-Origin", request.Header("Origin"));
      response.SetHeader("Access-Control-Allow-Credentials", "true");
    }
    response.SetHeader("Vary", "Origin");
  }
  response.SetHeader("Access-Control-Allow-Methods", "POST");
  response.SetHeader("Access-Control-Allow-Headers", "content-type, x-api-key");
  response.SetHeader("Access-Control-Max-Age", std::to_string(options_.cors_max_age_seconds));
  return response;
}

}  // namespace adserver::serve
