#include "common/address.h"

#include <array>

namespace adserver {
namespace {

// Hex digit values by character; -1 for anything else.
constexpr std::array<int8_t, 256> kHexValues = [] {
  std::array<int8_t, 256> t{};
  t.fill(-1);
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = static_cast<int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<size_t>(c)] = static_cast<int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[static_cast<size_t>(c)] = static_cast<int8_t>(c - 'A' + 10);
  return t;
}();

int HexValue(char c) { return kHexValues[static_cast<uint8_t>(c)]; }

}  // namespace

std::optional<Address> ParseAddress(std::string_view text) {
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  Address out;
  int invalid = 0;  // negative once any digit was not hex
  for (size_t i = 0; i < 20; ++i) {
    int hi = HexValue(text[2 + 2 * i]);
    int lo = HexValue(text[3 + 2 * i]);
    invalid |= hi | lo;
    out.bytes[i] = static_cast<uint8_t>((hi & 0xF) << 4 | (lo & 0xF));
  }
  if (invalid < 0) return std::nullopt;
  return out;
}

std::string HexEncode(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xF];
  }
  return out;
}

std::string FormatAddress(const Address& address) {
  return "0x" + HexEncode(address.bytes.data(), address.bytes.size());
}

}  // namespace adserver
