#pragma once

#include <string>

#include "admin/authenticator.h"
#include "http/router.h"
#include "identity/identity_service.h"

namespace adserver::admin {

// Privacy operations on identities, part of the admin API (operators only; worker pool, error
// shape):
//   GET    /admin/v1/identities/by-wallet/{address}  what is stored for the wallet (identities
//                                                     are not stored; whether it is erased)
//   DELETE /admin/v1/identities/by-wallet/{address}  erases it from every identity cookie and
//                                                     localId issued so far (erasure list)
// Thread-safe.
class IdentityAdminApi {
 public:
  // identities and auth must outlive this object.
  IdentityAdminApi(identity::IdentityService& identities, const Authenticator& auth);
  void RegisterRoutes(http::Router& router);

 private:
  identity::IdentityService& identities_;
  const Authenticator& auth_;
};

}  // namespace adserver::admin
