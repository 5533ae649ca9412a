#pragma once

// First-version selection (issue 2, "Selection"). Pure: no I/O, threads or clocks; the caller
// passes time and randomness in. Thread-safe (const, no shared state).

#include <cstdint>
#include <optional>
#include <random>
#include <span>

#include "common/address.h"
#include "common/types.h"
#include "decision/activity_index.h"
#include "decision/catalog.h"

namespace adserver::decision {

enum class Variant : uint8_t { kCurrent, kEarlier };

struct DecisionRequest {
  // Distinct wallets of one person, in request order (already deduplicated).
  std::span<const Address> wallets;
  ImageFormat format = ImageFormat::kLandscape;
  Variant variant = Variant::kCurrent;
  const Publisher* publisher = nullptr;  // required
  int64_t now_seconds = 0;
};

struct Decision {
  const Campaign* campaign = nullptr;
  const Ad* ad = nullptr;
  const Community* community = nullptr;
  // Index into DecisionRequest::wallets of the wallet whose activity matched best.
  uint32_t matched_wallet = 0;
};

// Deterministic PRNG for tie-breaks; seed per thread.
using Rng = std::mt19937_64;

// Chooses at most one ad:
//   eligible = campaign inside its schedule, community not blocked by the publisher, an ad for
//   the requested format (and variant), some wallet has an interaction with a targeted project
//   on an allowed chain within the recency window, and no wallet has any interaction with an
//   excluded project;
//   winner = highest value_micros; ties broken by the campaigns' ad weight (for this format)
//   with `rng`; then an ad of the winner chosen by weight.
// The matched wallet is the one with the most recent matching interaction (then the larger
// count, then request order). Returns nullopt when nothing is eligible.
std::optional<Decision> Decide(const DecisionRequest& request, const Catalog& catalog,
                               const ActivityIndex& activity, Rng& rng);

// Test keys: the next sample ad in rotation for the format/variant, ignoring targeting (but
// not the publisher's blocked communities). `counter` is any increasing number.
std::optional<Decision> SampleDecision(const DecisionRequest& request, const Catalog& catalog,
                                       uint64_t counter);

}  // namespace adserver::decision
