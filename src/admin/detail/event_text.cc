#include "admin/detail/event_text.h"

#include <charconv>

#include "ingest/activity_import.h"

namespace adserver::admin::detail {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += kHexDigits[b >> 4];
    out += kHexDigits[b & 15];
  }
  return out;
}

std::string DecisionIdText(const std::array<uint8_t, 16>& id) {
  std::string hex = Hex(id);
  return hex.substr(0, 8) + '-' + hex.substr(8, 4) + '-' + hex.substr(12, 4) + '-' +
         hex.substr(16, 4) + '-' + hex.substr(20);
}

std::string PersonText(uint64_t person) {
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, person >>= 4) out[static_cast<size_t>(i)] = kHexDigits[person & 15];
  return out;
}

std::optional<int64_t> ParsePositiveInt(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) return std::nullopt;
  return v;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 && HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

std::optional<int64_t> ParseTimeOrDate(std::string_view text) {
  std::string value(text);
  if (value.size() == 10) value += "T00:00:00Z";
  Result<int64_t> seconds = ingest::ParseRfc3339(value);
  if (!seconds.ok()) return std::nullopt;
  return *seconds;
}

}  // namespace adserver::admin::detail
