#include "admin/scope.h"

#include <string>

namespace adserver::admin {

Principal Principal::ForUser(const store::UserRecord& user, bool via_session) {
  return Principal{
      .role = user.role,
      .user_id = user.id,
      .publisher_id = user.role == store::Role::kPublisher ? user.publisher_id : std::nullopt,
      .community_id = user.role == store::Role::kAdvertiser ? user.community_id : std::nullopt,
      .via_session = via_session};
}

std::string_view AudienceName(Audience audience) {
  switch (audience) {
    case Audience::kOperator:
      return "operator";
    case Audience::kPublisher:
      return "publisher";
    case Audience::kAdvertiser:
      return "advertiser";
    case Audience::kAnyUser:
      return "any user";
  }
  return "operator";
}

bool InAudience(const Principal& principal, Audience audience) {
  switch (principal.role) {
    case store::Role::kOperator:
      return true;
    case store::Role::kPublisher:
      return audience == Audience::kPublisher || audience == Audience::kAnyUser;
    case store::Role::kAdvertiser:
      return audience == Audience::kAdvertiser || audience == Audience::kAnyUser;
  }
  return false;
}

Status CheckAudience(const Principal& principal, Audience audience, bool read_one) {
  if (InAudience(principal, audience)) return OkStatus();
  if (read_one) return NotFoundError("not found");
  return PermissionDeniedError(std::string(store::RoleName(principal.role)) +
                               " users may not do this (" + std::string(AudienceName(audience)) +
                               " only)");
}

Status CheckPublisher(const Principal& principal, store::Id publisher_id, std::string_view what) {
  if (principal.IsOperator()) return OkStatus();
  if (principal.role == store::Role::kPublisher && principal.publisher_id == publisher_id) {
    return OkStatus();
  }
  return NotFoundError(std::string(what) + " not found");
}

Status CheckCommunity(const Principal& principal, store::Id community_id, std::string_view what) {
  if (principal.IsOperator()) return OkStatus();
  if (principal.role == store::Role::kAdvertiser && principal.community_id == community_id) {
    return OkStatus();
  }
  return NotFoundError(std::string(what) + " not found");
}

TenantScope ScopeOf(const Principal& principal) {
  switch (principal.role) {
    case store::Role::kOperator:
      return {};
    case store::Role::kPublisher:
      return {.publisher_id = principal.publisher_id, .community_id = std::nullopt};
    case store::Role::kAdvertiser:
      return {.publisher_id = std::nullopt, .community_id = principal.community_id};
  }
  return {};
}

Status CheckCampaignFilter(const Principal& principal, store::InventoryStore& inventory,
                           store::Id campaign_id) {
  if (principal.role != store::Role::kAdvertiser) return OkStatus();
  return CheckCampaignOf(inventory, principal.community_id, campaign_id);
}

Status CheckCampaignOf(store::InventoryStore& inventory, std::optional<store::Id> community,
                       store::Id campaign_id) {
  const std::string what = "campaign " + std::to_string(campaign_id) + " not found";
  Result<store::CampaignRecord> campaign = inventory.GetCampaign(campaign_id);
  if (!campaign.ok()) {
    return campaign.status().code() == Code::kNotFound ? NotFoundError(what) : campaign.status();
  }
  if (community && campaign->community_id != *community) return NotFoundError(what);
  return OkStatus();
}

store::ReviewStatus ReviewAfterWrite(const Principal& principal, const AdWrite& write,
                                     store::ReviewStatus current) {
  if (principal.IsOperator() && write.requested) return *write.requested;
  if (!write.creating && !write.writes_creative) return current;
  // Operator writes stay as before reviews existed: what an operator writes serves.
  return principal.IsOperator() ? store::ReviewStatus::kApproved : store::ReviewStatus::kPending;
}

bool CanManageUser(const Principal& principal, store::Id user) {
  return principal.IsOperator() || (principal.user_id != 0 && principal.user_id == user);
}

}  // namespace adserver::admin
