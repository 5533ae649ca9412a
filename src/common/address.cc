#include "common/address.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace adserver {
namespace {

// 16 bytes per operation with GCC/Clang vector extensions: SSE2 on x86-64, NEON on ARM, plain
// integer code elsewhere; no intrinsics, so no CPU dispatch.
using Bytes16 = uint8_t __attribute__((vector_size(16)));
using Lanes16 = uint16_t __attribute__((vector_size(16)));
using Bytes8 = uint8_t __attribute__((vector_size(8)));

// Decodes the 16 hex digits (either case) at `text` into 8 bytes at `out`. Returns 0xFF in each
// position whose character is a hex digit, 0 in the others (whose output bytes are garbage).
Bytes16 DecodeHex16(const char* text, uint8_t* out) {
  Bytes16 chars;
  std::memcpy(&chars, text, sizeof chars);
  const Bytes16 folded = chars | 0x20;  // 'A'-'F' -> 'a'-'f'; no other byte lands there
  const Bytes16 digit = (chars >= '0') & (chars <= '9');
  const Bytes16 letter = (folded >= 'a') & (folded <= 'f');
  // '0'-'9' -> low nibble; 'a'-'f' and 'A'-'F' -> low nibble + 9.
  const Bytes16 nibbles = (chars & 0x0F) + (letter & 9);
  // Each 16-bit lane holds a pair of digits; the first is the high nibble of the byte.
  auto pairs = reinterpret_cast<Lanes16>(nibbles);
  if constexpr (std::endian::native == std::endian::little) {
    pairs = ((pairs << 4) | (pairs >> 8)) & 0xFF;
  } else {
    pairs = ((pairs >> 4) | pairs) & 0xFF;
  }
  const auto bytes = __builtin_convertvector(pairs, Bytes8);
  std::memcpy(out, &bytes, sizeof bytes);
  return digit | letter;
}

}  // namespace

std::optional<Address> ParseAddress(std::string_view text) {
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  Address out;
  // Digits 0-15, 16-31 and 24-39: the last block overlaps the second and rewrites bytes 12-15.
  const Bytes16 valid = DecodeHex16(text.data() + 2, out.bytes.data()) &
                        DecodeHex16(text.data() + 18, out.bytes.data() + 8) &
                        DecodeHex16(text.data() + 26, out.bytes.data() + 12);
  uint64_t halves[2];
  std::memcpy(halves, &valid, sizeof halves);
  if ((halves[0] & halves[1]) != ~uint64_t{0}) return std::nullopt;
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
