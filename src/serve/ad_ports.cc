#include "serve/ad_ports.h"

#include <optional>
#include <string_view>
#include <utility>

#include "common/ip_address.h"
#include "events/click_token.h"
#include "events/decision_id.h"
#include "http/client_ip.h"
#include "serve/ad_response.h"

namespace adserver::serve {
namespace {

class NoIdentityPort final : public IdentityPort {
 public:
  IdentityOutcome Resolve(const http::Request&, AdRequest&, bool, int64_t) const override {
    return {};
  }
};

class NoBudgetGate final : public BudgetGate {
 public:
  void Prepare(decision::DecisionRequest&) const override {}
  bool Authorize(const decision::Decision&) const override { return true; }
  void Record(const decision::Decision&, std::span<const Address>, int64_t) const override {}
  ExplainScope Explain(const http::Request&, bool) const override { return ExplainScope::kNone; }
};

class NoImpressionRecorder final : public ImpressionRecorder {
 public:
  events::InvalidReason Check(const http::Request&, std::span<const Address>, int64_t,
                              int64_t) const override {
    return events::InvalidReason::kNone;
  }
  std::string Seal(const ServedAd&) const override { return {}; }
  void Count(const events::ServedKey&, events::ServeOutcome, const ServedInfo&) const override {}
};

}  // namespace

const IdentityPort& NoIdentity() {
  static const NoIdentityPort port;
  return port;
}

const BudgetGate& NoBudgets() {
  static const NoBudgetGate gate;
  return gate;
}

const ImpressionRecorder& NoImpressions() {
  static const NoImpressionRecorder recorder;
  return recorder;
}

IdentityOutcome ServiceIdentity::Resolve(const http::Request& http, AdRequest& request,
                                         bool test_key, int64_t now_seconds) const {
  return ResolveIdentity(&service_, http, request, test_key, now_seconds);
}

void LiveBudgets::Prepare(decision::DecisionRequest& request) const {
  PrepareDecision(hooks_, request.ad_unit_id, request);
}

bool LiveBudgets::Authorize(const decision::Decision& decision) const {
  return AuthorizeServed(hooks_, decision);
}

void LiveBudgets::Record(const decision::Decision& decision, std::span<const Address> wallets,
                         int64_t now_seconds) const {
  RecordServed(hooks_, decision, wallets, now_seconds);
}

ExplainScope LiveBudgets::Explain(const http::Request& request, bool test_key) const {
  return ExplainAllowed(hooks_, request, test_key);
}

EventsImpressions::EventsImpressions(events::EventsService& events, std::string_view public_url,
                                     TrafficGuard traffic, events::ExposureRecorder* exposures)
    : events_(events), click_prefix_(public_url), traffic_(traffic), exposures_(exposures) {
  while (!click_prefix_.empty() && click_prefix_.back() == '/') click_prefix_.pop_back();
  click_prefix_ += "/v1/click/";
}

// A browser's request (it sent an Origin) is checked for its user agent and address, every
// request for its wallets (issue 18).
events::InvalidReason EventsImpressions::Check(const http::Request& http,
                                               std::span<const Address> wallets,
                                               int64_t publisher_id, int64_t now_seconds) const {
  if (traffic_.checks == nullptr) return events::InvalidReason::kNone;
  const bool browser = !http.Header("Origin").empty();
  std::optional<IpAddress> ip;
  if (browser) {
    ip = traffic_.proxies != nullptr ? http::ClientIp(http, *traffic_.proxies)
                                     : ParseIp(http.remote_ip);
  }
  return traffic_.checks->CheckImpression({.user_agent = http.Header("User-Agent"),
                                           .ip = ip,
                                           .browser = browser,
                                           .wallets = wallets,
                                           .publisher_id = publisher_id,
                                           .now_seconds = now_seconds});
}

// {public_url}/v1/click/{token}, the token sealing what the click needs (events/click_token.h).
std::string EventsImpressions::Seal(const ServedAd& ad) const {
  const decision::Campaign& campaign = *ad.decision.campaign;
  const int64_t now_seconds = ad.now_seconds;
  const events::DecisionId id = events::NewDecisionId(ad.now_micros / 1000);
  const uint64_t person = events_.PersonDigest(ad.request.wallets);
  const std::optional<std::string_view> ad_unit = ad.request.ad_unit();
  const std::string_view arm = decision::ArmFor(ad.publisher, ad_unit);
  events::ClickClaims claims{
      .decision = id,
      .publisher_id = ad.publisher.id,
      .campaign_id = campaign.id,
      .ad_id = ad.decision.ad->id,
      .served_at = now_seconds,
      .price = campaign.pricing_model == PricingModel::kCpc ? campaign.bid_micros : 0,
      .person = person,
      .earlier_variant = IsEarlier(ad.request.variant),
      .arm = std::string(arm),
      .ad_unit_id = std::string(ad_unit.value_or(std::string_view())),
      // For the click's invalid-traffic checks (too_fast, user_agent_mismatch).
      .serve_context = true,
      .served_at_millis = static_cast<int32_t>((ad.now_micros / 1000) % 1000),
      .user_agent_hash = events::UserAgentHash(ad.http.Header("User-Agent")),
      // A click on an invalid impression is invalid too.
      .serve_invalid = static_cast<uint8_t>(ad.invalid),
  };
  std::string url;
  url.reserve(click_prefix_.size() + 160 + claims.ad_unit_id.size());
  url += click_prefix_;
  events::SealClick(events_.click_keys(), claims, url);
  // An invalid impression exposes no one, so no conversion is attributed to it.
  if (campaign.conversion && exposures_ != nullptr && ad.invalid == events::InvalidReason::kNone) {
    store::ExposureEntry exposure{
        .decision_id = id.bytes,
        .exposed_at = now_seconds,
        .ad_id = ad.decision.ad->id,
        .publisher_id = ad.publisher.id,
        .person = person,
        .arm = std::string(arm.substr(0, store::kMaxExposureArmBytes)),
        .ad_unit_id = std::string(
            ad_unit.value_or(std::string_view()).substr(0, store::kMaxExposureAdUnitBytes))};
    exposures_->Record(campaign.id, exposure, ad.request.wallets);
  }
  return url;
}

void EventsImpressions::Count(const events::ServedKey& key, events::ServeOutcome outcome,
                              const ServedInfo& served) const {
  events_.served().Count(key, outcome, served.spend, served.invalid);
}

}  // namespace adserver::serve
