#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"
#include "store/account_store.h"
#include "store/records.h"

namespace adserver::admin {

// Who is calling the admin API (issue 16): the operator token, or a user through a bearer
// token or a console session. Pure value; the rules below are pure functions of it.
struct Principal {
  store::Role role = store::Role::kOperator;
  store::Id user_id = 0;                  // 0: the configured operator token (no user)
  std::optional<store::Id> publisher_id;  // set for kPublisher
  std::optional<store::Id> community_id;  // set for kAdvertiser
  bool via_session = false;               // authenticated by the console session cookie

  static Principal OperatorToken() { return Principal{}; }
  static Principal ForUser(const store::UserRecord& user, bool via_session);
  bool IsOperator() const { return role == store::Role::kOperator; }
};

// Which roles may call a route at all (the route table's scope column). Operators may call
// every route.
enum class Audience : uint8_t {
  kOperator,    // operators only
  kPublisher,   // operators and publisher users
  kAdvertiser,  // operators and advertiser users
  kAnyUser,     // every role (each handler narrows to the caller's tenant)
};
std::string_view AudienceName(Audience audience);

// Whether `principal` may call a route of `audience`.
bool InAudience(const Principal& principal, Audience audience);

// OK inside the audience; else PermissionDenied (403) for writes and listings, NotFound (404)
// for a read of one object (`read_one`), which by definition is not the caller's.
Status CheckAudience(const Principal& principal, Audience audience, bool read_one);

// Tenant checks: OK for operators and for the owning user, else NotFound naming `what` (another
// tenant's object answers as if it did not exist).
Status CheckPublisher(const Principal& principal, store::Id publisher_id, std::string_view what);
Status CheckCommunity(const Principal& principal, store::Id community_id, std::string_view what);

// The restriction a report or listing applies for `principal`: nothing for operators, the
// publisher for publisher users, the community for advertiser users.
struct TenantScope {
  std::optional<store::Id> publisher_id;
  std::optional<store::Id> community_id;
  bool operator==(const TenantScope&) const = default;
};
TenantScope ScopeOf(const Principal& principal);

// Review status of an ad after a create or edit by `principal` (issue 16): an operator's write
// is `requested` (approved when not given), an advertiser's write is pending.
store::ReviewStatus ReviewAfterWrite(const Principal& principal,
                                     std::optional<store::ReviewStatus> requested);

// Whether `principal` may see or manage user `user` (operators: everyone; others: themselves).
bool CanManageUser(const Principal& principal, store::Id user);

}  // namespace adserver::admin
