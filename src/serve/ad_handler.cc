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
#include "common/log.h"
#include "serve/ad_request.h"
#include "serve/ad_response.h"

namespace adserver::serve {
namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;
// Bodies parsed before the key is checked (see Serve); larger ones are parsed after it.
constexpr size_t kEarlyParseBytes = 8 * 1024;
constexpr std::string_view kKeyPrefix = "spk_";
constexpr size_t kKeyLength = 34;

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

// A handler outcome, whether CORS may expose it to the calling origin, and why it served no ad.
struct Outcome {
  http::Response response;
  bool expose_to_origin = true;
  NoFillReason no_fill = NoFillReason::kNone;
};

Outcome KeyError(Variant variant, std::string message) {
  return {ErrorAnswer(401, IsEarlier(variant) ? "Invalid API key" : "Invalid or missing API key",
                      {FieldError{"x-api-key", std::move(message)}})};
}

Outcome Unavailable(Variant variant) {
  return IsEarlier(variant) ? Outcome{ErrorAnswer(500, "Internal server error")}
                            : Outcome{ErrorAnswer(503, "Serving unavailable")};
}

// One request on its way through the handler.
struct Context {
  const http::Request& request;
  Variant variant;
  const decision::Catalog* catalog;         // null: serving is not ready
  const decision::ActivityIndex* activity;  // null: serving is not ready
  int64_t now_micros;
  int64_t now_seconds;
  decision::Rng& rng;
  const ServeOptions& options;
  const AdPipeline& pipeline;
  RateLimiter& rate_limiter;
  AdMetrics& metrics;
};

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

// Looks the key up, checks the Origin against the key's publisher and applies the publisher's
// rate limit. Returns the key, or the response that ends the request. REQUIRES: PrecheckKey
// passed.
std::variant<const decision::ApiKey*, Outcome> Authenticate(const Context& ctx) {
  const decision::ApiKey* api_key = FindKey(*ctx.catalog, ctx.request.Header("x-api-key"));
  if (api_key == nullptr) return KeyError(ctx.variant, "x-api-key is not an active API key");
  if (api_key->publisher >= ctx.catalog->publishers.size()) return Unavailable(ctx.variant);
  const decision::Publisher& publisher = ctx.catalog->publishers[api_key->publisher];
  if (ctx.request.HasHeader("Origin") && !publisher.allowed_origins.empty() &&
      !publisher.AllowsOrigin(ctx.request.Header("Origin"))) {
    return Outcome{ErrorAnswer(401, "Origin not allowed for this API key",
                               {{"Origin", "Origin is not in the allowed origins of this API key"}}),
                   /*expose_to_origin=*/false};
  }
  if (publisher.rate_per_second > 0) {
    int64_t wait = ctx.rate_limiter.Admit(publisher.id, publisher.rate_per_second,
                                          publisher.rate_burst, ctx.now_micros);
    if (wait > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", publisher.rate_per_second);
      http::Response response =
          ErrorAnswer(429, "Too many requests",
                      {{"x-api-key", std::string("this key's publisher is limited to ") + rate +
                                         " requests per second (burst " +
                                         std::to_string(publisher.rate_burst) + ")"}});
      response.SetHeader("Retry-After", std::to_string((wait + 999'999) / 1'000'000));
      return Outcome{std::move(response)};
    }
  }
  return api_key;
}

// The request being served on this thread, reused so that parsing allocates nothing once its
// vectors have grown. Requests on one thread run one after the other (Serve is not reentrant).
AdRequest& ThreadAdRequest() {
  thread_local AdRequest request;
  return request;
}

// An accepted key's request: its Content-Type and body, then the pipeline.
AdAnswer ServeForKey(const Context& ctx, const AdInput& input, AdRequest& parsed, bool json,
                     bool early, Status body) {
  if (!json) {
    return {.response = ErrorAnswer(400, "Unsupported Content-Type",
                                    {{"Content-Type", "Content-Type must be application/json"}})};
  }
  if (!early) body = ParseAdRequest(ctx.request.body, ctx.variant, ctx.options, parsed);
  if (!body.ok()) return {.response = ErrorAnswer(400, body.message(), body.details())};
  return ctx.pipeline.Run(input, parsed);
}

// Check order: key, Origin, Content-Type, body, wallet presence, decision. The body is parsed
// before the key is hashed (its errors still come after the key's and the Content-Type's), so
// that the wallet index starts loading where the request's wallets are (ActivityIndex::Prefetch)
// while the key is checked.
//
// Only bodies up to kEarlyParseBytes (a 50-wallet request is about 2.3 KB) are parsed before the
// key check, so a request with a made-up key still costs little to refuse.
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
  const AdInput input{.http = ctx.request,
                      .key = key,
                      .publisher = ctx.catalog->publishers[key.publisher],
                      .catalog = *ctx.catalog,
                      .activity = *ctx.activity,
                      .now_micros = ctx.now_micros,
                      .now_seconds = ctx.now_seconds,
                      .rng = ctx.rng};
  AdAnswer answer = ServeForKey(ctx, input, parsed, json, early, std::move(body));
  // Serving counters: every request a live key made (test keys write nothing).
  if (!key.test) {
    const int status = answer.response.status;
    std::optional<std::string_view> ad_unit;
    if (status != 400) ad_unit = parsed.ad_unit();
    ctx.pipeline.Count(input, ctx.variant, ad_unit, status, answer.served);
    if (status == 200) ctx.metrics.CountImpression(answer.served.invalid);
  }
  return {.response = std::move(answer.response), .no_fill = answer.no_fill};
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
  Outcome outcome{ErrorAnswer(IsEarlier(variant) ? 500 : 503,
                        IsEarlier(variant) ? "Internal server error" : "Serving unavailable",
                        {{"request", "the server is overloaded; retry after 1 s"}})};
  outcome.response.SetHeader("Retry-After", "1");
  return WithCors(std::move(outcome), request, variant);
}

}  // namespace

AdHandler::AdHandler(const Published<decision::Catalog>& catalogs,
                     const Published<decision::ActivityIndex>& activity, const Clock& clock,
                     const ServeOptions& options, const identity::IdentityService* identity)
    : catalogs_(catalogs), activity_(activity), clock_(clock), options_(options) {
  AdPorts ports;
  if (identity != nullptr) {
    identity_port_ = std::make_unique<ServiceIdentity>(*identity);
    ports.identity = identity_port_.get();
  }
  SetPorts(ports);
}

void AdHandler::SetPorts(AdPorts ports) {
  pipelines_.push_back(std::make_unique<AdPipeline>(ports, options_.rng_seed, sample_counter_));
  pipeline_.store(pipelines_.back().get(), std::memory_order_release);
}

void AdHandler::SetDecisionHooks(const DecisionHooks* hooks) {
  AdPorts ports = pipeline_.load(std::memory_order_acquire)->ports();
  if (hooks == nullptr) {
    ports.budgets = &NoBudgets();
  } else {
    budget_ports_.push_back(std::make_unique<LiveBudgets>(*hooks));
    ports.budgets = budget_ports_.back().get();
  }
  SetPorts(ports);
}

void AdHandler::SetEvents(events::EventsService* events, std::string_view public_url,
                          events::ExposureRecorder* exposures) {
  AdPorts ports = pipeline_.load(std::memory_order_acquire)->ports();
  if (events == nullptr) {
    ports.impressions = &NoImpressions();
  } else {
    impression_ports_.push_back(
        std::make_unique<EventsImpressions>(*events, public_url, traffic_, exposures));
    ports.impressions = impression_ports_.back().get();
  }
  SetPorts(ports);
}

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
  Context ctx{.request = request,
              .variant = variant,
              .catalog = catalog,
              .activity = activity,
              .now_micros = now_micros,
              .now_seconds = now_seconds,
              .rng = rng,
              .options = options_,
              .pipeline = *pipeline_.load(std::memory_order_acquire),
              .rate_limiter = rate_limiter_,
              .metrics = metrics_};
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
  metrics_.CountAnswer(variant, outcome.response.status, outcome.no_fill);
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
