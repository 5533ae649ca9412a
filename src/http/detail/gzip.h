#pragma once

// gzip for answers (issue 38 item 5): the console's assets, compressed once at start-up, and
// the admin API's JSON and CSV (RouteOptions::compress), compressed per answer.

#include <optional>
#include <string>
#include <string_view>

namespace adserver::http::detail {

// True when an Accept-Encoding header value takes gzip: a "gzip" or "*" coding whose q is not 0
// (RFC 9110 section 12.5.3).
bool AcceptsGzip(std::string_view accept_encoding);

// `body` as a gzip member at zlib `level` (1-9), or nullopt when zlib fails or the result would
// not be smaller.
std::optional<std::string> Gzip(std::string_view body, int level);

}  // namespace adserver::http::detail
