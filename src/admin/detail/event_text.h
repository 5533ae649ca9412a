#pragma once

// Text forms shared by the admin API's event listings (clicks, conversions, advertiser events):
// ids, digests and the query-string values they take.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace adserver::admin::detail {

// Rows of an event listing (events_admin.cc, advertiser_events_admin.cc): without ?limit, and
// the most ?limit may ask for.
inline constexpr int kDefaultEventLimit = 100;
inline constexpr int kMaxEventLimit = 1000;

// Lower-case hex of `bytes`, no prefix.
std::string Hex(std::span<const uint8_t> bytes);
// A decision id (16 bytes) in the 8-4-4-4-12 form a spclid has.
std::string DecisionIdText(const std::array<uint8_t, 16>& id);
// A person digest as 16 hex digits.
std::string PersonText(uint64_t person);
// A decimal integer >= 1 and nothing else; nullopt otherwise.
std::optional<int64_t> ParsePositiveInt(std::string_view text);
// An application/x-www-form-urlencoded value: %XX and '+' (a bad escape stays as it is).
std::string PercentDecode(std::string_view text);
// RFC 3339, or a date YYYY-MM-DD (its midnight UTC); nullopt otherwise.
std::optional<int64_t> ParseTimeOrDate(std::string_view text);

}  // namespace adserver::admin::detail
