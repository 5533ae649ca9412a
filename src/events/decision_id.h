#pragma once

// The id of one decision answered with an ad (a 200 for a live key): what a click, a conversion
// and a report row point back to, and the `spclid` an advertiser's site receives. A UUIDv7
// (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids sort by time.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace adserver::events {

struct DecisionId {
  std::array<uint8_t, 16> bytes{};

  // Lower-case 8-4-4-4-12 hex form, e.g. "0193a5c2-7f1e-7c3a-9b2d-4e5f6a7b8c9d".
  std::string ToString() const;
  // Appends ToString() to `out` without a temporary.
  void AppendTo(std::string& out) const;
  // Parses the form ToString writes (hex letters in either case); nullopt otherwise.
  static std::optional<DecisionId> Parse(std::string_view text);
  // The Unix milliseconds the id was minted at.
  int64_t UnixMillis() const;
  bool operator==(const DecisionId&) const = default;
};

// A new id for `unix_millis`: 74 random bits (from RandomBytesBuffered) behind the time.
DecisionId NewDecisionId(int64_t unix_millis);

}  // namespace adserver::events
