#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/splitmix64.h"

namespace adserver {

// A 20-byte EVM address. Value type; comparison is on the bytes, so hex letter case
// never matters once parsed.
struct Address {
  std::array<uint8_t, 20> bytes{};
  bool operator==(const Address&) const = default;
  auto operator<=>(const Address&) const = default;
};

// Parses "0x" + exactly 40 hex digits (either case; "0X" is rejected). Returns nullopt
// for anything else.
std::optional<Address> ParseAddress(std::string_view text);

// "0x" + 40 lower-case hex digits.
std::string FormatAddress(const Address& address);

// Lower-case hex of arbitrary bytes, no prefix.
std::string HexEncode(const uint8_t* data, size_t size);

// A seeded 64-bit hash of all 20 bytes (three multiply-xorshift rounds, no byte loop), for
// tables keyed by wallets that must not trust addresses to be uniformly distributed (vanity
// addresses share long prefixes) or unpredictable to a client choosing them.
inline uint64_t HashAddress(const Address& a, uint64_t seed) {
  uint64_t x, y;
  uint32_t z;
  std::memcpy(&x, a.bytes.data(), 8);
  std::memcpy(&y, a.bytes.data() + 8, 8);
  std::memcpy(&z, a.bytes.data() + 16, 4);
  return Fmix64(Fmix64(Fmix64(seed ^ x) ^ y) ^ z);
}

struct AddressHash {
  size_t operator()(const Address& a) const noexcept {
    // Addresses are uniformly distributed; the first 8 bytes are a good hash.
    uint64_t h;
    std::memcpy(&h, a.bytes.data(), sizeof h);
    return static_cast<size_t>(h);
  }
};

}  // namespace adserver
