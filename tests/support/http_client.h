#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adserver::testing {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// One HTTP response, or the transport error that prevented reading it.
struct HttpResult {
  // Empty on success; otherwise what failed ("connect: Connection refused", "read: timeout").
  std::string error;
  int status = 0;
  HttpHeaders headers;
  std::string body;
  bool keep_alive = false;

  bool ok() const { return error.empty(); }
  // First header with this name (case-insensitive), or "" when absent.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

// Blocking HTTP/1.1 test client on one keep-alive connection (Beast). Connects lazily and
// reconnects when the server closed the previous connection. Every operation is bounded by the
// client's timeout. Not thread-safe; use one client per thread.
//
//   HttpClient client("127.0.0.1", server->port());
//   HttpResult r = client.Send("POST", "/v1/ads", {{"Content-Type", "application/json"}}, body);
class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request and reads its response. Adds Host, and Content-Length when `body` is
  // non-empty or the method is POST/PUT/PATCH (unless `headers` sets Content-Length or
  // Transfer-Encoding). For "HEAD" the response body is not read.
  HttpResult Send(std::string_view method, std::string_view target, const HttpHeaders& headers = {},
                  std::string_view body = {});
  HttpResult Get(std::string_view target, const HttpHeaders& headers = {}) {
    return Send("GET", target, headers);
  }
  HttpResult Post(std::string_view target, std::string_view body,
                  std::string_view content_type = "application/json");

  // Raw access for malformed, partial or pipelined traffic on the same connection.
  // Connects if needed; returns "" or the error.
  std::string Connect();
  std::string SendRaw(std::string_view bytes);
  // Reads one response from the connection (e.g. after SendRaw of pipelined requests).
  // `head` skips the body, as for a response to HEAD.
  HttpResult ReadResponse(bool head = false);
  // Everything the server sends until it closes the connection or `timeout` passes
  // (including bytes already buffered by earlier reads).
  std::string ReadRaw(std::chrono::milliseconds timeout);
  // True if the server closes the connection (EOF or reset) within `timeout`; false if the
  // connection is still open then. Discards any data received meanwhile.
  bool WaitForClose(std::chrono::milliseconds timeout);
  bool connected() const;
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adserver::testing
