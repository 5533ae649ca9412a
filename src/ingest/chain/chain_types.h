#pragma once

// Value types shared by the chain module's interfaces (chain_source.h, block_sink.h).

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace adserver::ingest::chain {

// A 32-byte hash (block or transaction). Value type; comparison is on the bytes.
struct Hash32 {
  std::array<uint8_t, 32> bytes{};
  bool operator==(const Hash32&) const = default;
  auto operator<=>(const Hash32&) const = default;
};

struct Hash32Hash {
  size_t operator()(const Hash32& h) const noexcept {
    // Hashes are uniformly distributed; the first 8 bytes are a good hash.
    uint64_t v;
    std::memcpy(&v, h.bytes.data(), sizeof v);
    return static_cast<size_t>(v);
  }
};

// Parses "0x" + exactly 64 hex digits (either case). Returns nullopt for anything else.
std::optional<Hash32> ParseHash32(std::string_view text);

// "0x" + 64 lower-case hex digits (the form a node answers with).
std::string FormatHash32(const Hash32& hash);

}  // namespace adserver::ingest::chain
