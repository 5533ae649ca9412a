#include "common/status.h"

namespace adserver {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kConflict: return "CONFLICT";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kInternal: return "INTERNAL";
    case Code::kPermissionDenied:
      return "PERMISSION_DENIED";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code_));
  out += ": ";
  out += message_;
  for (const FieldError& d : details_) {
    out += "; ";
    out += d.field;
    out += ": ";
    out += d.message;
  }
  return out;
}

}  // namespace adserver
