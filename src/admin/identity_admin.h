#pragma once

#include <string>

#include "admin/admin_api.h"
#include "common/crypto.h"
#include "http/router.h"
#include "identity/identity_service.h"

namespace adserver::admin {

// Privacy operations on identities, part of the admin API (same bearer token, worker pool,
// error shape):
//   GET    /admin/v1/identities/by-wallet/{address}  what is stored for the wallet (identities
//                                                     are not stored; whether it is erased)
//   DELETE /admin/v1/identities/by-wallet/{address}  erases it from every identity cookie and
//                                                     localId issued so far (erasure list)
// Thread-safe.
class IdentityAdminApi {
 public:
  // identities must outlive this object.
  IdentityAdminApi(identity::IdentityService& identities, AdminOptions options);
  void RegisterRoutes(http::Router& router);

 private:
  identity::IdentityService& identities_;
  AdminOptions options_;
  Sha256Digest token_hash_{};
};

}  // namespace adserver::admin
