#include "events/click.h"

#include <string>
#include <utility>

namespace adserver::events {

store::ClickRecord ClickRecordOf(Click click) {
  store::ClickStatus status =
      click.expired ? store::ClickStatus::kExpired : store::ClickStatus::kBilled;
  InvalidReason reason = click.expired ? InvalidReason::kNone : click.invalid;
  if (reason != InvalidReason::kNone) status = store::ClickStatus::kInvalid;
  ClickClaims& claims = click.claims;
  return store::ClickRecord{
      .decision_id = claims.decision.bytes,
      .publisher_id = claims.publisher_id,
      .ad_unit_id = std::move(claims.ad_unit_id),
      .campaign_id = claims.campaign_id,
      .ad_id = claims.ad_id,
      .arm = std::move(claims.arm),
      .served_at = claims.served_at,
      .clicked_at = click.clicked_at,
      .price = claims.price,
      .person = claims.person,
      .earlier_variant = claims.earlier_variant,
      .status = status,
      .reason = std::string(InvalidReasonName(reason)),
      // Only the truncated address is kept (/24, /48).
      .ip = click.ip ? FormatIp(TruncateIp(*click.ip)) : std::string(),
  };
}

}  // namespace adserver::events
