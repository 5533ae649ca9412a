#pragma once

// Attribution of an onchain interaction to an exposure (issue 15, docs/api-notes.md
// "Conversions"). Pure: the caller reads the exposure record and the clicks.
//
// Rules, for one wallet W, campaign C and an interaction of W with one of C's conversion
// projects at time T:
//   - candidates are W's exposures to C at or before T and no more than windowDays before it;
//   - kind `new`: W had no interaction with those projects before its exposure (the record's
//     prior_last_seen is 0); `returning`: W had one, but none in the returningAfterDays before
//     the exposure; `any`: no condition;
//   - last touch: the most recent billed click of the person (the candidates' person digests)
//     on C at or before T, on an ad served within the window, wins; without one, the most
//     recent candidate exposure (view-through).
// Clicks are looked up by person, not by the exposures kept: the exposure store keeps a
// (wallet, campaign)'s exposures at most every few minutes (ExposureRecorder), so the clicked
// serve itself may not be among them.

#include <cstdint>
#include <functional>
#include <optional>

#include "store/events_store.h"
#include "store/exposure_store.h"

namespace adserver::events {

struct AttributionRule {
  enum class Kind : uint8_t { kAny, kNew, kReturning };
  Kind kind = Kind::kAny;
  int32_t returning_after_days = 45;
  int32_t window_days = 14;
};

enum class Touch : uint8_t { kView, kClick };

struct Attribution {
  store::ExposureEntry exposure;  // the serve attributed to (for a click: the clicked serve)
  Touch touch = Touch::kView;
  int64_t touched_at = 0;  // the click time, or the serve time for a view
};

// The person's most recent billed click on the campaign with clicked_at <= `clicked_by` and
// served_at >= `served_from`, or nullopt.
using LastClick = std::function<std::optional<store::ClickRecord>(
    uint64_t person, int64_t served_from, int64_t clicked_by)>;

std::optional<Attribution> Attribute(const store::ExposureRecord& record,
                                     const AttributionRule& rule, int64_t interaction_at,
                                     const LastClick& last_click);

}  // namespace adserver::events
