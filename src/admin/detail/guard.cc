#include "admin/detail/guard.h"

#include <exception>
#include <string_view>

#include "common/log.h"

namespace adserver::admin::detail {
namespace {

constexpr std::string_view kDisabledMessage = "admin API is disabled (set ADSERVER_ADMIN_TOKEN)";

bool Authorized(const http::Request& request, const Sha256Digest& token_hash) {
  std::string_view value = request.Header("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = value[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return false;
  }
  std::string_view token = value.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return ConstantTimeEqual(Sha256(token), token_hash);
}

}  // namespace

http::Response Guarded(const AdminOptions& options, const Sha256Digest& token_hash,
                       const http::Request& request,
                       const std::function<http::Response()>& handler) {
  if (options.token.empty()) return http::ErrorResponse(404, kDisabledMessage);
  if (!Authorized(request, token_hash)) {
    http::Response response = http::ErrorResponse(401, "missing or invalid admin token");
    response.SetHeader("WWW-Authenticate", "Bearer");
    return response;
  }
  try {
    return handler();
  } catch (const std::exception& e) {
    // Handlers return Statuses; this is a last line of defence (e.g. allocation failure).
    ADS_LOG(error, "admin handler threw", "path", request.path, "what", e.what());
    return http::ErrorResponse(500, "internal error");
  }
}

}  // namespace adserver::admin::detail
