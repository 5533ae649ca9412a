#include "admin/detail/guard.h"

#include <exception>
#include <variant>

#include "common/log.h"

namespace adserver::admin::detail {

http::Response Guarded(const Authenticator& auth, Audience audience, const http::Request& request,
                       const ScopedHandler& handler) {
  std::variant<Principal, http::Response> caller = auth.Authenticate(request);
  if (auto* refused = std::get_if<http::Response>(&caller)) return std::move(*refused);
  const Principal& principal = std::get<Principal>(caller);
  bool read_one = (request.method == http::Method::kGet || request.method == http::Method::kHead) &&
                  !request.params.empty();
  Status allowed = CheckAudience(principal, audience, read_one);
  if (!allowed.ok()) return http::ErrorResponse(allowed);
  try {
    return handler(principal);
  } catch (const std::exception& e) {
    // Handlers return Statuses; this is a last line of defence (e.g. allocation failure).
    ADS_LOG(error, "admin handler threw", "path", request.path, "what", e.what());
    return http::ErrorResponse(500, "internal error");
  }
}

http::RouteOptions GuardedRoute(const Authenticator& auth, size_t max_body_bytes) {
  return {.dispatch = http::Dispatch::kWorker,
          .max_body_bytes = max_body_bytes,
          .admit = [&auth](const http::Request& request) { return auth.Admit(request); },
          .compress = true};
}

}  // namespace adserver::admin::detail
