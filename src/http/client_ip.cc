#include "http/client_ip.h"

namespace adserver::http {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One hop as a proxy writes it: "1.2.3.4", "1.2.3.4:80", "2001:db8::1", "[2001:db8::1]:80",
// optionally in double quotes (Forwarded).
std::optional<IpAddress> ParseHop(std::string_view hop) {
  hop = Trim(hop);
  if (hop.size() >= 2 && hop.front() == '"' && hop.back() == '"')
    hop = hop.substr(1, hop.size() - 2);
  if (!hop.empty() && hop.front() == '[') {
    size_t close = hop.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    return ParseIp(hop.substr(1, close - 1));
  }
  // One colon: IPv4 with a port. More: IPv6 without brackets.
  size_t colon = hop.find(':');
  if (colon != std::string_view::npos && hop.find(':', colon + 1) == std::string_view::npos) {
    hop = hop.substr(0, colon);
  }
  return ParseIp(hop);
}

// The hops of X-Forwarded-For ("a, b, c"), left to right.
std::vector<std::string_view> ForwardedForHops(std::string_view value) {
  std::vector<std::string_view> hops;
  while (!value.empty()) {
    size_t comma = value.find(',');
    hops.push_back(value.substr(0, comma));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return hops;
}

// The `for=` values of Forwarded ("for=a;proto=https, for=b"), left to right; an element
// without one counts as a hop that is not an address.
std::vector<std::string_view> ForwardedHops(std::string_view value) {
  std::vector<std::string_view> hops;
  for (std::string_view element : ForwardedForHops(value)) {
    std::string_view found;
    while (!element.empty()) {
      size_t semi = element.find(';');
      std::string_view pair = Trim(element.substr(0, semi));
      if (pair.size() > 4 && (pair[0] | 0x20) == 'f' && (pair[1] | 0x20) == 'o' &&
          (pair[2] | 0x20) == 'r' && pair[3] == '=') {
        found = pair.substr(4);
      }
      if (semi == std::string_view::npos) break;
      element.remove_prefix(semi + 1);
    }
    hops.push_back(found);
  }
  return hops;
}

}  // namespace

Result<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& networks,
                                             std::string_view field) {
  std::vector<IpNetwork> parsed;
  for (const std::string& text : networks) {
    std::optional<IpNetwork> network = ParseNetwork(text);
    if (!network) {
      return InvalidArgumentError(
          "invalid configuration",
          {{std::string(field), "\"" + text + "\" is not an IP address or CIDR network"}});
    }
    parsed.push_back(*network);
  }
  TrustedProxies proxies;
  proxies.set_ = IpSet(parsed);
  return proxies;
}

std::optional<IpAddress> ClientIp(const Request& request, const TrustedProxies& proxies) {
  std::optional<IpAddress> peer = ParseIp(request.remote_ip);
  if (!peer || proxies.empty() || !proxies.Contains(*peer)) return peer;
  std::vector<std::string_view> hops;
  if (std::string_view xff = request.Header("X-Forwarded-For"); !xff.empty()) {
    hops = ForwardedForHops(xff);
  } else if (std::string_view fwd = request.Header("Forwarded"); !fwd.empty()) {
    hops = ForwardedHops(fwd);
  }
  IpAddress client = *peer;
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    std::optional<IpAddress> hop = ParseHop(*it);
    if (!hop) return client;
    client = *hop;
    if (!proxies.Contains(*hop)) return client;
  }
  return client;
}

}  // namespace adserver::http
