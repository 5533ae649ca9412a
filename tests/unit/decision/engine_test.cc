#include "decision/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "unit/decision/test_catalog.h"

namespace adserver::decision {
namespace {

// Which API the decision is for (serve::Variant's two values): the earlier one takes only ads
// with an image and short content (DecisionRequest::earlier_variant).
enum class Variant { kCurrent, kEarlier };

using testing::kCommunityA;
using testing::kCommunityB;
using testing::TestCatalog;

constexpr int64_t kNow = 1'767'225'600 + 12 * 3600;  // 2026-01-01 12:00 UTC
const uint32_t kToday = static_cast<uint32_t>(DayOf(kNow));
constexpr uint32_t kEthereum = 1;
constexpr uint32_t kPolygon = 137;

Address Wallet(uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

Interaction Seen(uint32_t project, uint32_t chain = kEthereum, uint32_t day = kToday,
                 uint32_t count = 1) {
  return {.project_id = project, .chain_id = chain, .last_seen_day = day, .count = count};
}

class EngineTest : public ::testing::Test {
 protected:
  // Decides for `wallets` against the catalog built so far (Finish() is called once).
  std::optional<Decision> DecideFor(std::vector<Address> wallets,
                                    ImageFormat format = ImageFormat::kLandscape,
                                    Variant variant = Variant::kCurrent, int64_t now = kNow) {
    if (!finished_) {
      t_.Finish();
      activity_.Finalize();
      finished_ = true;
    }
    wallets_ = std::move(wallets);
    DecisionRequest request{.wallets = wallets_,
                            .format = format,
                            .earlier_variant = variant == Variant::kEarlier,
                            .publisher = &t_.catalog.publishers[0],
                            .now_seconds = now};
    return Decide(request, t_.catalog, activity_, rng_);
  }

  // The campaign id chosen, or 0 for no ad.
  int64_t CampaignFor(std::vector<Address> wallets, ImageFormat format = ImageFormat::kLandscape,
                      Variant variant = Variant::kCurrent, int64_t now = kNow) {
    auto d = DecideFor(std::move(wallets), format, variant, now);
    return d ? d->campaign->id : 0;
  }

  TestCatalog t_;
  ActivityIndex activity_;
  Rng rng_{42};
  std::vector<Address> wallets_;
  bool finished_ = false;
};

TEST_F(EngineTest, ServesCampaignTargetingAProjectTheWalletUsed) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5));

  auto d = DecideFor({Wallet(1)});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->campaign->id, 1);
  EXPECT_EQ(d->ad->id, 100);
  ASSERT_NE(d->community, nullptr);
  EXPECT_EQ(d->community->id, kCommunityA);
  EXPECT_EQ(d->matched_wallet, 0u);
}

TEST_F(EngineTest, NoAdWithoutMatchingActivity) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(6));

  EXPECT_FALSE(DecideFor({Wallet(1)}));
  EXPECT_FALSE(DecideFor({Wallet(2)}));
  EXPECT_FALSE(DecideFor({}));
}

TEST_F(EngineTest, ScheduleStartIsInclusive) {
  t_.AddCampaign(1, {5}).starts_at = kNow;
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent, kNow), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent, kNow - 1), 0);
}

TEST_F(EngineTest, ScheduleEndIsExclusive) {
  t_.AddCampaign(1, {5}).ends_at = kNow;
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent, kNow - 1), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent, kNow), 0);
}

TEST_F(EngineTest, RecencyWindowIncludesExactlyNDaysAgo) {
  t_.AddCampaign(1, {5}).recency_days = 7;
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 7));
  activity_.Add(Wallet(2), Seen(5, kEthereum, kToday - 8));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 1);
  EXPECT_EQ(CampaignFor({Wallet(2)}), 0);
}

TEST_F(EngineTest, RecencyDayBoundaryFollowsUtcDays) {
  t_.AddCampaign(1, {5}).recency_days = 0;
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday));

  int64_t first_second_of_today = static_cast<int64_t>(kToday) * 86400;
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent,
                        first_second_of_today + 86399),
            1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent,
                        first_second_of_today + 86400),
            0);
}

TEST_F(EngineTest, ChainFilterNeedsAnInteractionOnAnAllowedChain) {
  t_.AddCampaign(1, {5}).chains = {kEthereum};
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kPolygon));
  activity_.Add(Wallet(2), Seen(5, kPolygon));
  activity_.Add(Wallet(2), Seen(5, kEthereum));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 0);
  EXPECT_EQ(CampaignFor({Wallet(2)}), 1);
}

