#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace adserver::http::detail {

// A parsed ServerOptions::listen value.
struct ListenAddress {
  std::string host;  // numeric IPv4 or IPv6 address, without brackets
  uint16_t port = 0;
};

// Parses "HOST:PORT" where HOST is a numeric IPv4 address, "localhost" (127.0.0.1) or a
// bracketed IPv6 address ("[::1]:8080"); PORT is 0..65535 (0 = any free port). Returns
// InvalidArgument naming the field `listen` for anything else. Host names are not resolved.
Result<ListenAddress> ParseListenAddress(std::string_view listen);

}  // namespace adserver::http::detail
