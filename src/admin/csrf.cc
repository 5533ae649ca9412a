#include "admin/csrf.h"

#include "common/crypto.h"

namespace adserver::admin {
namespace {

// "https://a.example:8443" -> "a.example:8443"; empty when it is not an http(s) origin.
std::string_view OriginHost(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.starts_with(scheme)) return origin.substr(scheme.size());
  }
  return {};
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

Status CheckCsrf(const CsrfCheck& check) {
  if (check.session_token.empty() || !ConstantTimeEqual(check.header_token, check.session_token)) {
    return PermissionDeniedError("missing or wrong X-CSRF-Token header (returned at sign-in)");
  }
  return CheckSameOrigin(check);
}

Status CheckSameOrigin(const CsrfCheck& check) {
  if (!check.sec_fetch_site.empty() && !EqualsIgnoreCase(check.sec_fetch_site, "same-origin")) {
    return PermissionDeniedError("cross-site request refused (Sec-Fetch-Site)");
  }
  if (!check.origin.empty()) {
    bool same_host = !check.host.empty() && EqualsIgnoreCase(OriginHost(check.origin), check.host);
    bool public_origin =
        !check.public_origin.empty() && EqualsIgnoreCase(check.origin, check.public_origin);
    if (!same_host && !public_origin) {
      return PermissionDeniedError("cross-origin request refused (Origin)");
    }
  }
  return OkStatus();
}

}  // namespace adserver::admin
