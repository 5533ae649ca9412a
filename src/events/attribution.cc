#include "events/attribution.h"

#include <vector>

namespace adserver::events {
namespace {

constexpr int64_t kDay = 86400;

bool KindAllows(const AttributionRule& rule, const store::ExposureRecord& record,
                int64_t exposed_at) {
  switch (rule.kind) {
    case AttributionRule::Kind::kAny:
      return true;
    case AttributionRule::Kind::kNew:
      return record.prior_last_seen == 0;
    case AttributionRule::Kind::kReturning:
      return record.prior_last_seen != 0 &&
             record.prior_last_seen < exposed_at - rule.returning_after_days * kDay;
  }
  return false;
}

}  // namespace

std::optional<Attribution> Attribute(const store::ExposureRecord& record,
                                     const AttributionRule& rule, int64_t interaction_at,
                                     const LastClick& last_click) {
  const int64_t window_start = interaction_at - rule.window_days * kDay;
  std::optional<Attribution> view;
  std::vector<uint64_t> persons;
  for (const store::ExposureEntry& e : record.entries) {
    if (e.exposed_at > interaction_at || e.exposed_at < window_start) continue;
    if (!KindAllows(rule, record, e.exposed_at)) continue;
    if (!view || e.exposed_at > view->touched_at) {
      view = Attribution{.exposure = e, .touch = Touch::kView, .touched_at = e.exposed_at};
    }
    bool seen = false;
    for (uint64_t p : persons) seen = seen || p == e.person;
    if (!seen) persons.push_back(e.person);
  }
  if (!view || !last_click) return view;
  std::optional<Attribution> click;
  for (uint64_t person : persons) {
    std::optional<store::ClickRecord> c = last_click(person, window_start, interaction_at);
    if (!c || c->clicked_at > interaction_at || c->served_at < window_start) continue;
    if (!KindAllows(rule, record, c->served_at)) continue;
    if (click && c->clicked_at <= click->touched_at) continue;
    click = Attribution{.exposure = {.decision_id = c->decision_id,
                                     .exposed_at = c->served_at,
                                     .ad_id = c->ad_id,
                                     .publisher_id = c->publisher_id,
                                     .person = c->person,
                                     .arm = c->arm,
                                     .ad_unit_id = c->ad_unit_id},
                        .touch = Touch::kClick,
                        .touched_at = c->clicked_at};
  }
  return click ? click : view;
}

}  // namespace adserver::events
