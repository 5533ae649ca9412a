#pragma once

// The ad pipeline: from the parsed request of an accepted key to its answer (spec 2.4, 4, 5;
// compatibility.md). In order: the identity cookie's origin rule, identity, wallet presence, the
// decision (or a test key's sample), the impression's invalid-traffic checks, the budget gate,
// the click redirect and exposure, the answer's body, billing, the explanation and cookies.
// A pure function of its inputs and ports (serve/ad_ports.h): no lock, no I/O, no null
// "feature off" pointer; serve::AdHandler does the HTTP around it (key, Origin, rate limit,
// Content-Type, parsing, CORS, metrics).

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "decision/engine.h"
#include "events/served_counters.h"
#include "http/message.h"
#include "serve/ad_metrics.h"
#include "serve/ad_ports.h"
#include "serve/ad_request.h"

namespace adserver::serve {

// The pipeline's ports; each defaults to its no-op implementation. Pointed-to ports must
// outlive the pipelines built with them.
struct AdPorts {
  const IdentityPort* identity = &NoIdentity();
  const BudgetGate* budgets = &NoBudgets();
  const ImpressionRecorder* impressions = &NoImpressions();
};

// One request of an accepted key: its HTTP request, key and the snapshots it is served from.
struct AdInput {
  const http::Request& http;
  const decision::ApiKey& key;
  const decision::Publisher& publisher;  // the key's
  const decision::Catalog& catalog;
  const decision::ActivityIndex& activity;
  int64_t now_micros = 0;
  int64_t now_seconds = 0;  // now_micros floored to seconds
  decision::Rng& rng;
};

// The answer and what it served.
struct AdAnswer {
  http::Response response;
  NoFillReason no_fill = NoFillReason::kNone;  // set when answered without an ad
  ServedInfo served;                           // a live key's served ad (campaign 0: none)
};

class AdPipeline {
 public:
  // `explain_seed` seeds the private RNG of a test key's explanation (a replay of what a live key
  // would get); `sample_counter` rotates test keys' sample ads and must outlive the pipeline.
  AdPipeline(AdPorts ports, uint64_t explain_seed, std::atomic<uint64_t>& sample_counter)
      : ports_(ports), explain_seed_(explain_seed), sample_counter_(sample_counter) {}

  // Answers `request` (parsed and valid; identity may fill its wallets and bound localId).
  AdAnswer Run(const AdInput& input, AdRequest& request) const;

  // Counts one request of a live key in the serving counters: `status` is its answer's,
  // `ad_unit_id` the parsed request's (nullopt when the body was refused or sent none).
  void Count(const AdInput& input, Variant variant, std::optional<std::string_view> ad_unit_id,
             int status, const ServedInfo& served) const;

  const AdPorts& ports() const { return ports_; }

 private:
  std::optional<decision::Decision> Choose(const AdInput& input, const AdRequest& request,
                                           decision::Explanation* explain) const;
  // Serves `decision` (an ad) to a live or test key: the 200 answer, or no ad when the budget
  // gate refuses it.
  AdAnswer ServeAd(const AdInput& input, const AdRequest& request,
                   const decision::Decision& decision) const;

  AdPorts ports_;
  uint64_t explain_seed_;
  std::atomic<uint64_t>& sample_counter_;
};

}  // namespace adserver::serve
