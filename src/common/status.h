#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace adserver {

// Error codes shared by every module. Translated to HTTP in exactly one place,
// http::ToHttpStatus().
enum class Code {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kConflict,
  kUnavailable,
  kDeadlineExceeded,
  kInternal,
  // The caller is known but its role may not do this (HTTP 403).
  kPermissionDenied,
};

std::string_view CodeName(Code code);

// A field-level problem attached to an InvalidArgument status (maps to the spec's
// `details[{field, message}]`).
struct FieldError {
  std::string field;
  std::string message;
  bool operator==(const FieldError&) const = default;
};

// Status is a code plus a human-readable message and, for InvalidArgument, optional
// field errors. Cheap to copy when ok. Not thread-safe to mutate; values are copied freely.
class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(Code code, std::string message, std::vector<FieldError> details)
      : code_(code), message_(std::move(message)), details_(std::move(details)) {}

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<FieldError>& details() const { return details_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<FieldError> details_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
inline Status InvalidArgumentError(std::string msg, std::vector<FieldError> details) {
  return {Code::kInvalidArgument, std::move(msg), std::move(details)};
}
inline Status InvalidFieldError(std::string field, std::string msg) {
  std::string top = msg;
  return {Code::kInvalidArgument, std::move(top), {FieldError{std::move(field), std::move(msg)}}};
}
inline Status NotFoundError(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
inline Status ConflictError(std::string msg) { return {Code::kConflict, std::move(msg)}; }
inline Status UnavailableError(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
inline Status DeadlineExceededError(std::string msg) {
  return {Code::kDeadlineExceeded, std::move(msg)};
}
inline Status InternalError(std::string msg) { return {Code::kInternal, std::move(msg)}; }
inline Status PermissionDeniedError(std::string msg) {
  return {Code::kPermissionDenied, std::move(msg)};
}

// Result<T> holds either a T or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace adserver

#define ADS_STATUS_CONCAT_INNER(a, b) a##b
#define ADS_STATUS_CONCAT(a, b) ADS_STATUS_CONCAT_INNER(a, b)

#define ADS_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::adserver::Status ads_status_tmp_ = (expr);  \
    if (!ads_status_tmp_.ok()) return ads_status_tmp_; \
  } while (0)

#define ADS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define ADS_ASSIGN_OR_RETURN(lhs, expr) \
  ADS_ASSIGN_OR_RETURN_IMPL(ADS_STATUS_CONCAT(ads_result_, __LINE__), lhs, expr)
