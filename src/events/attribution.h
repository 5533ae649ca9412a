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
//   - last touch: the candidate with the most recent billed click at or before T wins; without
//     a click, the most recent exposure (view-through).

#include <cstdint>
#include <functional>
#include <optional>

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
  const store::ExposureEntry* exposure = nullptr;  // points into the record passed in
  Touch touch = Touch::kView;
  int64_t touched_at = 0;  // the click time, or the serve time for a view
};

// When the decision was clicked (a billed click), or nullopt.
using ClickedAt = std::function<std::optional<int64_t>(const store::DecisionIdBytes&)>;

std::optional<Attribution> Attribute(const store::ExposureRecord& record,
                                     const AttributionRule& rule, int64_t interaction_at,
                                     const ClickedAt& clicked_at);

}  // namespace adserver::events
