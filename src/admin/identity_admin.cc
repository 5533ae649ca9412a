#include "admin/identity_admin.h"

#include <optional>
#include <utility>

#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/records_json.h"
#include "common/address.h"
#include "common/check.h"
#include "common/log.h"

namespace adserver::admin {
namespace {

using detail::Json;
using detail::JsonResponse;

constexpr std::string_view kPath = "/admin/v1/identities/by-wallet/{address}";

// Identities are not stored server-side (they live in sealed cookies and localIds), so
// `identities` is always empty; what the server holds for a wallet is at most its erasure.
Json WalletJson(const identity::IdentityService& identities, const Address& wallet) {
  std::optional<int64_t> erased_at = identities.ErasedAt(wallet);
  return Json{{"wallet", FormatAddress(wallet)},
              {"identities", Json::array()},
              {"erased", erased_at.has_value()},
              {"erasedAt", erased_at ? detail::TimeToJson(*erased_at) : Json(nullptr)}};
}

http::Response Handle(identity::IdentityService& identities, const http::Request& request) {
  std::optional<Address> wallet = ParseAddress(request.Param("address"));
  if (!wallet) {
    return http::ErrorResponse(
        InvalidFieldError("address", "must be 0x followed by 40 hex digits"));
  }
  if (request.method == http::Method::kDelete) {
    Result<store::ErasureRecord> erased = identities.EraseWallet(*wallet);
    if (!erased.ok()) return http::ErrorResponse(erased.status());
    // erasedLinks: stored links removed, always 0 now that nothing is stored per identity;
    // the erasure reaches every cookie and localId through the erasure list instead.
    return JsonResponse(200, Json{{"wallet", FormatAddress(*wallet)},
                                  {"erasedLinks", 0},
                                  {"erasedAt", detail::TimeToJson(erased->erased_at)}});
  }
  return JsonResponse(200, WalletJson(identities, *wallet));
}

}  // namespace

IdentityAdminApi::IdentityAdminApi(identity::IdentityService& identities, const Authenticator& auth)
    : identities_(identities), auth_(auth) {}

void IdentityAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route = detail::GuardedRoute(auth_, 64 * 1024);
  for (http::Method method : {http::Method::kGet, http::Method::kDelete}) {
    router.Add(
        method, std::string(kPath),
        [this](const http::Request& request) {
          return detail::Guarded(auth_, Audience::kOperator, request,
                                 [&](const Principal&) { return Handle(identities_, request); });
        },
        route);
  }
}

}  // namespace adserver::admin
