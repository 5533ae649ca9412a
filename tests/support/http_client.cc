#include "support/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <optional>

namespace adserver::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

bool IEquals(std::string_view a, std::string_view b) {
  return beast::iequals(beast::string_view(a.data(), a.size()),
                        beast::string_view(b.data(), b.size()));
}

HttpResult Failure(std::string error) {
  HttpResult result;
  result.error = std::move(error);
  return result;
}

HttpResult Failure(std::string_view what, const ErrorCode& ec) {
  return Failure(std::string(what) + ": " + ec.message());
}

}  // namespace

std::string HttpResult::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (IEquals(key, name)) return value;
  }
  return "";
}

bool HttpResult::HasHeader(std::string_view name) const {
  for (const auto& header : headers) {
    if (IEquals(header.first, name)) return true;
  }
  return false;
}

struct HttpClient::Impl {
  std::string host;
  uint16_t port;
  std::chrono::milliseconds timeout;
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  // Runs the pending asynchronous operation(s) to completion; the stream's expiry bounds them.
  void Run() {
    ioc.restart();
    ioc.run();
  }
};

HttpClient::HttpClient(std::string host, uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout = timeout;
}

HttpClient::~HttpClient() = default;

bool HttpClient::connected() const { return impl_->stream.has_value(); }

void HttpClient::Close() {
  if (!impl_->stream) return;
  ErrorCode ignored;
  impl_->stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  impl_->stream->close();
  impl_->stream.reset();
  impl_->buffer.clear();
}

std::string HttpClient::Connect() {
  if (impl_->stream) return "";
  ErrorCode ec;
  tcp::endpoint endpoint(asio::ip::make_address(impl_->host, ec), impl_->port);
  if (ec) return "connect: " + ec.message();
  impl_->stream.emplace(impl_->ioc);
  impl_->stream->expires_after(impl_->timeout);
  impl_->stream->async_connect(endpoint, [&ec](const ErrorCode& e) { ec = e; });
  impl_->Run();
  if (ec) {
    impl_->stream.reset();
    return "connect: " + ec.message();
  }
  impl_->stream->socket().set_option(tcp::no_delay(true), ec);
  impl_->buffer.clear();
  return "";
}

std::string HttpClient::SendRaw(std::string_view bytes) {
  if (std::string error = Connect(); !error.empty()) return error;
  ErrorCode ec;
  impl_->stream->expires_after(impl_->timeout);
  asio::async_write(*impl_->stream, asio::buffer(bytes.data(), bytes.size()),
                    [&ec](const ErrorCode& e, size_t) { ec = e; });
  impl_->Run();
  if (ec) {
    Close();
    return "write: " + ec.message();
  }
  return "";
}

HttpResult HttpClient::Send(std::string_view method, std::string_view target,
                            const HttpHeaders& headers, std::string_view body) {
  bhttp::request<bhttp::string_body> request;
  request.method_string(beast::string_view(method.data(), method.size()));
  request.target(beast::string_view(target.data(), target.size()));
  request.version(11);
  request.set(bhttp::field::host, impl_->host + ":" + std::to_string(impl_->port));
  bool framed = false;
  for (const auto& [name, value] : headers) {
    request.insert(name, value);
    framed = framed || IEquals(name, "Content-Length") || IEquals(name, "Transfer-Encoding");
  }
  request.body() = std::string(body);
  bool has_body = !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  if (!framed && has_body) request.content_length(body.size());

  if (std::string error = Connect(); !error.empty()) return Failure(error);
  ErrorCode ec;
  impl_->stream->expires_after(impl_->timeout);
  bhttp::async_write(*impl_->stream, request, [&ec](const ErrorCode& e, size_t) { ec = e; });
  impl_->Run();
  if (ec) {
    Close();
    return Failure("write", ec);
  }
  return ReadResponse(method == "HEAD");
}

HttpResult HttpClient::Post(std::string_view target, std::string_view body,
                            std::string_view content_type) {
  return Send("POST", target, {{"Content-Type", std::string(content_type)}}, body);
}

HttpResult HttpClient::ReadResponse(bool head) {
  if (!impl_->stream) return Failure("read: not connected");
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(boost::none);
  parser.skip(head);
  ErrorCode ec;
  impl_->stream->expires_after(impl_->timeout);
  bhttp::async_read(*impl_->stream, impl_->buffer, parser,
                    [&ec](const ErrorCode& e, size_t) { ec = e; });
  impl_->Run();
  if (ec) {
    Close();
    return Failure("read", ec);
  }
  const auto& message = parser.get();
  HttpResult result;
  result.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    result.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  result.body = message.body();
  result.keep_alive = message.keep_alive();
  if (!result.keep_alive) Close();
  return result;
}

std::string HttpClient::ReadRaw(std::chrono::milliseconds timeout) {
  std::string out(static_cast<const char*>(impl_->buffer.data().data()), impl_->buffer.size());
  impl_->buffer.clear();
  if (!impl_->stream) return out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  impl_->stream->expires_at(deadline);
  for (;;) {
    char chunk[4096];
    ErrorCode ec;
    size_t n = 0;
    impl_->stream->async_read_some(asio::buffer(chunk), [&](const ErrorCode& e, size_t bytes) {
      ec = e;
      n = bytes;
    });
    impl_->Run();
    out.append(chunk, n);
    if (ec) break;
  }
  Close();
  return out;
}

bool HttpClient::WaitForClose(std::chrono::milliseconds timeout) {
  impl_->buffer.clear();
  if (!impl_->stream) return true;
  impl_->stream->expires_after(timeout);
  for (;;) {
    char chunk[4096];
    ErrorCode ec;
    impl_->stream->async_read_some(asio::buffer(chunk),
                                   [&ec](const ErrorCode& e, size_t) { ec = e; });
    impl_->Run();
    if (!ec) continue;
    bool timed_out = ec == beast::error::timeout;
    Close();
    return !timed_out;
  }
}

}  // namespace adserver::testing