TEST_F(EngineTest, ChainAndRecencyMustHoldForTheSameInteraction) {
  Campaign& c = t_.AddCampaign(1, {5});
  c.chains = {kEthereum};
  c.recency_days = 3;
  t_.AddAd(1, 100);
  // Recent on the wrong chain, old on the right chain: no single interaction qualifies.
  activity_.Add(Wallet(1), Seen(5, kPolygon, kToday));
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 30));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 0);
}

TEST_F(EngineTest, ExclusionByAnotherWalletOfTheSamePerson) {
  t_.AddCampaign(1, {5}).exclude_projects = {9};
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5));
  // Long ago, on a chain the campaign does not even target: exclusion ignores both.
  activity_.Add(Wallet(2), Seen(9, kPolygon, kToday - 2000));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 1);
  EXPECT_EQ(CampaignFor({Wallet(1), Wallet(2)}), 0);
  EXPECT_EQ(CampaignFor({Wallet(2), Wallet(1)}), 0);
}

TEST_F(EngineTest, ExcludedCampaignLetsTheNextBestWin) {
  t_.AddCampaign(1, {5}, 5000).exclude_projects = {9};
  t_.AddCampaign(2, {5}, 1000);
  t_.AddAd(1, 100);
  t_.AddAd(2, 200);
  activity_.Add(Wallet(1), Seen(5));
  activity_.Add(Wallet(1), Seen(9));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 2);
}

TEST_F(EngineTest, BlockedCommunityIsNeverServed) {
  t_.AddCampaign(1, {5}, 5000, kCommunityB);
  t_.AddCampaign(2, {5}, 1000, kCommunityA);
  t_.AddAd(1, 100);
  t_.AddAd(2, 200);
  t_.catalog.publishers[0].blocked_communities = {kCommunityB};
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}), 2);
}

TEST_F(EngineTest, NoAdForTheRequestedFormat) {
  t_.AddCampaign(1, {5});
  Ad& ad = t_.AddAd(1, 100);
  ad.images[static_cast<int>(ImageFormat::kLongBanner)].clear();
  ad.images[static_cast<int>(ImageFormat::kShortBanner)].clear();
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLongBanner), 0);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kShortBanner), 0);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kNoImage), 1);
}

TEST_F(EngineTest, CampaignWithoutAFittingAdLetsTheNextBestWin) {
  t_.AddCampaign(1, {5}, 5000);
  t_.AddAd(1, 100).images[static_cast<int>(ImageFormat::kShortBanner)].clear();
  t_.AddCampaign(2, {5}, 1000);
  t_.AddAd(2, 200);
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kShortBanner), 2);
}

TEST_F(EngineTest, EarlierVariantSkipsContentOf400Characters) {
  t_.AddCampaign(1, {5}, 5000);
  t_.AddAd(1, 100, 1, std::string(400, 'x'));
  t_.AddCampaign(2, {5}, 1000);
  t_.AddAd(2, 200, 1, std::string(399, 'x'));
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kCurrent), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kEarlier), 2);
}

TEST_F(EngineTest, EarlierVariantHasNoNoImageFormat) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5));

  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kNoImage, Variant::kCurrent), 1);
  EXPECT_EQ(CampaignFor({Wallet(1)}, ImageFormat::kNoImage, Variant::kEarlier), 0);
}

TEST_F(EngineTest, HighestValueWins) {
  t_.AddCampaign(1, {5}, 1000);
  t_.AddCampaign(2, {6}, 3000);
  t_.AddCampaign(3, {5, 6}, 2000);
  t_.AddAd(1, 100);
  t_.AddAd(2, 200);
  t_.AddAd(3, 300);
  activity_.Add(Wallet(1), Seen(5));
  activity_.Add(Wallet(2), Seen(6));

  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(CampaignFor({Wallet(1)}), 3);
    EXPECT_EQ(CampaignFor({Wallet(1), Wallet(2)}), 2);
  }
}

TEST_F(EngineTest, TiesAreSplitByAdWeight) {
  t_.AddCampaign(1, {5}, 2000);
  t_.AddCampaign(2, {5}, 2000);
  t_.AddCampaign(3, {5}, 1999);  // lower value: never drawn
  t_.AddAd(1, 100, 1);
  t_.AddAd(2, 200, 2);
  t_.AddAd(2, 201, 1);
  t_.AddAd(3, 300, 100);
  activity_.Add(Wallet(1), Seen(5));

  constexpr int kDraws = 8000;
  std::map<int64_t, int> campaigns;
  std::map<int64_t, int> ads;
  for (int i = 0; i < kDraws; ++i) {
    auto d = DecideFor({Wallet(1)});
    ASSERT_TRUE(d);
    ++campaigns[d->campaign->id];
    ++ads[d->ad->id];
  }
  // Weights 1 : (2 + 1) -> 25% / 75%; within 2.5 points (about 5 standard deviations).
  EXPECT_NEAR(campaigns[1] / double(kDraws), 0.25, 0.025);
  EXPECT_NEAR(campaigns[2] / double(kDraws), 0.75, 0.025);
  EXPECT_EQ(campaigns.count(3), 0u);
  // Inside campaign 2, ads by weight 2 : 1.
  EXPECT_NEAR(ads[200] / double(campaigns[2]), 2.0 / 3, 0.03);
}

