#pragma once

#include "http/router.h"

namespace adserver::console {

// The web console's static files (issue 16), compiled into the binary: `GET /console/` (the
// page), `/console/app.js`, `/console/app.css` and `/console/chart.js` (Debian's Chart.js), and
// `GET /console` redirecting to `/console/`; also `GET /openapi.yaml`, the OpenAPI 3.1 document
// of the whole HTTP API (docs/openapi.yaml, `application/yaml`), embedded the same way. Each
// answer carries its Content-Type, an ETag (`If-None-Match` → 304), `Cache-Control: no-cache`
// (revalidate, so an upgraded binary is seen at once; the OpenAPI document: `public,
// max-age=3600`), a Content-Security-Policy allowing only this origin's scripts, styles and API,
// and `X-Content-Type-Options: nosniff`. The page talks to `/console/api/session` and the
// admin API (accounts_admin, reports_admin); nothing here reads a store. Handlers run inline
// (memory only). Call before the server starts.
void RegisterRoutes(http::Router& router);

// The Content-Security-Policy of every console answer.
inline constexpr char kContentSecurityPolicy[] =
    // img-src https: (issue 38 item 4): ads' images (https URLs, the API's rule) are shown in the
    // previews and the review queue; every answer's Referrer-Policy is no-referrer, so an image
    // host learns nothing of the console's pages.
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

}  // namespace adserver::console
