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

  // First header with this name (case-insensitive), or empty view when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
  // Path parameter by name, or empty view.
  std::string_view Param(std::string_view name) const;
};

struct Response {
  int status = 200;
  // Extra headers. The server adds Content-Length, Date-less minimal framing, Connection.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  void SetHeader(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
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
