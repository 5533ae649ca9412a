#include "events/attribution.h"

#include <gtest/gtest.h>

#include <map>

namespace adserver::events {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kT = 1'800'000'000;

store::ExposureEntry Exposure(uint8_t id, int64_t at) {
  store::ExposureEntry e;
  e.decision_id[0] = id;
  e.exposed_at = at;
  e.ad_id = id;
  return e;
}

store::ExposureRecord Record(std::vector<store::ExposureEntry> entries, int64_t prior = 0) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.exposed_at > b.exposed_at; });
  return store::ExposureRecord{.prior_last_seen = prior, .entries = std::move(entries)};
}

ClickedAt Clicks(std::map<uint8_t, int64_t> clicks) {
  return [clicks](const store::DecisionIdBytes& id) -> std::optional<int64_t> {
    auto it = clicks.find(id[0]);
    if (it == clicks.end()) return std::nullopt;
    return it->second;
  };
}

TEST(AttributionTest, TheMostRecentViewInTheWindowWins) {
  auto record = Record({Exposure(1, kT - 3 * kDay), Exposure(2, kT - kDay), Exposure(3, kT - 2 * kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT, Clicks({}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->exposure->ad_id, 2);
  EXPECT_EQ(a->touch, Touch::kView);
  EXPECT_EQ(a->touched_at, kT - kDay);
}

TEST(AttributionTest, AClickBeatsAMoreRecentView) {
  auto record = Record({Exposure(1, kT - 3 * kDay), Exposure(2, kT - kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT, Clicks({{1, kT - 3 * kDay + 60}}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->exposure->ad_id, 1);
  EXPECT_EQ(a->touch, Touch::kClick);
  EXPECT_EQ(a->touched_at, kT - 3 * kDay + 60);
}

TEST(AttributionTest, TheMostRecentClickWinsAmongClicks) {
  auto record = Record({Exposure(1, kT - 3 * kDay), Exposure(2, kT - 2 * kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT,
                     Clicks({{1, kT - 100}, {2, kT - 2 * kDay + 5}}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->exposure->ad_id, 1);  // clicked later, though served earlier
}

TEST(AttributionTest, AClickAfterTheTransactionDoesNotCount) {
  auto record = Record({Exposure(1, kT - kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT, Clicks({{1, kT + 10}}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->touch, Touch::kView);
}

TEST(AttributionTest, ExposuresOutsideTheWindowOrAfterTheTransactionDoNotCount) {
  auto record = Record({Exposure(1, kT - 15 * kDay), Exposure(2, kT + 1)});
  EXPECT_FALSE(Attribute(record, {.window_days = 14}, kT, Clicks({})));
  // The window's edge is inclusive.
  EXPECT_TRUE(Attribute(Record({Exposure(3, kT - 14 * kDay)}), {.window_days = 14}, kT, Clicks({})));
  EXPECT_FALSE(Attribute(Record({Exposure(3, kT - 14 * kDay - 1)}), {.window_days = 14}, kT, Clicks({})));
  // A click does not extend the window of its exposure.
  EXPECT_FALSE(Attribute(Record({Exposure(4, kT - 20 * kDay)}), {.window_days = 14}, kT,
                         Clicks({{4, kT - kDay}})));
}

TEST(AttributionTest, NewRequiresNoInteractionBeforeTheExposure) {
  AttributionRule rule{.kind = AttributionRule::Kind::kNew, .window_days = 14};
  EXPECT_TRUE(Attribute(Record({Exposure(1, kT - kDay)}, /*prior=*/0), rule, kT, Clicks({})));
  EXPECT_FALSE(Attribute(Record({Exposure(1, kT - kDay)}, /*prior=*/kT - 100 * kDay), rule, kT,
                         Clicks({})));
}

TEST(AttributionTest, ReturningRequiresAnOldInteractionButNoneRecently) {
  AttributionRule rule{.kind = AttributionRule::Kind::kReturning, .returning_after_days = 45,
                       .window_days = 14};
  int64_t exposed = kT - kDay;
  EXPECT_FALSE(Attribute(Record({Exposure(1, exposed)}, 0), rule, kT, Clicks({})));  // never
  EXPECT_FALSE(Attribute(Record({Exposure(1, exposed)}, exposed - 10 * kDay), rule, kT,
                         Clicks({})));  // recent user
  EXPECT_TRUE(Attribute(Record({Exposure(1, exposed)}, exposed - 60 * kDay), rule, kT,
                        Clicks({})));  // lapsed user
}

TEST(AttributionTest, NoExposuresNoAttribution) {
  EXPECT_FALSE(Attribute(store::ExposureRecord{}, {}, kT, Clicks({})));
  // Without a click lookup every touch is a view.
  EXPECT_EQ(Attribute(Record({Exposure(1, kT)}), {}, kT, nullptr)->touch, Touch::kView);
}

}  // namespace
}  // namespace adserver::events
