#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "admin/authenticator.h"
#include "http/router.h"
#include "store/account_store.h"
#include "store/inventory_store.h"

namespace adserver::admin {

// Users, their bearer tokens and console sessions (issue 16), part of the admin API:
//   POST/GET /admin/v1/users, GET/PATCH/DELETE /admin/v1/users/{id}     operators only
//   POST /admin/v1/tokens        a token for the caller, or (operators) {"userId":N}
//   GET /admin/v1/tokens         the caller's tokens (operators: every token, ?userId=N)
//   DELETE /admin/v1/tokens/{id} revokes one of the caller's tokens (operators: any)
//   POST/GET/DELETE /console/api/session   sign in (cookie + CSRF token), who, sign out
//   POST /console/api/password   the caller changes its own password (currentPassword
//                                required; ends the user's other sessions)
// Passwords are stored as argon2id hashes and never answered. Thread-safe.
class AccountsAdminApi {
 public:
  // accounts, inventory (publishers and communities users belong to) and auth must outlive
  // this object. Hashes a dummy password once (failed sign-ins of unknown emails verify it).
  AccountsAdminApi(store::AccountStore& accounts, store::InventoryStore& inventory,
                   const Authenticator& auth);
  void RegisterRoutes(http::Router& router);

 private:
  http::Response CreateUser(const Principal& caller, const http::Request& request);
  http::Response ListUsers(const Principal& caller, const http::Request& request);
  http::Response GetUser(const Principal& caller, const http::Request& request);
  http::Response PatchUser(const Principal& caller, const http::Request& request);
  http::Response DeleteUser(const Principal& caller, const http::Request& request);
  http::Response CreateToken(const Principal& caller, const http::Request& request);
  http::Response ListTokens(const Principal& caller, const http::Request& request);
  http::Response RevokeToken(const Principal& caller, const http::Request& request);
  http::Response ChangePassword(const Principal& caller, const http::Request& request);
  // nullopt when `password` is the user's; else the answer: 400 (field currentPassword), or 429
  // while failed attempts back off (the sign-in limiter, per user).
  std::optional<http::Response> RefuseCurrentPassword(const store::UserRecord& user,
                                                      const std::string& password);
  http::Response SignIn(const http::Request& request);
  http::Response Who(const http::Request& request);
  http::Response SignOut(const http::Request& request);
  // Reads `body` onto `user` (password hashed), validated; the error status otherwise.
  Status DecodeUser(const nlohmann::json& body, bool creating, store::UserRecord& user);

  store::AccountStore& accounts_;
  store::InventoryStore& inventory_;
  const Authenticator& auth_;
  std::string dummy_hash_;
};

}  // namespace adserver::admin
