#pragma once

// The ports of the ad pipeline (serve/ad_pipeline.h): what serving asks of identity, of the
// decision engine's live state and of the events. Each port has a no-op implementation (the
// feature off) and the production one over the module it stands for, so the pipeline never
// checks for a missing feature. Implementations are thread-safe and run on the event loop:
// no lock held across a call, no I/O.

#include <cstdint>
#include <span>
#include <string>

#include "common/address.h"
#include "common/types.h"
#include "decision/catalog.h"
#include "decision/engine.h"
#include "events/events_service.h"
#include "events/exposure_recorder.h"
#include "events/traffic_checks.h"
#include "http/message.h"
#include "identity/identity_service.h"
#include "serve/ad_request.h"
#include "serve/decision_hooks.h"
#include "serve/identity_binding.h"
#include "serve/traffic_guard.h"

namespace adserver::serve {

// The consented cookie of /v1/ads and the localId of /api/ads (serve/identity_binding.h).
class IdentityPort {
 public:
  virtual ~IdentityPort() = default;
  // Applies the identity rules to a parsed request (see ResolveIdentity).
  virtual IdentityOutcome Resolve(const http::Request& http, AdRequest& request, bool test_key,
                                  int64_t now_seconds) const = 0;
};

// Identity off: no cookie is read or set and every localId is unknown.
const IdentityPort& NoIdentity();

// The identities of `service`, which must outlive the port.
class ServiceIdentity final : public IdentityPort {
 public:
  explicit ServiceIdentity(const identity::IdentityService& service) : service_(service) {}
  IdentityOutcome Resolve(const http::Request& http, AdRequest& request, bool test_key,
                          int64_t now_seconds) const override;

 private:
  const identity::IdentityService& service_;
};

// The live state around decision::Decide (issue 4): budgets, caps, pacing and learned rates in,
// billing out, and who may see a decision's explanation.
class BudgetGate {
 public:
  virtual ~BudgetGate() = default;
  // Fills a live key's decision request with the live state and the decision options.
  virtual void Prepare(decision::DecisionRequest& request) const = 0;
  // Cluster mode: pays the valid impression about to be served to a live key from the node's
  // budget lease; false: answer no ad (another request took the last of it).
  virtual bool Authorize(const decision::Decision& decision) const = 0;
  // Bills one valid impression served to a live key (spend, counters, frequency caps).
  virtual void Record(const decision::Decision& decision, std::span<const Address> wallets,
                      int64_t now_seconds) const = 0;
  // What the request may see of its decision's explanation (kNone: none asked for or allowed).
  virtual ExplainScope Explain(const http::Request& request, bool test_key) const = 0;
};

// No live state: decisions use the default options, nothing is billed or explained.
const BudgetGate& NoBudgets();

// The live state and options of `hooks`, which must outlive the port.
class LiveBudgets final : public BudgetGate {
 public:
  explicit LiveBudgets(const DecisionHooks& hooks) : hooks_(hooks) {}
  void Prepare(decision::DecisionRequest& request) const override;
  bool Authorize(const decision::Decision& decision) const override;
  void Record(const decision::Decision& decision, std::span<const Address> wallets,
              int64_t now_seconds) const override;
  ExplainScope Explain(const http::Request& request, bool test_key) const override;

 private:
  const DecisionHooks& hooks_;
};

// An ad about to be served to a live key.
struct ServedAd {
  const http::Request& http;
  const AdRequest& request;
  const decision::Publisher& publisher;
  const decision::Decision& decision;  // holds an ad and its campaign
  int64_t now_micros = 0;
  int64_t now_seconds = 0;  // now_micros floored to seconds
  events::InvalidReason invalid = events::InvalidReason::kNone;
};

// What a live key's request ended with, for the serving counters.
struct ServedInfo {
  int64_t campaign_id = 0;  // 0: no ad served
  int64_t ad_id = 0;
  Micros spend = 0;  // 0 for an invalid impression
  events::InvalidReason invalid = events::InvalidReason::kNone;
};

// The events of live keys' requests (issues 15, 18): invalid-traffic checks of impressions, the
// click redirect and exposures of what is served, and the serving counters.
class ImpressionRecorder {
 public:
  virtual ~ImpressionRecorder() = default;
  // The invalid-traffic checks of an impression about to be served (kNone: valid).
  virtual events::InvalidReason Check(const http::Request& http, std::span<const Address> wallets,
                                      int64_t publisher_id, int64_t now_seconds) const = 0;
  // The click URL replacing the ad's ctaUrl ("" keeps the ad's own), sealed under a new
  // decision id; a valid impression of a campaign billed on onchain conversions also records
  // whom it was shown to.
  virtual std::string Seal(const ServedAd& ad) const = 0;
  // Counts one request a live key made (after its key was accepted) and how it ended.
  virtual void Count(const events::ServedKey& key, events::ServeOutcome outcome,
                     const ServedInfo& served) const = 0;
};

// Events off: every impression valid, ads keep their own ctaUrl, nothing counted.
const ImpressionRecorder& NoImpressions();

// The click redirect, exposures and serving counters of the events service. `events` and what
// `traffic` and `exposures` point to (null: no checks / no exposures) must outlive the port.
class EventsImpressions final : public ImpressionRecorder {
 public:
  // `public_url`: where visitors reach this server; click URLs are {public_url}/v1/click/{token}.
  EventsImpressions(events::EventsService& events, std::string_view public_url,
                    TrafficGuard traffic, events::ExposureRecorder* exposures);
  events::InvalidReason Check(const http::Request& http, std::span<const Address> wallets,
                              int64_t publisher_id, int64_t now_seconds) const override;
  std::string Seal(const ServedAd& ad) const override;
  void Count(const events::ServedKey& key, events::ServeOutcome outcome,
             const ServedInfo& served) const override;

 private:
  events::EventsService& events_;
  std::string click_prefix_;  // "{public_url}/v1/click/"
  TrafficGuard traffic_;
  events::ExposureRecorder* exposures_;
};

}  // namespace adserver::serve
