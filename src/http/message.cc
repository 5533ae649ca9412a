#include "http/message.h"

#include <cstddef>

#include "common/json_writer.h"
#include "http/detail/ascii.h"

namespace adserver::http {
namespace {

using detail::EqualsIgnoreCase;

// Headers the server owns; a handler's values for them are ignored.
bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection");
}

// A header line is name, kSeparator, value, kLineEnd. Appended as string_views: a `const char*`
// literal would make std::string::append call strlen.
constexpr std::string_view kSeparator = ": ";
constexpr std::string_view kLineEnd = "\r\n";

// Calls f(Header) for each "name: value\r\n" line of `lines` until it returns true.
template <typename F>
void FindHeaderLine(std::string_view lines, F f) {
  while (!lines.empty()) {
    std::string_view line = lines.substr(0, lines.find(kLineEnd));
    lines.remove_prefix(line.size() + kLineEnd.size());
    size_t separator = line.find(kSeparator);
    if (f(Header{line.substr(0, separator), line.substr(separator + kSeparator.size())})) return;
  }
}

// Bytes reserved by a response's first header: all of a typical response's headers fit.
constexpr size_t kHeaderBytes = 256;

}  // namespace

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kGet:
      return "GET";
    case Method::kHead:
      return "HEAD";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kPatch:
      return "PATCH";
    case Method::kDelete:
      return "DELETE";
    case Method::kOptions:
      return "OPTIONS";
    case Method::kOther:
      break;
  }
  return "OTHER";
}

std::string_view Request::Header(std::string_view name) const {
  for (const auto& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

bool Request::HasHeader(std::string_view name) const {
  for (const auto& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return true;
  }
  return false;
}

std::string_view Request::Param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return {};
}

void Response::SetHeader(std::string_view name, std::string_view value) {
  if (IsFramingHeader(name)) return;
  if (header_lines_.empty()) header_lines_.reserve(kHeaderBytes);
  header_lines_.append(name).append(kSeparator).append(value).append(kLineEnd);
}

std::string_view Response::Header(std::string_view name) const {
  std::string_view value;
  FindHeaderLine(header_lines_, [&](const ::adserver::http::Header& h) {
    if (!EqualsIgnoreCase(h.name, name)) return false;
    value = h.value;
    return true;
  });
  return value;
}

bool Response::HasHeader(std::string_view name) const {
  bool found = false;
  FindHeaderLine(header_lines_, [&](const ::adserver::http::Header& h) {
    found = EqualsIgnoreCase(h.name, name);
    return found;
  });
  return found;
}

std::vector<Header> Response::Headers() const {
  std::vector<::adserver::http::Header> headers;
  FindHeaderLine(header_lines_, [&](const ::adserver::http::Header& h) {
    headers.push_back(h);
    return false;
  });
  return headers;
}

std::string ErrorBody(std::string_view message, const std::vector<FieldError>& details) {
  using namespace std::string_view_literals;  // see kSeparator
  std::string out;
  out.reserve(32 + message.size() + details.size() * 48);
  out += "{\"error\":"sv;
  AppendJsonString(out, message);
  out += ",\"details\":["sv;
  for (size_t i = 0; i < details.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"field\":"sv;
    AppendJsonString(out, details[i].field);
    out += ",\"message\":"sv;
    AppendJsonString(out, details[i].message);
    out += '}';
  }
  out += "]}"sv;
  return out;
}

Response ErrorResponse(int status, std::string_view message,
                       const std::vector<FieldError>& details) {
  Response response;
  response.status = status;
  response.SetHeader("Content-Type", "application/json");
  response.SetHeader("Cache-Control", "no-store");
  response.body = ErrorBody(message, details);
  return response;
}

int ToHttpStatus(const Status& status) {
  switch (status.code()) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
      return 400;
    case Code::kNotFound:
      return 404;
    case Code::kConflict:
      return 409;
    case Code::kUnavailable:
      return 503;
    case Code::kDeadlineExceeded:
      return 504;
    case Code::kInternal:
      return 500;
    case Code::kPermissionDenied:
      return 403;
  }
  return 500;
}

Response ErrorResponse(const Status& status) {
  return ErrorResponse(ToHttpStatus(status), status.message(), status.details());
}

}  // namespace adserver::http
