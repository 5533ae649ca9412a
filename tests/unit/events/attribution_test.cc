#include "events/attribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace adserver::events {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kT = 1'800'000'000;

store::ExposureEntry Exposure(uint8_t id, int64_t at, uint64_t person = 7) {
  store::ExposureEntry e;
  e.decision_id[0] = id;
  e.exposed_at = at;
  e.ad_id = id;
  e.person = person;
  return e;
}

store::ExposureRecord Record(std::vector<store::ExposureEntry> entries, int64_t prior = 0) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.exposed_at > b.exposed_at; });
  return store::ExposureRecord{.prior_last_seen = prior, .entries = std::move(entries)};
}

store::ClickRecord Click(uint8_t decision, int64_t served_at, int64_t clicked_at,
                         uint64_t person = 7) {
  store::ClickRecord c;
  c.decision_id[0] = decision;
  c.ad_id = 100 + decision;
  c.served_at = served_at;
  c.clicked_at = clicked_at;
  c.person = person;
  return c;
}

// A person's billed clicks, answered as EventsStore::LastBilledClick does.
LastClick Clicks(std::vector<store::ClickRecord> clicks) {
  return [clicks](uint64_t person, int64_t served_from,
                  int64_t clicked_by) -> std::optional<store::ClickRecord> {
    std::optional<store::ClickRecord> best;
    for (const auto& c : clicks) {
      if (c.person != person || c.clicked_at > clicked_by || c.served_at < served_from) continue;
      if (!best || c.clicked_at > best->clicked_at) best = c;
    }
    return best;
  };
}

TEST(AttributionTest, TheMostRecentViewInTheWindowWins) {
  auto record =
      Record({Exposure(1, kT - 3 * kDay), Exposure(2, kT - kDay), Exposure(3, kT - 2 * kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT, Clicks({}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->exposure.ad_id, 2);
  EXPECT_EQ(a->touch, Touch::kView);
  EXPECT_EQ(a->touched_at, kT - kDay);
}

TEST(AttributionTest, AClickBeatsAMoreRecentView) {
  auto record = Record({Exposure(1, kT - 3 * kDay), Exposure(2, kT - kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT,
                     Clicks({Click(1, kT - 3 * kDay, kT - 3 * kDay + 60)}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->touch, Touch::kClick);
  EXPECT_EQ(a->exposure.decision_id[0], 1);
  EXPECT_EQ(a->exposure.ad_id, 101);  // from the click
  EXPECT_EQ(a->touched_at, kT - 3 * kDay + 60);
}

TEST(AttributionTest, TheClickedServeNeedNotBeAmongTheKeptExposures) {
  // The exposure store keeps a pair's exposures at most every few minutes; the click row has
  // the serve it was on.
  auto record = Record({Exposure(1, kT - kDay)});
  auto a = Attribute(record, {.window_days = 14}, kT,
                     Clicks({Click(9, kT - kDay + 120, kT - kDay + 130)}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->touch, Touch::kClick);
  EXPECT_EQ(a->exposure.decision_id[0], 9);
}

TEST(AttributionTest, TheMostRecentClickWins) {
  auto record = Record({Exposure(1, kT - 3 * kDay)});
  auto a = Attribute(
      record, {.window_days = 14}, kT,
      Clicks({Click(1, kT - 3 * kDay, kT - 100), Click(2, kT - 2 * kDay, kT - 2 * kDay + 5)}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->exposure.decision_id[0], 1);  // clicked later, though served earlier
}

TEST(AttributionTest, ClicksOfOtherPeopleOrAfterTheTransactionDoNotCount) {
  auto record = Record({Exposure(1, kT - kDay, /*person=*/7)});
  EXPECT_EQ(
      Attribute(record, {.window_days = 14}, kT, Clicks({Click(1, kT - kDay, kT + 10)}))->touch,
      Touch::kView);
  EXPECT_EQ(Attribute(record, {.window_days = 14}, kT,
                      Clicks({Click(1, kT - kDay, kT - 10, /*person=*/8)}))
                ->touch,
            Touch::kView);
}

TEST(AttributionTest, ExposuresOutsideTheWindowOrAfterTheTransactionDoNotCount) {
  auto record = Record({Exposure(1, kT - 15 * kDay), Exposure(2, kT + 1)});
  EXPECT_FALSE(Attribute(record, {.window_days = 14}, kT, Clicks({})));
  // The window's edge is inclusive.
  EXPECT_TRUE(
      Attribute(Record({Exposure(3, kT - 14 * kDay)}), {.window_days = 14}, kT, Clicks({})));
  EXPECT_FALSE(
      Attribute(Record({Exposure(3, kT - 14 * kDay - 1)}), {.window_days = 14}, kT, Clicks({})));
  // A click on a serve before the window does not count either.
  auto a = Attribute(Record({Exposure(4, kT - kDay)}), {.window_days = 14}, kT,
                     Clicks({Click(5, kT - 20 * kDay, kT - kDay)}));
  EXPECT_EQ(a->touch, Touch::kView);
  // Without an exposure in the window, a click alone attributes nothing.
  EXPECT_FALSE(Attribute(Record({Exposure(6, kT - 20 * kDay)}), {.window_days = 14}, kT,
                         Clicks({Click(6, kT - kDay, kT - kDay)})));
}

TEST(AttributionTest, NewRequiresNoInteractionBeforeTheExposure) {
  AttributionRule rule{.kind = AttributionRule::Kind::kNew, .window_days = 14};
  EXPECT_TRUE(Attribute(Record({Exposure(1, kT - kDay)}, /*prior=*/0), rule, kT, Clicks({})));
  EXPECT_FALSE(
      Attribute(Record({Exposure(1, kT - kDay)}, /*prior=*/kT - 100 * kDay), rule, kT, Clicks({})));
}

TEST(AttributionTest, ReturningRequiresAnOldInteractionButNoneRecently) {
  AttributionRule rule{
      .kind = AttributionRule::Kind::kReturning, .returning_after_days = 45, .window_days = 14};
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
