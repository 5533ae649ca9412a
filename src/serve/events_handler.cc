#include "serve/events_handler.h"

#include <simdjson.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>

#include "common/crypto.h"
#include "common/log.h"
#include "events/decision_id.h"
#include "serve/identity_binding.h"

namespace adserver::serve {
namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;
constexpr size_t kMaxWallets = 50;
// Event names as advertiser SDKs send them (issue 37: `capture(name)` accepts any non-empty
// string, e.g. "first-visit"): up to 256 bytes of UTF-8 without control characters.
constexpr size_t kMaxNameBytes = 256;
// Per-element wallet errors reported before scanning stops (bounded work on junk input).
constexpr size_t kMaxWalletElementErrors = 10;
constexpr std::string_view kKeyPrefix = "sak_";
constexpr size_t kKeyLength = 34;
// Identity cookie values opened per request at most (as /v1/ads).
constexpr int kMaxCookieValuesOpened = 4;

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// "sak_" + exactly 30 characters of [A-Za-z0-9].
bool IsWellFormedKey(std::string_view key) {
  if (key.size() != kKeyLength || !key.starts_with(kKeyPrefix)) return false;
  return std::all_of(key.begin() + kKeyPrefix.size(), key.end(), IsAlnum);
}

// Why `name` cannot be an event name, or empty when it can. The document's UTF-8 was checked
// by the parser (simdjson), so C1 controls (U+0080-U+009F) are the two-byte sequences 0xC2
// 0x80-0x9F.
std::string_view EventNameProblem(std::string_view name) {
  if (name.empty()) return "event.name must not be empty";
  if (name.size() > kMaxNameBytes) return "event.name must be at most 256 bytes";
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    bool c1 = c == 0xC2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(name[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1) return "event.name must not contain control characters";
  }
  return {};
}

// application/json, media type case-insensitive, any parameters.
bool IsJsonContentType(std::string_view value) {
  value = value.substr(0, value.find(';'));
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  constexpr std::string_view kJson = "application/json";
  if (value.size() != kJson.size()) return false;
  for (size_t i = 0; i < value.size(); ++i) {
    if (AsciiLower(value[i]) != kJson[i]) return false;
  }
  return true;
}

// This endpoint's own answer shape: {"success":true}, or {"success":false,"error":...} with
// the spec's `details` array.
http::Response Answer(int status, std::string_view error = {},
                      const std::vector<FieldError>& details = {}) {
  http::Response response;
  response.status = status;
  response.SetHeader("Cache-Control", "no-store");
  response.SetHeader("Content-Type", "application/json; charset=utf-8");
  if (status == 200) {
    response.body = R"({"success":true})";
    return response;
  }
  // {"error":...,"details":[...]} with "success":false in front.
  std::string body = http::ErrorBody(error, details);
  response.body = R"({"success":false,)" + body.substr(1);
  return response;
}

http::Response KeyError(std::string message) {
  return Answer(401, "Invalid or missing API key", {{"x-api-key", std::move(message)}});
}

void AddCors(http::Response& response, const http::Request& request) {
  if (request.HasHeader("Origin")) {
    response.SetHeader("Access-Control-Allow-Origin", request.Header("Origin"));
    response.SetHeader("Access-Control-Allow-Credentials", "true");
  }
  response.SetHeader("Vary", "Origin");
}

std::string WalletField(size_t i) { return "walletAddresses[" + std::to_string(i) + "]"; }

void ParseWallets(simdjson::dom::element value, EventRequest& out,
                  std::vector<FieldError>& errors) {
  if (value.is_null()) return;
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    errors.push_back({"walletAddresses", "must be an array of strings"});
    return;
  }
  size_t element_errors = 0;
  size_t i = 0;
  for (simdjson::dom::element element : array) {
    std::string_view text;
    std::optional<Address> address;
    if (element.get_string().get(text) == simdjson::SUCCESS) address = ParseAddress(text);
    if (!address) {
      errors.push_back({WalletField(i), WalletField(i) + " is not a valid EVM address (0x "
                                                         "followed by 40 hex characters)"});
      if (++element_errors == kMaxWalletElementErrors) return;
    } else if (std::find(out.wallets.begin(), out.wallets.end(), *address) == out.wallets.end()) {
      if (out.wallets.size() == kMaxWallets) {
        errors.push_back({"walletAddresses", "at most 50 distinct addresses are allowed"});
        return;
      }
      out.wallets.push_back(*address);
    }
    ++i;
  }
}

