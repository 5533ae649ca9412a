#pragma once

// IP addresses and networks (issue 18: client IPs, blocklists, trusted proxies). Value types.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adserver {

// An IPv4 or IPv6 address. IPv4 is kept as its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so
// one comparison covers both; `is_v4()` tells them apart.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};
  bool is_v4() const;
  bool operator==(const IpAddress&) const = default;
  auto operator<=>(const IpAddress&) const = default;
};

// Parses a dotted IPv4 ("192.0.2.1") or an IPv6 text form ("2001:db8::1", "::ffff:1.2.3.4").
// Brackets, ports and zone ids are not accepted here. nullopt for anything else.
std::optional<IpAddress> ParseIp(std::string_view text);
// "192.0.2.1" for IPv4 (mapped), RFC 5952 text for IPv6.
std::string FormatIp(const IpAddress& ip);
// The address with everything after the first 24 bits (IPv4) or 48 bits (IPv6) zeroed: what is
// stored or used as a key instead of a client's address.
IpAddress TruncateIp(const IpAddress& ip);

// A network: an address and a prefix length counted on the address's own family (0-32 for
// IPv4, 0-128 for IPv6).
struct IpNetwork {
  IpAddress base;  // host bits zeroed
  int prefix = 128;
  bool Contains(const IpAddress& ip) const;
};

// Parses "a.b.c.d", "a.b.c.d/n", "v6", "v6/n"; a bare address is a /32 or /128. Host bits
// beyond the prefix are cleared. nullopt for anything else.
std::optional<IpNetwork> ParseNetwork(std::string_view text);

// A set of networks answering Contains in O(log n): the networks as sorted, merged ranges.
// Immutable once built; thread-safe to read.
class IpSet {
 public:
  IpSet() = default;
  explicit IpSet(const std::vector<IpNetwork>& networks);
  bool Contains(const IpAddress& ip) const;
  size_t range_count() const { return ranges_.size(); }

 private:
  struct Range {
    IpAddress first;
    IpAddress last;
  };
  std::vector<Range> ranges_;  // sorted by first, disjoint
};

}  // namespace adserver
