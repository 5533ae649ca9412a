#include "http/message.h"

#include <cstddef>

#include "common/json_writer.h"

namespace adserver::http {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

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

std::string ErrorBody(std::string_view message, const std::vector<FieldError>& details) {
  std::string out;
  out.reserve(32 + message.size() + details.size() * 48);
  out += "{\"error\":";
  AppendJsonString(out, message);
  out += ",\"details\":[";
  for (size_t i = 0; i < details.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"field\":";
    AppendJsonString(out, details[i].field);
    out += ",\"message\":";
    AppendJsonString(out, details[i].message);
    out += '}';
  }
  out += "]}";
  return out;
}

Response ErrorResponse(int status, std::string_view message,
                       const std::vector<FieldError>& details) {
  Response response;
  response.status = status;
  response.headers.reserve(2);
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
  }
  return 500;
}

Response ErrorResponse(const Status& status) {
  return ErrorResponse(ToHttpStatus(status), status.message(), status.details());
}

}  // namespace adserver::http