void ParseEvent(std::optional<simdjson::dom::element> value, size_t max_url_bytes,
                EventRequest& out, std::vector<FieldError>& errors) {
  simdjson::dom::object event;
  if (!value || value->get_object().get(event) != simdjson::SUCCESS) {
    errors.push_back({"event", "event is required: an object with name and optional url"});
    return;
  }
  simdjson::dom::element name;
  std::string_view text;
  if (event["name"].get(name) != simdjson::SUCCESS ||
      name.get_string().get(text) != simdjson::SUCCESS) {
    errors.push_back({"event.name", "event.name must be a string"});
  } else if (std::string_view problem = EventNameProblem(text); !problem.empty()) {
    errors.push_back({"event.name", std::string(problem)});
  } else {
    out.name = text;
  }
  simdjson::dom::element url;
  if (event["url"].get(url) != simdjson::SUCCESS || url.is_null()) return;
  if (url.get_string().get(text) != simdjson::SUCCESS) {
    errors.push_back({"event.url", "event.url must be a string or null"});
  } else if (text.size() > max_url_bytes) {
    errors.push_back(
        {"event.url", "event.url must be at most " + std::to_string(max_url_bytes) + " bytes"});
  } else {
    out.url.emplace(text);
  }
}

// The wallets the identity cookie links to (cookieConsent true only; never set here).
std::vector<Address> CookieWallets(const identity::IdentityService& identity,
                                   const http::Request& request, int64_t now) {
  int tried = 0;
  for (std::string_view name : {std::string_view(identity.options().cookie_name),
                                std::string_view(identity.twin_cookie_name())}) {
    for (std::string_view value : CookieValues(request, name)) {
      if (++tried > kMaxCookieValuesOpened) return {};
      auto opened = identity.Open(identity::TokenKind::kCookie, value, now);
      if (!opened) continue;
      std::vector<Address> wallets;
      for (const identity::WalletLink& link : opened->token.wallets.view()) {
        wallets.push_back(link.wallet);
      }
      return wallets;
    }
  }
  return {};
}

}  // namespace

Result<EventRequest> ParseEventRequest(std::string_view body, size_t max_url_bytes) {
  auto malformed = [](std::string message) {
    return InvalidArgumentError("Malformed JSON body", {FieldError{"body", std::move(message)}});
  };
  if (body.empty()) return malformed("body is empty; expected a JSON object");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) {
    return malformed("body is not valid JSON");
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return malformed("body must be a JSON object");
  }
  std::optional<simdjson::dom::element> event, wallets, consent;
  for (simdjson::dom::key_value_pair field : object) {  // the last duplicate wins
    if (field.key == "event") event = field.value;
    if (field.key == "walletAddresses") wallets = field.value;
    if (field.key == "cookieConsent") consent = field.value;
  }
  EventRequest out;
  std::vector<FieldError> errors;
  ParseEvent(event, max_url_bytes, out, errors);
  if (wallets) ParseWallets(*wallets, out, errors);
  if (consent && !consent->is_null() &&
      consent->get_bool().get(out.cookie_consent) != simdjson::SUCCESS) {
    errors.push_back({"cookieConsent", "cookieConsent must be a boolean"});
  }
  if (!errors.empty()) return InvalidArgumentError("Invalid request", std::move(errors));
  return out;
}

std::optional<std::array<uint8_t, 16>> SpclidOf(std::string_view url) {
  size_t q = url.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = url.substr(q + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (!pair.starts_with("spclid=")) continue;
    std::optional<events::DecisionId> id = events::DecisionId::Parse(pair.substr(7));
    if (!id) return std::nullopt;
    return id->bytes;
  }
  return std::nullopt;
}

EventsHandler::EventsHandler(const Published<decision::Catalog>& catalogs,
                             const events::AdvertiserEventLog& log, PersonDigestFn person_digest, const Clock& clock,
                             const identity::IdentityService* identity,
                             AdvertiserEventsOptions options, TrafficGuard traffic)
    : catalogs_(catalogs),
      log_(log),
      person_digest_(std::move(person_digest)),
      clock_(clock),
      identity_(identity),
      options_(options),
      traffic_(traffic) {}

void EventsHandler::RegisterRoutes(http::Router& router) const {
  http::RouteOptions route{.dispatch = http::Dispatch::kWorker, .max_body_bytes = kMaxBodyBytes};
  router.Add(
      http::Method::kPost, "/v1/events",
      [this](const http::Request& request) { return Handle(request); }, route);
  router.Add(
      http::Method::kOptions, "/v1/events",
      [this](const http::Request& request) { return Preflight(request); }, route);
}

http::Response EventsHandler::Handle(const http::Request& request) const {
  http::Response response;
  try {
    std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
    response = HandleWith(request, catalog.get(), clock_.NowSeconds());
  } catch (const std::exception& e) {
    ADS_LOG(error, "advertiser event failed", "error", e.what());
    response = Answer(500, "Internal server error");
    AddCors(response, request);
  }
  return response;
}

