#include "admin/identity_admin.h"

#include <optional>
#include <utility>

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

// Same check as the rest of the admin API: `Authorization: Bearer <token>`, constant time.
bool Authorized(const http::Request& request, const Sha256Digest& token_hash) {
  std::string_view value = request.Header("Authorization");
  if (value.size() <= 7) return false;
  std::string scheme(value.substr(0, 7));
  for (char& c : scheme) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (scheme != "bearer ") return false;
  std::string_view token = value.substr(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return ConstantTimeEqual(Sha256(token), token_hash);
}

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

IdentityAdminApi::IdentityAdminApi(identity::IdentityService& identities, AdminOptions options)
    : identities_(identities), options_(std::move(options)) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  if (!options_.token.empty()) token_hash_ = Sha256(options_.token);
}

void IdentityAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route{.dispatch = http::Dispatch::kWorker, .max_body_bytes = 64 * 1024};
  for (http::Method method : {http::Method::kGet, http::Method::kDelete}) {
    router.Add(
        method, std::string(kPath),
        [this](const http::Request& request) {
          if (options_.token.empty()) {
            return http::ErrorResponse(404, "admin API is disabled (set ADSERVER_ADMIN_TOKEN)");
          }
          if (!Authorized(request, token_hash_)) {
            http::Response response = http::ErrorResponse(401, "missing or invalid admin token");
            response.SetHeader("WWW-Authenticate", "Bearer");
            return response;
          }
          try {
            return Handle(identities_, request);
          } catch (const std::exception& e) {
            ADS_LOG(error, "identity admin handler threw", "what", e.what());
            return http::ErrorResponse(500, "internal error");
          }
        },
        route);
  }
}

}  // namespace adserver::admin
