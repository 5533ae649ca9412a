#include "common/address.h"

namespace adserver {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<Address> ParseAddress(std::string_view text) {
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  Address out;
  for (size_t i = 0; i < 20; ++i) {
    int hi = HexValue(text[2 + 2 * i]);
    int lo = HexValue(text[3 + 2 * i]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
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
