#pragma once

// Selection: the expected-value auction of issue 4 (docs/decision.md). Pure: no I/O, threads
// or clocks; the caller passes time, randomness and the live counters in. Thread-safe.

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/types.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"
#include "decision/live_state.h"
#include "decision/options.h"
#include "decision/rate_model.h"

namespace adserver::decision {


// The rules a candidate campaign must pass, in evaluation order; the first one that fails is
// the reason it was dropped.
enum class DropRule : uint8_t {
  kNone,                  // eligible
  kSchedule,              // outside [startsAt, endsAt)
  kPublisherNotAllowed,   // campaign limited to other publishers
  kCommunityBlocked,      // publisher blocks the campaign's community
  kCommunityNotAllowed,   // publisher's allowed-only list lacks the community
  kCategoryNotOptedIn,    // campaign category the publisher did not opt into
  kNoAdForFormat,         // no active ad for the format / variant / experiment arm
  kBudgetUntracked,       // budget ledger full: a budgeted campaign cannot be billed
  kTotalBudgetExhausted,  // total spend (+ one impression) would pass budget.total
  kDailyBudgetExhausted,  // the same for today's spend and budget.daily
  kNoMatchingActivity,    // no wallet used a targeted project (chain, recency)
  kExcludedProject,       // a wallet used an excluded project
  kExistingUser,          // a wallet already uses the advertiser's own project
  kFrequencyCap,          // a wallet of the person reached the cap
  kBelowFloor,            // value under the publisher's floor
  kPaced,                 // ahead of its pacing line this time
  kBudgetNotLeased,       // cluster mode: this node holds too little of the total budget
};
std::string_view DropRuleName(DropRule rule);  // "schedule", "frequency_cap", ...

struct CandidateExplanation {
  int64_t campaign_id = 0;
  DropRule rule = DropRule::kNone;
  // Value of one impression (before relevance): the posterior mean, or with exploration a
  // CPC/CPA campaign's draw from its posterior (then `sampled`).
  double value_micros = 0;
  double mean_value_micros = 0;  // the posterior mean's value (= value_micros unless sampled)
  bool sampled = false;
  // Per-placement learning: the factor of the campaign on this publisher and adUnitId its draw
  // was multiplied by (1 = none; decision/placement_rates.h).
  double placement_factor = 1;
  // CPC/CPA: the posterior behind the value (prior, counts, mean, cap); filled for explain only.
  RatePosterior rate;
  double relevance = 1;      // multiplier from the wallets' match
  double pacing_factor = 1;  // see decision/pacing.h
  double score = 0;          // value * relevance * pacing factor
};

// Why a decision came out as it did: every campaign of the catalog in catalog order.
struct Explanation {
  std::string arm;  // experiment arm of the request ("" = none)
  std::vector<CandidateExplanation> candidates;
  int64_t winner_campaign_id = 0;  // 0 = no ad
  int64_t winner_ad_id = 0;
};

struct DecisionRequest {
  // Distinct wallets of one person, in request order (already deduplicated).
  std::span<const Address> wallets;
  ImageFormat format = ImageFormat::kLandscape;
  // The earlier API (/api/ads): only ads with an image and content under 400 code points.
  bool earlier_variant = false;
  const Publisher* publisher = nullptr;  // required
  int64_t now_seconds = 0;
  // The placement id (A/B arm assignment); nullopt = none sent.
  std::optional<std::string_view> ad_unit_id;
  // Spend, event counters and caps; null = no budgets, pacing, caps or learned rates.
  const LiveState* live = nullptr;
  // Value model and pacing tuning when `live` is null (null = defaults); with `live`, the
  // LiveState's options apply (its rate-lift bound is computed with them).
  const DecisionOptions* options = nullptr;
  // When set, filled with every candidate (slower; for explain only).
  Explanation* explain = nullptr;
};

struct Decision {
  const Campaign* campaign = nullptr;
  const Ad* ad = nullptr;
  const Community* community = nullptr;
  // Index into DecisionRequest::wallets of the wallet whose activity matched best.
  uint32_t matched_wallet = 0;
  double score = 0;
  double pacing_factor = 1;
};

// Deterministic PRNG for tie-breaks; seed per thread.
using Rng = std::mt19937_64;

// Chooses at most one ad:
//   eligible = every DropRule passes (schedule, publisher/advertiser controls, an ad for the
//   format, variant and arm, a wallet matched a targeted project on an allowed chain within
//   the recency window, no excluded project, budgets, frequency cap, floor, pacing);
//   score = expected value x relevance x pacing factor; winner = highest score, exact ties
//   broken by the campaigns' ad weight (for this format) with `rng`; then an ad of the winner
//   (in the request's arm) chosen by weight.
// The matched wallet is the one with the most recent matching interaction (then the larger
// count, then request order). Returns nullopt when nothing is eligible. Records nothing: the
// caller bills the impression (RecordImpression) once it is served.
std::optional<Decision> Decide(const DecisionRequest& request, const Catalog& catalog,
                               const ActivityIndex& activity, Rng& rng);

// The experiment arm of a request: publisher.ab_arms[FNV-1a(adUnitId) % n]; "" when the
// publisher runs no experiment or no adUnitId was sent.
std::string_view ArmFor(const Publisher& publisher, std::optional<std::string_view> ad_unit_id);

// Test keys: the next sample ad in rotation for the format/variant, ignoring targeting (but
// not the publisher's blocked communities). `counter` is any increasing number.
std::optional<Decision> SampleDecision(const DecisionRequest& request, const Catalog& catalog,
                                       uint64_t counter);

}  // namespace adserver::decision
