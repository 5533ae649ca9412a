#include "common/ip_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace adserver {
namespace {

constexpr std::array<uint8_t, 12> kV4MappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// Clears the bits of `bytes` after the first `bits` (counted on the 16-byte form).
IpAddress KeepBits(IpAddress ip, int bits) {
  for (int i = 0; i < 16; ++i) {
    int keep = std::clamp(bits - 8 * i, 0, 8);
    ip.bytes[i] &= static_cast<uint8_t>(keep == 8 ? 0xff : (0xff00 >> keep) & 0xff);
  }
  return ip;
}

// Sets the bits after the first `bits`.
IpAddress FillBits(IpAddress ip, int bits) {
  for (int i = 0; i < 16; ++i) {
    int keep = std::clamp(bits - 8 * i, 0, 8);
    ip.bytes[i] |= static_cast<uint8_t>(keep == 8 ? 0 : 0xff >> keep);
  }
  return ip;
}

// Prefix on the 16-byte form of a network of `ip`'s family.
int StoredPrefix(const IpAddress& ip, int prefix) { return ip.is_v4() ? prefix + 96 : prefix; }

}  // namespace

bool IpAddress::is_v4() const {
  return std::equal(kV4MappedPrefix.begin(), kV4MappedPrefix.end(), bytes.begin());
}

std::optional<IpAddress> ParseIp(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buffer[INET6_ADDRSTRLEN];
  std::copy(text.begin(), text.end(), buffer);
  buffer[text.size()] = '\0';
  IpAddress ip;
  if (text.find(':') == std::string_view::npos) {
    std::array<uint8_t, 4> v4;
    if (inet_pton(AF_INET, buffer, v4.data()) != 1) return std::nullopt;
    std::copy(kV4MappedPrefix.begin(), kV4MappedPrefix.end(), ip.bytes.begin());
    std::copy(v4.begin(), v4.end(), ip.bytes.begin() + 12);
    return ip;
  }
  if (inet_pton(AF_INET6, buffer, ip.bytes.data()) != 1) return std::nullopt;
  return ip;
}

std::string FormatIp(const IpAddress& ip) {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (ip.is_v4()) {
    inet_ntop(AF_INET, ip.bytes.data() + 12, buffer, sizeof(buffer));
  } else {
    inet_ntop(AF_INET6, ip.bytes.data(), buffer, sizeof(buffer));
  }
  return buffer;
}

IpAddress TruncateIp(const IpAddress& ip) {
  return KeepBits(ip, StoredPrefix(ip, ip.is_v4() ? 24 : 48));
}

bool IpNetwork::Contains(const IpAddress& ip) const {
  if (ip.is_v4() != base.is_v4()) return false;
  return KeepBits(ip, StoredPrefix(base, prefix)) == base;
}

std::optional<IpNetwork> ParseNetwork(std::string_view text) {
  size_t slash = text.find('/');
  std::optional<IpAddress> ip = ParseIp(text.substr(0, slash));
  if (!ip) return std::nullopt;
  const int max_prefix = ip->is_v4() ? 32 : 128;
  int prefix = max_prefix;
  if (slash != std::string_view::npos) {
    std::string_view digits = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || prefix < 0 ||
        prefix > max_prefix) {
      return std::nullopt;
    }
  }
  IpNetwork network;
  network.prefix = prefix;
  network.base = KeepBits(*ip, StoredPrefix(*ip, prefix));
  return network;
}

IpSet::IpSet(const std::vector<IpNetwork>& networks) {
  std::vector<Range> ranges;
  ranges.reserve(networks.size());
  for (const IpNetwork& n : networks) {
    ranges.push_back({n.base, FillBits(n.base, StoredPrefix(n.base, n.prefix))});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.first < b.first; });
  for (const Range& r : ranges) {
    if (!ranges_.empty() && r.first <= ranges_.back().last) {
      ranges_.back().last = std::max(ranges_.back().last, r.last);
    } else {
      ranges_.push_back(r);
    }
  }
}

bool IpSet::Contains(const IpAddress& ip) const {
  // The last range starting at or before `ip`.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), ip,
                             [](const IpAddress& a, const Range& r) { return a < r.first; });
  if (it == ranges_.begin()) return false;
  return ip <= std::prev(it)->last;
}

}  // namespace adserver