TEST_F(EngineTest, TieWeightsUseTheRequestedFormatAndVariant) {
  t_.AddCampaign(1, {5}, 2000);
  t_.AddCampaign(2, {5}, 2000);
  t_.AddAd(1, 100, 1);
  t_.AddAd(2, 200, 1);
  t_.AddAd(2, 201, 2).images[static_cast<int>(ImageFormat::kShortBanner)].clear();
  t_.AddAd(2, 202, 6, std::string(450, 'x'));
  activity_.Add(Wallet(1), Seen(5));

  constexpr int kDraws = 8000;
  int short_banner_one = 0;
  int earlier_landscape_one = 0;
  for (int i = 0; i < kDraws; ++i) {
    // Short banner, current: weights 1 : (1 + 6) -> 12.5%.
    short_banner_one += CampaignFor({Wallet(1)}, ImageFormat::kShortBanner) == 1;
    // Landscape, earlier: weights 1 : (1 + 2) -> 25%.
    earlier_landscape_one +=
        CampaignFor({Wallet(1)}, ImageFormat::kLandscape, Variant::kEarlier) == 1;
  }
  EXPECT_NEAR(short_banner_one / double(kDraws), 0.125, 0.02);
  EXPECT_NEAR(earlier_landscape_one / double(kDraws), 0.25, 0.025);
}

TEST_F(EngineTest, CampaignReachedThroughSeveralWalletsIsOneCandidate) {
  t_.AddCampaign(1, {5, 6}, 2000);
  t_.AddCampaign(2, {7}, 2000);
  t_.AddAd(1, 100);
  t_.AddAd(2, 200);
  // Campaign 1 is reached four times (two wallets x two projects, two chains), campaign 2 once.
  for (uint8_t w : {1, 2}) {
    activity_.Add(Wallet(w), Seen(5, kEthereum));
    activity_.Add(Wallet(w), Seen(5, kPolygon));
    activity_.Add(Wallet(w), Seen(6));
  }
  activity_.Add(Wallet(2), Seen(7));

  constexpr int kDraws = 8000;
  int one = 0;
  for (int i = 0; i < kDraws; ++i) one += CampaignFor({Wallet(1), Wallet(2)}) == 1;
  EXPECT_NEAR(one / double(kDraws), 0.5, 0.03);
}

TEST_F(EngineTest, SameSeedGivesTheSameDecisions) {
  for (int c = 1; c <= 4; ++c) {
    t_.AddCampaign(c, {5}, 2000);
    t_.AddAd(c, c * 100, c);
    t_.AddAd(c, c * 100 + 1, 5 - c);
  }
  activity_.Add(Wallet(1), Seen(5));

  std::vector<int64_t> first;
  std::vector<int64_t> second;
  rng_.seed(7);
  for (int i = 0; i < 200; ++i) first.push_back(DecideFor({Wallet(1)})->ad->id);
  rng_.seed(7);
  for (int i = 0; i < 200; ++i) second.push_back(DecideFor({Wallet(1)})->ad->id);
  EXPECT_EQ(first, second);
  EXPECT_GT(std::set<int64_t>(first.begin(), first.end()).size(), 4u);
}

TEST_F(EngineTest, MatchedWalletIsTheMostRecentMatch) {
  t_.AddCampaign(1, {5, 6}).chains = {kEthereum};
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 3, 50));
  activity_.Add(Wallet(2), Seen(6, kEthereum, kToday - 1, 1));
  // More recent, but on a chain the campaign does not allow: does not count.
  activity_.Add(Wallet(3), Seen(5, kPolygon, kToday, 99));
  // More recent, but with a project the campaign does not target.
  activity_.Add(Wallet(3), Seen(8, kEthereum, kToday, 99));

  auto d = DecideFor({Wallet(3), Wallet(1), Wallet(2)});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->matched_wallet, 2u);
}

TEST_F(EngineTest, MatchedWalletTieOnDayGoesToLargerCount) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 1, 3));
  activity_.Add(Wallet(2), Seen(5, kEthereum, kToday - 1, 4));

  EXPECT_EQ(DecideFor({Wallet(1), Wallet(2)})->matched_wallet, 1u);
  EXPECT_EQ(DecideFor({Wallet(2), Wallet(1)})->matched_wallet, 0u);
}

