#pragma once

#include <functional>

#include "admin/admin_api.h"
#include "common/crypto.h"
#include "http/message.h"

namespace adserver::admin::detail {

// The admin API's gate, shared by every admin route: 404 while the admin API is disabled (no
// token configured), 401 with `WWW-Authenticate: Bearer` unless the request carries
// `Authorization: Bearer <token>` (compared as SHA-256 digests in constant time), else
// `handler()`; an exception escaping it becomes a logged 500.
http::Response Guarded(const AdminOptions& options, const Sha256Digest& token_hash,
                       const http::Request& request,
                       const std::function<http::Response()>& handler);

}  // namespace adserver::admin::detail
