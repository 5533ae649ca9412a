#pragma once

// What ad serving adds around decision::Decide for issue 4: live counters and options passed
// into each decision, billing of served impressions, and the explain debug header.
//
// Explain: a request with header `X-Adserver-Explain: 1` gets a response header
// `X-Adserver-Explain` holding a JSON explanation of the decision, but only for a test key or
// when the request carries `Authorization: Bearer <admin token>`; a live key without the
// token gets nothing. For test keys (which are served sample ads) it explains what a live key
// would have been served; nothing is billed either way.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/address.h"
#include "common/crypto.h"
#include "decision/engine.h"
#include "decision/live_state.h"
#include "decision/options.h"
#include "http/message.h"

namespace adserver::serve {

inline constexpr std::string_view kExplainHeader = "X-Adserver-Explain";

// Shared by all requests; set up once by app::Server. Thread-safe (LiveState is).
struct DecisionHooks {
  decision::LiveState* live = nullptr;  // null = no budgets, caps, pacing or billing
  decision::DecisionOptions options;
  // SHA-256 of the admin token; nullopt = explain only for test keys.
  std::optional<Sha256Digest> admin_token_hash;
};

// Fills the issue-4 fields of a live key's decision request.
void PrepareDecision(const DecisionHooks& hooks, std::optional<std::string_view> ad_unit_id,
                     decision::DecisionRequest& request);

// Cluster mode: pays the impression about to be served to a live key from the node's budget
// lease; false: answer no ad. True without leases (decision::AuthorizeImpression).
bool AuthorizeServed(const DecisionHooks& hooks, const decision::Decision& decision);

// Bills one impression served to a live key (spend, counters, frequency caps).
void RecordServed(const DecisionHooks& hooks, const decision::Decision& decision,
                  std::span<const Address> wallets, int64_t now);

// How much of a decision's explanation a request may see.
enum class ExplainScope : uint8_t {
  kNone,       // no explanation (not asked for, or a live key without the operator's token)
  kPublisher,  // a test key: the winner and each candidate's rule, not competitors' values
  kOperator,   // the operator's token: values, relevance, pacing and scores too
};

// What the request may see of its explanation; kNone when it asks for none.
ExplainScope ExplainAllowed(const DecisionHooks& hooks, const http::Request& request,
                            bool test_key);

// The explanation as compact JSON. `all` lists every campaign; otherwise campaigns dropped for
// not matching the wallets' activity are only counted ("unmatched"). `values` adds each
// candidate's valueMicros, relevance, pacingFactor and score (advertisers' prices: operators
// only, issue 39).
std::string ExplanationJson(const decision::Explanation& explanation, bool all, bool values);

}  // namespace adserver::serve
