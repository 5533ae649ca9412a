#pragma once

// The client's address of a request (issue 18 item 2): the socket peer, unless the peer is a
// trusted proxy; then the rightmost address of X-Forwarded-For (or, without it, of Forwarded's
// `for=` elements) that is not itself a trusted proxy. Nothing a client sends is believed
// unless a trusted proxy put it there.

#include <optional>
#include <string>
#include <vector>

#include "common/ip_address.h"
#include "common/status.h"
#include "http/message.h"

namespace adserver::http {

// The configured proxies (http.trusted_proxies). Immutable; thread-safe.
class TrustedProxies {
 public:
  TrustedProxies() = default;
  // Each entry an address or CIDR; InvalidArgument naming `field` and the bad entry.
  static Result<TrustedProxies> Parse(const std::vector<std::string>& networks,
                                      std::string_view field = "http.trusted_proxies");
  bool Contains(const IpAddress& ip) const { return set_.Contains(ip); }
  bool empty() const { return set_.range_count() == 0; }

 private:
  IpSet set_;
};

// The client address as above; nullopt when the peer is unknown or not an address (requests
// built in tests without remote_ip). When every forwarded hop is trusted, the leftmost one;
// when the rightmost untrusted hop is not an address (garbage, "unknown", an obfuscated id),
// the last trusted hop before it.
std::optional<IpAddress> ClientIp(const Request& request, const TrustedProxies& proxies);

}  // namespace adserver::http
