#include "admin/accounts_admin.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "admin/detail/event_text.h"
#include "admin/detail/guard.h"
#include "admin/detail/json_fields.h"
#include "admin/detail/records_json.h"
#include "common/check.h"
#include "common/log.h"
#include "common/password.h"

namespace adserver::admin {
namespace {

using detail::FieldErrors;
using detail::Json;
using detail::JsonResponse;
using detail::ObjectReader;

constexpr size_t kMaxEmailChars = 254;
constexpr size_t kMaxPasswordChars = 1024;

http::Response Fail(const Status& status) { return http::ErrorResponse(status); }

// The body as a JSON object (415 without application/json, 400 when not an object).
std::variant<Json, http::Response> ReadObject(const http::Request& request, bool allow_empty) {
  if (allow_empty && request.body.empty()) return Json::object();
  std::string_view type = request.Header("Content-Type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (store::EmailKey(type) != "application/json") {
    return http::ErrorResponse(415, "Content-Type must be application/json");
  }
  Result<Json> body = detail::ParseJsonObject(request.body);
  if (!body.ok() && body.status().details().empty()) {
    return Fail(InvalidArgumentError("request body must be a JSON object"));
  }
  if (!body.ok()) return Fail(body.status());
  return std::move(*body);
}

std::optional<store::Id> ParseId(std::string_view text) {
  std::optional<int64_t> id = detail::ParsePositiveInt(text);
  if (!id) return std::nullopt;
  return *id;
}

Json OptionalId(const std::optional<store::Id>& id) { return id ? Json(*id) : Json(nullptr); }

// The chains the console names (issue 38): id, name and explorer (null when none).
Json ChainsToJson(const std::vector<ChainInfo>& chains) {
  Json out = Json::array();
  for (const ChainInfo& c : chains) {
    out.push_back(Json{{"id", c.id},
                       {"name", c.name},
                       {"explorer", c.explorer.empty() ? Json(nullptr) : Json(c.explorer)}});
  }
  return out;
}

Json UserToJson(const store::UserRecord& u) {
  return Json{{"id", u.id},
              {"email", u.email},
              {"role", store::RoleName(u.role)},
              {"publisherId", OptionalId(u.publisher_id)},
              {"communityId", OptionalId(u.community_id)},
              {"createdAt", detail::TimeToJson(u.created_at)},
              {"updatedAt", detail::TimeToJson(u.updated_at)}};
}

Json TokenToJson(const store::UserTokenRecord& t) {
  return Json{{"id", t.id},
              {"userId", t.user_id},
              {"prefix", t.prefix},
              {"createdAt", detail::TimeToJson(t.created_at)},
              {"revokedAt", t.revoked_at ? detail::TimeToJson(*t.revoked_at) : Json(nullptr)},
              {"expiresAt", t.expires_at ? detail::TimeToJson(*t.expires_at) : Json(nullptr)}};
}

constexpr int64_t kSecondsPerDay = 24 * 60 * 60;
constexpr int64_t kMaxTokenDays = 3650;

// A plausible address: one '@' with text on both sides, no spaces or control characters.
bool ValidEmail(std::string_view email) {
  size_t at = email.find('@');
  if (email.empty() || email.size() > kMaxEmailChars || at == 0 || at == std::string_view::npos ||
      at + 1 >= email.size() || email.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  for (char c : email) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return true;
}

http::Response NoContent() {
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  return response;
}

std::string RetryAfterMessage(int64_t seconds) {
  return "too many failed sign-ins; retry in " + std::to_string(seconds) + " s";
}

}  // namespace

AccountsAdminApi::AccountsAdminApi(store::AccountStore& accounts, store::InventoryStore& inventory,
                                   const Authenticator& auth)
    : accounts_(accounts), inventory_(inventory), auth_(auth) {
  Result<std::string> dummy = HashPassword(RandomAlphanumeric(24), auth_.options().password_hash);
  ADS_CHECK(dummy.ok()) << dummy.status().ToString();
  dummy_hash_ = std::move(*dummy);
}

Status AccountsAdminApi::DecodeUser(const Json& body, bool creating, store::UserRecord& user) {
  FieldErrors errors;
  ObjectReader reader(body, "", errors);
  if (creating) reader.Require({"email", "password", "role"});
  reader.ReadString("email", user.email);
  std::string password;
  reader.ReadString("password", password);
  std::string role = std::string(store::RoleName(user.role));
  reader.ReadString("role", role);
  int64_t publisher_id = user.publisher_id.value_or(0);
  int64_t community_id = user.community_id.value_or(0);
  // null clears a tenant (docs/admin-api.md), so a role can change:
  // {"role":"operator","publisherId":null}.
  auto read_tenant = [&](const char* key, int64_t& out) {
    const Json* value = reader.Find(key);
    if (value != nullptr && value->is_null()) {
      out = 0;
    } else if (value != nullptr) {
      reader.ReadInt(key, out);
    }
  };
  read_tenant("publisherId", publisher_id);
  read_tenant("communityId", community_id);
  auto given = [&](const char* key) { return body.contains(key) && !body[key].is_null(); };
  reader.RejectUnknown();
  if (!errors.empty()) return errors.ToStatus();
  if (!ValidEmail(user.email)) errors.Add("email", "must be an email address");
  const size_t min = auth_.options().min_password_length;
  if (body.contains("password") && (password.size() < min || password.size() > kMaxPasswordChars)) {
    errors.Add("password", "must be " + std::to_string(min) + " to " +
                               std::to_string(kMaxPasswordChars) + " characters");
  }
  std::optional<store::Role> parsed = store::ParseRole(role);
  if (!parsed) errors.Add("role", "must be one of operator, publisher, advertiser");
  if (!errors.empty()) return errors.ToStatus();
  user.role = *parsed;
  user.publisher_id = publisher_id > 0 ? std::optional<store::Id>(publisher_id) : std::nullopt;
  user.community_id = community_id > 0 ? std::optional<store::Id>(community_id) : std::nullopt;
  // Changing the role drops the other role's tenant unless given again.
  if (user.role != store::Role::kPublisher) {
    if (given("publisherId")) {
      errors.Add("publisherId", "only publisher users have a publisherId");
    }
    user.publisher_id.reset();
  }
  if (user.role != store::Role::kAdvertiser) {
    if (given("communityId")) {
      errors.Add("communityId", "only advertiser users have a communityId");
    }
    user.community_id.reset();
  }
  if (user.role == store::Role::kPublisher) {
    if (!user.publisher_id) {
      errors.Add("publisherId", "is required for publisher users");
    } else if (inventory_.GetPublisher(*user.publisher_id).status().code() == Code::kNotFound) {
      errors.Add("publisherId", "unknown publisher");
    }
  }
  if (user.role == store::Role::kAdvertiser) {
    if (!user.community_id) {
      errors.Add("communityId", "is required for advertiser users");
    } else if (inventory_.GetCommunity(*user.community_id).status().code() == Code::kNotFound) {
      errors.Add("communityId", "unknown community");
    }
  }
  if (!errors.empty()) return errors.ToStatus();
  if (body.contains("password")) {
    ADS_ASSIGN_OR_RETURN(user.password_hash, HashPassword(password, auth_.options().password_hash));
  }
  return OkStatus();
}

http::Response AccountsAdminApi::CreateUser(const Principal&, const http::Request& request) {
  std::variant<Json, http::Response> body = ReadObject(request, /*allow_empty=*/false);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  store::UserRecord user;
  Status decoded = DecodeUser(std::get<Json>(body), /*creating=*/true, user);
  if (!decoded.ok()) return Fail(decoded);
  Result<store::UserRecord> created = accounts_.CreateUser(user, auth_.clock().NowSeconds());
  if (!created.ok()) return Fail(created.status());
  return JsonResponse(201, UserToJson(*created));
}

http::Response AccountsAdminApi::ListUsers(const Principal&, const http::Request&) {
  Result<std::vector<store::UserRecord>> users = accounts_.ListUsers();
  if (!users.ok()) return Fail(users.status());
  Json items = Json::array();
  for (const store::UserRecord& u : *users) items.push_back(UserToJson(u));
  return JsonResponse(200, Json{{"users", std::move(items)}});
}

http::Response AccountsAdminApi::GetUser(const Principal&, const http::Request& request) {
  std::optional<store::Id> id = ParseId(request.Param("id"));
  if (!id) return Fail(NotFoundError("user not found"));
  Result<store::UserRecord> user = accounts_.GetUser(*id);
  if (!user.ok()) return Fail(user.status());
  return JsonResponse(200, UserToJson(*user));
}

http::Response AccountsAdminApi::PatchUser(const Principal&, const http::Request& request) {
  std::variant<Json, http::Response> body = ReadObject(request, /*allow_empty=*/false);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  std::optional<store::Id> id = ParseId(request.Param("id"));
  if (!id) return Fail(NotFoundError("user not found"));
  Result<store::UserRecord> user = accounts_.GetUser(*id);
  if (!user.ok()) return Fail(user.status());
  Json& fields = std::get<Json>(body);
  bool keep_tokens = false;
  if (fields.contains("keepTokens")) {
    if (!fields["keepTokens"].is_boolean()) {
      return Fail(InvalidFieldError("keepTokens", "must be a boolean"));
    }
    keep_tokens = fields["keepTokens"].get<bool>();
    fields.erase("keepTokens");
  }
  Status decoded = DecodeUser(fields, /*creating=*/false, *user);
  if (!decoded.ok()) return Fail(decoded);
  Result<store::UserRecord> updated = accounts_.UpdateUser(*user, auth_.clock().NowSeconds());
  if (!updated.ok()) return Fail(updated.status());
  // A password set by an operator (a reset) signs the user out everywhere and, unless
  // keepTokens, revokes the user's bearer tokens (issue 39).
  if (fields.contains("password")) {
    Result<int64_t> ended = accounts_.DeleteUserSessions(updated->id, std::nullopt);
    if (!ended.ok()) return Fail(ended.status());
    if (!keep_tokens) {
      Result<int64_t> revoked = accounts_.RevokeUserTokens(updated->id, auth_.clock().NowSeconds());
      if (!revoked.ok()) return Fail(revoked.status());
    }
  }
  return JsonResponse(200, UserToJson(*updated));
}

http::Response AccountsAdminApi::DeleteUser(const Principal&, const http::Request& request) {
  std::optional<store::Id> id = ParseId(request.Param("id"));
  if (!id) return Fail(NotFoundError("user not found"));
  Status deleted = accounts_.DeleteUser(*id);
  if (!deleted.ok()) return Fail(deleted);
  return NoContent();
}

http::Response AccountsAdminApi::CreateToken(const Principal& caller,
                                             const http::Request& request) {
  std::variant<Json, http::Response> body = ReadObject(request, /*allow_empty=*/true);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  int64_t user_id = caller.user_id;
  reader.ReadInt("userId", user_id);
  std::optional<int64_t> days;
  if (std::get<Json>(body).contains("expiresInDays")) {
    int64_t value = 0;
    reader.ReadInt("expiresInDays", value);
    if (value < 1 || value > kMaxTokenDays) {
      errors.Add("expiresInDays", "must be an integer from 1 to " + std::to_string(kMaxTokenDays));
    }
    days = value;
  }
  reader.RejectUnknown();
  if (!errors.empty()) return Fail(errors.ToStatus());
  if (user_id != caller.user_id && !caller.IsOperator()) {
    return Fail(PermissionDeniedError("only operators issue tokens for other users"));
  }
  if (user_id <= 0) {
    return Fail(InvalidFieldError("userId", "is required: the operator token belongs to no user"));
  }
  Result<store::UserRecord> user = accounts_.GetUser(user_id);
  if (!user.ok() && user.status().code() == Code::kNotFound) {
    return Fail(InvalidFieldError("userId", "unknown user"));
  }
  if (!user.ok()) return Fail(user.status());
  Result<Authenticator::IssuedToken> issued = auth_.IssueToken(
      user->id, days ? std::optional<int64_t>(*days * kSecondsPerDay) : std::nullopt);
  if (!issued.ok() && issued.status().code() == Code::kConflict) {
    // The cap on active tokens (or the user went away meanwhile): 409 naming the user.
    return Fail(Status(Code::kConflict, "cannot issue another token",
                       {FieldError{"userId", issued.status().message()}}));
  }
  if (!issued.ok()) return Fail(issued.status());
  Json out = TokenToJson(issued->record);
  out["token"] = issued->secret;
  return JsonResponse(201, out);
}

http::Response AccountsAdminApi::ListTokens(const Principal& caller, const http::Request& request) {
  std::optional<store::Id> user_id;
  if (!caller.IsOperator()) user_id = caller.user_id;
  std::string_view query = request.query;
  if (query.starts_with("userId=")) {
    std::optional<store::Id> id = ParseId(query.substr(7));
    if (!id) return Fail(InvalidFieldError("userId", "must be a positive integer"));
    if (!CanManageUser(caller, *id)) return Fail(NotFoundError("user not found"));
    user_id = *id;
  } else if (!query.empty()) {
    return Fail(InvalidFieldError("query", "unknown query parameter (userId)"));
  }
  Result<std::vector<store::UserTokenRecord>> tokens = accounts_.ListTokens(user_id);
  if (!tokens.ok()) return Fail(tokens.status());
  Json items = Json::array();
  for (const store::UserTokenRecord& t : *tokens) items.push_back(TokenToJson(t));
  return JsonResponse(200, Json{{"tokens", std::move(items)}});
}

http::Response AccountsAdminApi::RevokeToken(const Principal& caller,
                                             const http::Request& request) {
  std::optional<store::Id> id = ParseId(request.Param("id"));
  if (!id) return Fail(NotFoundError("token not found"));
  Result<store::UserTokenRecord> token = accounts_.GetToken(*id);
  if (!token.ok()) return Fail(token.status());
  if (!CanManageUser(caller, token->user_id)) {
    return Fail(NotFoundError("token " + std::to_string(*id) + " not found"));
  }
  Result<store::UserTokenRecord> revoked = accounts_.RevokeToken(*id, auth_.clock().NowSeconds());
  if (!revoked.ok()) return Fail(revoked.status());
  return JsonResponse(200, TokenToJson(*revoked));
}

std::optional<http::Response> AccountsAdminApi::RefuseCurrentPassword(const store::UserRecord& user,
                                                                      const std::string& password) {
  const std::string key = "password:" + std::to_string(user.id);
  SignInLimiter& limiter = auth_.limiter();
  if (int64_t wait = limiter.RetryAfter(key); wait > 0) {
    http::Response response = http::ErrorResponse(429, RetryAfterMessage(wait));
    response.SetHeader("Retry-After", std::to_string(wait));
    return response;
  }
  if (!VerifyPassword(user.password_hash, password)) {
    limiter.RecordFailure(key);
    return Fail(InvalidFieldError("currentPassword", "is not the current password"));
  }
  limiter.Reset(key);
  return std::nullopt;
}

http::Response AccountsAdminApi::ChangePassword(const Principal& caller,
                                                const http::Request& request) {
  if (caller.user_id == 0) {
    return Fail(PermissionDeniedError("the operator token belongs to no user: no password"));
  }
  std::variant<Json, http::Response> body = ReadObject(request, /*allow_empty=*/false);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  reader.Require({"currentPassword", "password"});
  std::string current, password;
  bool keep_tokens = false;
  reader.ReadString("currentPassword", current);
  reader.ReadString("password", password);
  reader.ReadBool("keepTokens", keep_tokens);
  reader.RejectUnknown();
  const size_t min = auth_.options().min_password_length;
  if (errors.empty() && (password.size() < min || password.size() > kMaxPasswordChars)) {
    errors.Add("password", "must be " + std::to_string(min) + " to " +
                               std::to_string(kMaxPasswordChars) + " characters");
  }
  if (current.size() > kMaxPasswordChars) errors.Add("currentPassword", "too long");
  if (!errors.empty()) return Fail(errors.ToStatus());
  Result<store::UserRecord> user = accounts_.GetUser(caller.user_id);
  if (!user.ok()) return Fail(user.status());
  if (std::optional<http::Response> refused = RefuseCurrentPassword(*user, current)) {
    return std::move(*refused);
  }
  Result<std::string> hash = HashPassword(password, auth_.options().password_hash);
  if (!hash.ok()) return Fail(hash.status());
  user->password_hash = std::move(*hash);
  Result<store::UserRecord> updated = accounts_.UpdateUser(*user, auth_.clock().NowSeconds());
  if (!updated.ok()) return Fail(updated.status());
  // Every other session of the user ends; the one making the change (if any) stays.
  std::optional<Sha256Digest> keep;
  if (Result<store::SessionRecord> own = auth_.CurrentSession(request); own.ok()) {
    keep = own->id_hash;
  }
  Result<int64_t> ended = accounts_.DeleteUserSessions(updated->id, keep);
  if (!ended.ok()) return Fail(ended.status());
  // The bearer tokens too, unless asked otherwise (issue 39): a leaked token is one reason to
  // change a password.
  int64_t revoked = 0;
  if (!keep_tokens) {
    Result<int64_t> tokens = accounts_.RevokeUserTokens(updated->id, auth_.clock().NowSeconds());
    if (!tokens.ok()) return Fail(tokens.status());
    revoked = *tokens;
  }
  return JsonResponse(
      200,
      Json{{"user", UserToJson(*updated)}, {"endedSessions", *ended}, {"revokedTokens", revoked}});
}

http::Response AccountsAdminApi::SignIn(const http::Request& request) {
  Status same_origin = CheckSameOrigin({.origin = request.Header("Origin"),
                                        .sec_fetch_site = request.Header("Sec-Fetch-Site"),
                                        .host = request.Header("Host"),
                                        .public_origin = auth_.options().public_origin});
  if (!same_origin.ok()) return Fail(same_origin);
  std::variant<Json, http::Response> body = ReadObject(request, /*allow_empty=*/false);
  if (auto* error = std::get_if<http::Response>(&body)) return std::move(*error);
  FieldErrors errors;
  ObjectReader reader(std::get<Json>(body), "", errors);
  reader.Require({"email", "password"});
  std::string email, password;
  reader.ReadString("email", email);
  reader.ReadString("password", password);
  reader.RejectUnknown();
  if (!errors.empty()) return Fail(errors.ToStatus());
  if (email.size() > kMaxEmailChars || password.size() > kMaxPasswordChars) {
    return Fail(InvalidArgumentError("email or password too long"));
  }
  // Back-off per (email, address) and per address; per account only a slower limit (issue
  // 39: failures counted per email alone let anyone lock any user out from anywhere).
  const std::string ip_key = "ip:" + std::string(request.remote_ip);
  const std::string pair_key = "email-ip:" + store::EmailKey(email) + " " + ip_key;
  const std::string email_key = "email:" + store::EmailKey(email);
  SignInLimiter& limiter = auth_.limiter();
  SignInLimiter& account = auth_.account_limiter();
  int64_t wait = std::max(
      {limiter.RetryAfter(pair_key), limiter.RetryAfter(ip_key), account.RetryAfter(email_key)});
  if (wait > 0) {
    http::Response response = http::ErrorResponse(429, RetryAfterMessage(wait));
    response.SetHeader("Retry-After", std::to_string(wait));
    return response;
  }
  Result<store::UserRecord> user = accounts_.GetUserByEmail(email);
  if (!user.ok() && user.status().code() != Code::kNotFound) return Fail(user.status());
  // An unknown email verifies the dummy hash: a failure takes the same time either way.
  bool verified = VerifyPassword(user.ok() ? user->password_hash : dummy_hash_, password);
  if (!user.ok() || !verified) {
    limiter.RecordFailure(pair_key);
    limiter.RecordFailure(ip_key);
    account.RecordFailure(email_key);
    return http::ErrorResponse(401, "wrong email or password");
  }
  limiter.Reset(pair_key);
  Result<Authenticator::IssuedSession> session = auth_.StartSession(user->id);
  if (!session.ok()) return Fail(session.status());
  http::Response response =
      JsonResponse(201, Json{{"user", UserToJson(*user)},
                             {"csrfToken", session->record.csrf_token},
                             {"expiresAt", detail::TimeToJson(session->record.expires_at)},
                             {"currency", auth_.options().currency},
                             {"chains", ChainsToJson(auth_.options().chains)}});
  response.SetHeader("Set-Cookie", auth_.SessionCookie(session->cookie_secret));
  return response;
}

http::Response AccountsAdminApi::Who(const http::Request& request) {
  Result<store::SessionRecord> session = auth_.CurrentSession(request);
  if (!session.ok() && session.status().code() == Code::kNotFound) {
    return http::ErrorResponse(401, "not signed in");
  }
  if (!session.ok()) return Fail(session.status());
  Result<store::UserRecord> user = accounts_.GetUser(session->user_id);
  if (!user.ok()) return http::ErrorResponse(401, "not signed in");
  return JsonResponse(200, Json{{"user", UserToJson(*user)},
                                {"csrfToken", session->csrf_token},
                                {"expiresAt", detail::TimeToJson(session->expires_at)},
                                {"currency", auth_.options().currency},
                                {"chains", ChainsToJson(auth_.options().chains)}});
}

http::Response AccountsAdminApi::SignOut(const http::Request& request) {
  Result<store::SessionRecord> session = auth_.CurrentSession(request);
  if (!session.ok() && session.status().code() == Code::kNotFound) {
    return http::ErrorResponse(401, "not signed in");
  }
  if (!session.ok()) return Fail(session.status());
  Status csrf = CheckCsrf({.header_token = request.Header("X-CSRF-Token"),
                           .session_token = session->csrf_token,
                           .origin = request.Header("Origin"),
                           .sec_fetch_site = request.Header("Sec-Fetch-Site"),
                           .host = request.Header("Host"),
                           .public_origin = auth_.options().public_origin});
  if (!csrf.ok()) return Fail(csrf);
  Status deleted = accounts_.DeleteSession(session->id_hash);
  if (!deleted.ok()) return Fail(deleted);
  http::Response response = NoContent();
  response.SetHeader("Set-Cookie", auth_.SessionCookie(""));
  return response;
}

void AccountsAdminApi::RegisterRoutes(http::Router& router) {
  http::RouteOptions route = detail::GuardedRoute(auth_, 64 * 1024);
  using Member = http::Response (AccountsAdminApi::*)(const Principal&, const http::Request&);
  struct Spec {
    http::Method method;
    const char* pattern;
    Member handler;
    Audience audience;
  };
  using http::Method;
  static constexpr Spec kSpecs[] = {
      {Method::kPost, "/admin/v1/users", &AccountsAdminApi::CreateUser, Audience::kOperator},
      {Method::kGet, "/admin/v1/users", &AccountsAdminApi::ListUsers, Audience::kOperator},
      {Method::kGet, "/admin/v1/users/{id}", &AccountsAdminApi::GetUser, Audience::kOperator},
      {Method::kPatch, "/admin/v1/users/{id}", &AccountsAdminApi::PatchUser, Audience::kOperator},
      {Method::kDelete, "/admin/v1/users/{id}", &AccountsAdminApi::DeleteUser, Audience::kOperator},
      {Method::kPost, "/admin/v1/tokens", &AccountsAdminApi::CreateToken, Audience::kAnyUser},
      {Method::kGet, "/admin/v1/tokens", &AccountsAdminApi::ListTokens, Audience::kAnyUser},
      {Method::kDelete, "/admin/v1/tokens/{id}", &AccountsAdminApi::RevokeToken,
       Audience::kAnyUser},
      // Self-service: the session's CSRF check applies as to every cookie write.
      {Method::kPost, "/console/api/password", &AccountsAdminApi::ChangePassword,
       Audience::kAnyUser},
  };
  for (const Spec& spec : kSpecs) {
    router.Add(
        spec.method, spec.pattern,
        [this, spec](const http::Request& request) {
          return detail::Guarded(auth_, spec.audience, request, [&](const Principal& caller) {
            return (this->*spec.handler)(caller, request);
          });
        },
        route);
  }
  // The console's own session endpoints: no bearer token (the cookie is the credential).
  using Plain = http::Response (AccountsAdminApi::*)(const http::Request&);
  for (auto [method, handler] : {std::pair<Method, Plain>{Method::kPost, &AccountsAdminApi::SignIn},
                                 {Method::kGet, &AccountsAdminApi::Who},
                                 {Method::kDelete, &AccountsAdminApi::SignOut}}) {
    router.Add(
        method, "/console/api/session",
        // An init-capture: clang before 16 cannot capture a structured binding (fuzz build).
        [this, handler = handler](const http::Request& request) {
          return (this->*handler)(request);
        },
        http::RouteOptions{.dispatch = http::Dispatch::kWorker, .max_body_bytes = 64 * 1024});
  }
}

}  // namespace adserver::admin
