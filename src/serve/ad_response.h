#pragma once

// The ad routes' answers (spec 2.4, 7; compatibility.md): JSON bodies, no-fills by variant, the
// error shape, and CORS. No state: every function renders from its arguments.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "decision/engine.h"
#include "http/message.h"
#include "serve/ad_request.h"

namespace adserver::serve {

inline bool IsEarlier(Variant variant) { return variant == Variant::kEarlier; }

// A JSON answer, never cached.
http::Response JsonResponse(int status, std::string body);
// The spec's error shape: {"error": message, "details": [{field, message}...]}.
http::Response ErrorAnswer(int status, std::string_view message,
                           const std::vector<FieldError>& details = {});
// No ad: 204 (current) or the earlier variant's 404 {"error":"No ad available",...}.
http::Response NoFill(Variant variant);
// The earlier variant's no-fill 404, with `localId` when the SDK should replace (or, with
// "WALLET_CACHE_VOID", forget) its localId.
http::Response NoAdEarlier(std::optional<std::string_view> local_id);

// The 200 body of an ad answer (spec 2.4: the current variant's fields, or the earlier one's
// with walletAddress and localId). `decision` must hold an ad. Public for the micro-benchmark.
// `click_url`, when not empty, replaces the ad's ctaUrl (a live key's click redirect).
// Appends the ad's pieces rendered once per catalog (serve/ad_render.h): only the wallet, the
// click URL, adUnitId and localId (request data) are escaped per request.
std::string AdResponseBody(const AdRequest& request, const decision::Decision& decision,
                           std::string_view click_url = {});

// CORS (not in the spec; required by the clients, compatibility.md): /v1/ads is credentialed
// and echoes the Origin (unless `expose_to_origin` is false: an origin the key's publisher did
// not list); /api/ads is public and answers "*".
void AddCors(http::Response& response, const http::Request& request, Variant variant,
             bool expose_to_origin);

}  // namespace adserver::serve
