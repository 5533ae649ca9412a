#include "http/detail/listen_address.h"

#include <boost/asio/ip/address.hpp>
#include <charconv>

namespace adserver::http::detail {
namespace {

Status BadListen(std::string_view listen, std::string_view why) {
  std::string message = "invalid listen address \"";
  message += listen;
  message += "\": ";
  message += why;
  return InvalidFieldError("listen", std::move(message));
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return BadListen(listen, "expected HOST:PORT");
  std::string_view host = listen.substr(0, colon);
  std::string_view port_text = listen.substr(colon + 1);

  bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (host == "localhost" && !bracketed) host = "127.0.0.1";

  boost::system::error_code ec;
  boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  if (ec || host.empty()) return BadListen(listen, "host must be a numeric IP address");
  if (address.is_v6() && !bracketed) return BadListen(listen, "IPv6 host must be in brackets");
  if (address.is_v4() && bracketed) return BadListen(listen, "IPv4 host must not be in brackets");

  unsigned port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, parse_error] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || parse_error != std::errc() || ptr != end || port > 65535) {
    return BadListen(listen, "port must be 0..65535");
  }
  return ListenAddress{.host = std::string(host), .port = static_cast<uint16_t>(port)};
}

}  // namespace adserver::http::detail
