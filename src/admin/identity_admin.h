#pragma once

#include <string>

#include "admin/admin_api.h"
#include "common/crypto.h"
#include "http/router.h"
#include "identity/identity_service.h"

namespace adserver::admin {

// Privacy operations on the identity graph, part of the admin API (same bearer token, worker
// pool, error shape):
//   GET    /admin/v1/identities/by-wallet/{address}  what is stored for the wallet
//   DELETE /admin/v1/identities/by-wallet/{address}  erases every link of it (cookie identities
//                                                     and localIds; emptied ones are deleted)
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
