#include "events/attribution.h"

namespace adserver::events {
namespace {

constexpr int64_t kDay = 86400;

bool KindAllows(const AttributionRule& rule, const store::ExposureRecord& record,
                const store::ExposureEntry& exposure) {
  switch (rule.kind) {
    case AttributionRule::Kind::kAny:
      return true;
    case AttributionRule::Kind::kNew:
      return record.prior_last_seen == 0;
    case AttributionRule::Kind::kReturning:
      return record.prior_last_seen != 0 &&
             record.prior_last_seen < exposure.exposed_at - rule.returning_after_days * kDay;
  }
  return false;
}

}  // namespace

std::optional<Attribution> Attribute(const store::ExposureRecord& record,
                                     const AttributionRule& rule, int64_t interaction_at,
                                     const ClickedAt& clicked_at) {
  std::optional<Attribution> view;
  std::optional<Attribution> click;
  for (const store::ExposureEntry& e : record.entries) {
    if (e.exposed_at > interaction_at || interaction_at - e.exposed_at > rule.window_days * kDay) {
      continue;
    }
    if (!KindAllows(rule, record, e)) continue;
    if (!view || e.exposed_at > view->touched_at) {
      view = Attribution{.exposure = &e, .touch = Touch::kView, .touched_at = e.exposed_at};
    }
    std::optional<int64_t> at = clicked_at ? clicked_at(e.decision_id) : std::nullopt;
    if (at && *at <= interaction_at && (!click || *at > click->touched_at)) {
      click = Attribution{.exposure = &e, .touch = Touch::kClick, .touched_at = *at};
    }
  }
  return click ? click : view;
}

}  // namespace adserver::events