TEST_F(EngineTest, MatchedWalletFullTieGoesToEarliestInRequest) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 1, 3));
  activity_.Add(Wallet(2), Seen(5, kEthereum, kToday - 1, 3));

  EXPECT_EQ(DecideFor({Wallet(1), Wallet(2)})->matched_wallet, 0u);
  EXPECT_EQ(DecideFor({Wallet(2), Wallet(1)})->matched_wallet, 0u);
  EXPECT_EQ(DecideFor({Wallet(3), Wallet(2), Wallet(1)})->matched_wallet, 1u);
}

TEST_F(EngineTest, MatchedWalletIgnoresInteractionsOutsideTheRecencyWindow) {
  t_.AddCampaign(1, {5}).recency_days = 10;
  t_.AddAd(1, 100);
  activity_.Add(Wallet(1), Seen(5, kEthereum, kToday - 10, 1));
  activity_.Add(Wallet(2), Seen(5, kEthereum, kToday - 11, 1000));

  EXPECT_EQ(DecideFor({Wallet(2), Wallet(1)})->matched_wallet, 1u);
}

TEST_F(EngineTest, ManyWalletsSpillPastTheInlineBuffer) {
  t_.AddCampaign(1, {5});
  t_.AddAd(1, 100);
  std::vector<Address> wallets;
  for (int i = 0; i < 80; ++i) wallets.push_back(Wallet(static_cast<uint8_t>(i + 1)));
  activity_.Add(wallets[70], Seen(5));

  auto d = DecideFor(wallets);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->matched_wallet, 70u);
}

TEST_F(EngineTest, ManyTiesSpillPastTheInlineBuffer) {
  for (int c = 1; c <= 40; ++c) {
    t_.AddCampaign(c, {5}, 2000);
    t_.AddAd(c, c * 100);
  }
  activity_.Add(Wallet(1), Seen(5));

  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(CampaignFor({Wallet(1)}));
  EXPECT_EQ(seen.size(), 40u);
}

class SampleDecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_.AddCampaign(1, {5}, 1000, kCommunityA);
    t_.AddCampaign(2, {6}, 1000, kCommunityB);
    t_.AddAd(1, 100);
    t_.AddAd(2, 200);
    t_.AddAd(1, 101, 1, std::string(400, 'x'));
  }

  int64_t AdFor(uint64_t counter, ImageFormat format = ImageFormat::kLandscape,
                Variant variant = Variant::kCurrent) {
    DecisionRequest request{.wallets = {},
                            .format = format,
                            .earlier_variant = variant == Variant::kEarlier,
                            .publisher = &t_.catalog.publishers[0],
                            .now_seconds = kNow};
    auto d = SampleDecision(request, t_.catalog, counter);
    return d ? d->ad->id : 0;
  }

  TestCatalog t_;
};

TEST_F(SampleDecisionTest, RotatesThroughSampleAds) {
  t_.Finish();
  EXPECT_EQ(AdFor(0), 100);
  EXPECT_EQ(AdFor(1), 200);
  EXPECT_EQ(AdFor(2), 101);
  EXPECT_EQ(AdFor(3), 100);
  EXPECT_EQ(AdFor(1'000'000'001), 101);
}

TEST_F(SampleDecisionTest, FollowsTheVariantLists) {
  t_.Finish();
  EXPECT_EQ(AdFor(2, ImageFormat::kLandscape, Variant::kEarlier), 100);
  EXPECT_EQ(AdFor(1, ImageFormat::kLandscape, Variant::kEarlier), 200);
  EXPECT_EQ(AdFor(0, ImageFormat::kNoImage, Variant::kEarlier), 0);
}

TEST_F(SampleDecisionTest, SkipsBlockedCommunities) {
  t_.catalog.publishers[0].blocked_communities = {kCommunityB};
  t_.Finish();
  EXPECT_EQ(AdFor(1), 101);
  EXPECT_EQ(AdFor(4), 101);
  t_.catalog.publishers[0].blocked_communities = {kCommunityA, kCommunityB};
  EXPECT_EQ(AdFor(0), 0);
}

TEST_F(SampleDecisionTest, ReturnsTheCampaignAndCommunityOfTheAd) {
  t_.Finish();
  DecisionRequest request{.wallets = {},
                          .format = ImageFormat::kLandscape,
                          .publisher = &t_.catalog.publishers[0],
                          .now_seconds = kNow};
  auto d = SampleDecision(request, t_.catalog, 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->campaign->id, 2);
  EXPECT_EQ(d->community->id, kCommunityB);
}

}  // namespace
}  // namespace adserver::decision
