#pragma once

#include <string_view>

#include "common/status.h"

namespace adserver::admin {

// Cross-site request checks for a write authenticated by the session cookie (issue 16).
struct CsrfCheck {
  std::string_view header_token;    // X-CSRF-Token as sent
  std::string_view session_token;   // the token bound to the session
  std::string_view origin;          // Origin header, may be empty
  std::string_view sec_fetch_site;  // Sec-Fetch-Site header, may be empty
  std::string_view host;            // Host header
  std::string_view public_origin;   // scheme://host[:port] of http.public_url, may be empty
};
// OK when the CSRF header matches the session's token (constant time) and, when present,
// Origin names this server (the Host it was sent to, or the public URL) and Sec-Fetch-Site is
// same-origin; else PermissionDenied saying which.
Status CheckCsrf(const CsrfCheck& check);
// The Origin and Sec-Fetch-Site part of CheckCsrf alone (for the sign-in itself, which has no
// token yet).
Status CheckSameOrigin(const CsrfCheck& check);

}  // namespace adserver::admin
