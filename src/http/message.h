#pragma once

// HTTP request/response values passed between http/ and the handlers. No Boost types here, so
// handler modules compile without Beast.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace adserver::http {

enum class Method : uint8_t { kGet, kHead, kPost, kPut, kPatch, kDelete, kOptions, kOther };
std::string_view MethodName(Method m);

struct Header {
  std::string_view name;
  std::string_view value;
};

// One request. All views point into buffers owned by the session and stay valid until the
// handler's response has been produced.
struct Request {
  Method method = Method::kOther;
  std::string_view target;  // as sent, e.g. "/v1/ads?x=1"
  std::string_view path;    // target without the query
  std::string_view query;   // after '?', may be empty
  std::vector<::adserver::http::Header> headers;
  std::string_view body;
  // Path parameters captured by the route pattern ("{id}" -> ("id", "42")), in order.
  std::vector<std::pair<std::string_view, std::string_view>> params;
  // The client's IP address as the connection saw it (no proxy headers), e.g. "127.0.0.1";
  // empty when unknown (requests built by tests or the CLI).
  std::string_view remote_ip;
  // The request's id: its valid X-Request-Id, else one the server made; every response carries
  // it back as X-Request-Id. Empty for requests built by tests or the CLI.
  std::string_view request_id;

  // First header with this name (case-insensitive), or empty view when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
  // Path parameter by name, or empty view.
  std::string_view Param(std::string_view name) const;
};

// One response. The server adds the framing (Content-Length, Connection).
struct Response {
  int status = 200;
  std::string body;

  // Adds a header (names may repeat, e.g. Set-Cookie). Content-Length, Transfer-Encoding and
  // Connection are the server's and ignored here. Neither may contain CR or LF.
  void SetHeader(std::string_view name, std::string_view value);
  // First header with this name (case-insensitive), or empty view when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
  // All headers in the order set, as views into this response (valid until it changes).
  std::vector<::adserver::http::Header> Headers() const;
  // The headers as sent: "Name: value\r\n" for each.
  std::string_view header_lines() const { return header_lines_; }

 private:
  // Kept as they go on the wire: one allocation for all headers, one copy into the output.
  std::string header_lines_;
};

// JSON error body of the spec (2.6): {"error": message, "details": [{field, message}...]}.
std::string ErrorBody(std::string_view message, const std::vector<FieldError>& details = {});
// A response with that body and `Content-Type: application/json`, `Cache-Control: no-store`.
Response ErrorResponse(int status, std::string_view message,
                       const std::vector<FieldError>& details = {});
// Maps a Status code to an HTTP status: InvalidArgument 400, NotFound 404, Conflict 409,
// Unavailable 503, DeadlineExceeded 504, Internal 500, Ok 200. The one place this happens.
int ToHttpStatus(const Status& status);
// ErrorResponse(ToHttpStatus(status), status.message(), status.details()).
Response ErrorResponse(const Status& status);

}  // namespace adserver::http