// Check order: key, Content-Type, body, identity; then the event is stored (live keys).
http::Response EventsHandler::HandleWith(const http::Request& request,
                                         const decision::Catalog* catalog, int64_t now) const {
  http::Response response = [&]() -> http::Response {
    std::string_view key = request.Header("x-api-key");
    if (key.empty()) return KeyError("x-api-key header is required");
    if (!IsWellFormedKey(key)) {
      return KeyError(
          "x-api-key must be an advertiser key: sak_ followed by 30 letters or "
          "digits");
    }
    if (catalog == nullptr) return Answer(503, "Serving unavailable");
    const decision::AdvertiserKey* api_key = catalog->FindAdvertiserKey(Sha256(key));
    if (api_key == nullptr) return KeyError("x-api-key is not an active advertiser key");
    if (!IsJsonContentType(request.Header("Content-Type"))) {
      return Answer(400, "Unsupported Content-Type",
                    {{"Content-Type", "Content-Type must be application/json"}});
    }
    Result<EventRequest> event = ParseEventRequest(request.body, options_.max_url_bytes);
    if (!event.ok()) return Answer(400, event.status().message(), event.status().details());
    std::vector<Address> wallets = event->wallets;
    if (wallets.empty() && event->cookie_consent && identity_ != nullptr) {
      wallets = CookieWallets(*identity_, request, now);
    }
    if (wallets.empty()) {
      return Answer(400, "No user identity is available",
                    {{"walletAddresses",
                      "send walletAddresses, or the identity cookie with cookieConsent true"}});
    }
    if (api_key->test) return Answer(200);  // test keys write nothing
    return Record(request, *api_key, *event, wallets, now);
  }();
  AddCors(response, request);
  return response;
}

http::Response EventsHandler::Record(const http::Request& request,
                                     const decision::AdvertiserKey& key, const EventRequest& event,
                                     std::span<const Address> wallets, int64_t now) const {
  events::AdvertiserEvent row{.community_id = key.community_id,
                              .key_id = key.id,
                              .name = event.name,
                              .url = event.url,
                              .person = person_digest_(wallets),
                              .created_at = now};
  if (event.url) row.decision_id = SpclidOf(*event.url);
  if (traffic_.checks != nullptr) {
    std::optional<IpAddress> ip = ParseIp(request.remote_ip);
    if (traffic_.proxies != nullptr) ip = http::ClientIp(request, *traffic_.proxies);
    row.invalid = traffic_.checks->CheckEvent({.user_agent = request.Header("User-Agent"),
                                               .ip = ip,
                                               .person = row.person,
                                               .now_seconds = now});
  }
  Status stored = log_.Record(row);
  counts_.Add(stored.ok() ? static_cast<size_t>(row.invalid) : events::kInvalidReasons);
  if (!stored.ok()) {
    ADS_LOG(warn, "advertiser event not stored", "status", stored);
    http::Response response =
        Answer(503, "Event not recorded, try again", {{"event", "the event store is unavailable"}});
    response.SetHeader("Retry-After", "1");
    return response;
  }
  return Answer(200);
}

void EventsHandler::AppendMetrics(MetricsText& m) const {
  m.Family("adserver_advertiser_events_total", "counter",
           "Advertiser events (POST /v1/events) stored, by validity: valid, or invalid with the "
           "reason; not_stored: answered 503.");
  for (size_t i = 0; i < events::kInvalidReasons; ++i) {
    auto reason = static_cast<events::InvalidReason>(i);
    if (reason == events::InvalidReason::kInvalidImpression ||
        reason == events::InvalidReason::kWalletRate ||
        reason == events::InvalidReason::kWalletPublishers) {
      continue;  // not checked for events
    }
    m.Sample("adserver_advertiser_events_total",
             {{"validity", i == 0 ? "valid" : "invalid"},
              {"reason", i == 0 ? std::string_view("") : events::InvalidReasonName(reason)}},
             counts_.Sum(i));
  }
  m.Sample("adserver_advertiser_events_total", {{"validity", "not_stored"}, {"reason", ""}},
           counts_.Sum(events::kInvalidReasons));
}

http::Response EventsHandler::Preflight(const http::Request& request) const {
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  AddCors(response, request);
  response.SetHeader("Access-Control-Allow-Methods", "POST");
  response.SetHeader("Access-Control-Allow-Headers", "content-type, x-api-key");
  response.SetHeader("Access-Control-Max-Age", std::to_string(options_.cors_max_age_seconds));
  return response;
}

}  // namespace adserver::serve
