#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"
#include "store/account_store.h"
#include "store/inventory_store.h"
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
// A `campaignId` filter of an advertiser user (issue 39): OK for operators, publisher users
// (their own rows narrowed by campaign) and the campaign's own community; NotFound for an
// unknown campaign or another community's, as docs/admin-api.md promises.
Status CheckCampaignFilter(const Principal& principal, store::InventoryStore& inventory,
                           store::Id campaign_id);
// NotFound for an unknown campaign, and for one of another community than `community` (when
// given).
Status CheckCampaignOf(store::InventoryStore& inventory, std::optional<store::Id> community,
                       store::Id campaign_id);

// The restriction a report or listing applies for `principal`: nothing for operators, the
// publisher for publisher users, the community for advertiser users.
struct TenantScope {
  std::optional<store::Id> publisher_id;
  std::optional<store::Id> community_id;
  bool operator==(const TenantScope&) const = default;
};
TenantScope ScopeOf(const Principal& principal);

// What a create or edit of an ad (or, issue 39, a community's brand) writes, as far as its
// review is concerned.
struct AdWrite {
  bool creating = false;
  // The reviewed fields: an ad's headline, content, ctaUrl, ctaLabel or images; a community's
  // name or logoUrl.
  bool writes_creative = false;
  std::optional<store::ReviewStatus> requested;  // reviewStatus given (operators only)
};

// Review status of an ad after `write` by `principal`, `current` before it (issues 16, 39): an
// operator's requested status applies; otherwise a create, or an edit of the creative, is
// approved when an operator writes it and pending when an advertiser does; an edit that leaves
// the creative alone (status, weight, arm) keeps the review status, so an operator pausing an
// ad never approves the edit waiting for review.
store::ReviewStatus ReviewAfterWrite(const Principal& principal, const AdWrite& write,
                                     store::ReviewStatus current);

// Whether `principal` may see or manage user `user` (operators: everyone; others: themselves).
bool CanManageUser(const Principal& principal, store::Id user);

}  // namespace adserver::admin
