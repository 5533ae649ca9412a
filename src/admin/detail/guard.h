#pragma once

#include <functional>

#include "admin/authenticator.h"
#include "admin/scope.h"
#include "http/message.h"
#include "http/router.h"

namespace adserver::admin::detail {

using ScopedHandler = std::function<http::Response(const Principal&)>;

// The admin API's gate, shared by every admin route: authenticates the caller (operator token,
// user token or console session; see Authenticator::Authenticate for the 404/401/403 answers),
// refuses callers outside the route's `audience` (403 for writes and listings, 404 for a read
// naming an object in its path), else runs `handler(principal)`, which narrows to the caller's
// tenant. An exception escaping it becomes a logged 500.
http::Response Guarded(const Authenticator& auth, Audience audience, const http::Request& request,
                       const ScopedHandler& handler);

// The options of an admin route: on the worker pool, bodies up to `max_body_bytes`, and a
// caller no body could authenticate refused from the header, before the body is read
// (Authenticator::Admit, issue 39).
http::RouteOptions GuardedRoute(const Authenticator& auth, size_t max_body_bytes);

}  // namespace adserver::admin::detail
