#include "decision/budget_leases.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace adserver::decision {
namespace {

LeasedCampaign Campaign(Micros budget, Micros max_price, Micros spent = 0) {
  return LeasedCampaign{.campaign_id = 7, .budget = budget, .max_price = max_price, .spent = spent};
}

TEST(BudgetLeasesTest, ASliceIsAShareOfTheBudgetButAtLeastOnePrice) {
  LeaseOptions options;  // 0.5 %
  EXPECT_EQ(BudgetLeases::SliceOf(Campaign(100'000'000, 2'000), options), 500'000);
  EXPECT_EQ(BudgetLeases::SliceOf(Campaign(100'000, 2'000), options), 2'000);
  EXPECT_EQ(BudgetLeases::SliceOf(Campaign(0, 0), options), 1);
}

TEST(BudgetLeasesTest, NothingIsSpentWithoutALease) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  EXPECT_FALSE(leases.TrySpend(7, 1));
  EXPECT_EQ(leases.Held(7), 0);
}

TEST(BudgetLeasesTest, RefillSeedsFromThePersistedSpendAndTopsUpBelowHalfASlice) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  const LeasedCampaign c = Campaign(10'000'000, 1'000, /*spent=*/4'000'000);  // slice 50,000
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  EXPECT_EQ(leases.Held(7), 50'000);
  EXPECT_EQ(*authority.Take(7, 0), 0);
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(leases.TrySpend(7, 1'000));  // held 25,000
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  EXPECT_EQ(leases.Held(7), 25'000) << "half a slice left: no refill yet";
  ASSERT_TRUE(leases.TrySpend(7, 1'000));
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  EXPECT_EQ(leases.Held(7), 50'000) << "topped up to a slice";
  // Remaining at the authority: 6,000,000 - 50,000 - 26,000.
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(leases.Held(7), 0);
  EXPECT_EQ(*authority.Take(7, 100'000'000), 6'000'000 - 26'000);
}

TEST(BudgetLeasesTest, SpendStopsAtTheBudgetAndNeverPassesIt) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  const LeasedCampaign c = Campaign(1'000'000, 3'000);  // slice 5,000
  Micros spent = 0;
  for (int round = 0; round < 10'000; ++round) {
    ASSERT_TRUE(leases.Refill({&c, 1}).ok());
    if (!leases.TrySpend(7, 3'000)) {
      if (leases.Held(7) < 3'000 && *authority.Take(7, 0) == 0) {
        // The authority is empty: only what the lease holds is left.
        break;
      }
      continue;
    }
    spent += 3'000;
  }
  EXPECT_LE(spent, 1'000'000);
  EXPECT_GT(spent, 1'000'000 - 3'000 * 2) << "underspend below two prices";
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(*authority.Take(7, 10'000'000), 1'000'000 - spent) << "nothing lost or made";
}

TEST(BudgetLeasesTest, ConcurrentSpendersAndARefillThreadNeverOverspend) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  const LeasedCampaign c = Campaign(2'000'000, 700);  // slice 10,000
  std::atomic<bool> stop{false};
  std::atomic<Micros> spent{0};
  // Seeded before the spenders start: on a busy machine they could otherwise finish before the
  // refill thread first ran, and the authority would not know the campaign.
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  std::thread refill([&] {
    while (!stop.load()) (void)leases.Refill({&c, 1});
  });
  std::vector<std::thread> servers;
  for (int t = 0; t < 4; ++t) {
    servers.emplace_back([&] {
      for (int i = 0; i < 200'000 && !stop.load(); ++i) {
        if (leases.TrySpend(7, 700)) spent.fetch_add(700);
      }
    });
  }
  for (std::thread& s : servers) s.join();
  stop = true;
  refill.join();
  EXPECT_LE(spent.load(), 2'000'000);
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(*authority.Take(7, 10'000'000), 2'000'000 - spent.load());
}

TEST(BudgetLeasesTest, AGiveBackThatFailsStaysHeld) {
  class Failing final : public BudgetAuthority {
   public:
    Result<Micros> Take(int64_t, Micros want) override { return want; }
    Status Give(int64_t, Micros) override { return UnavailableError("down"); }
    Result<bool> Seed(int64_t, Micros) override { return true; }
    Status Forget(int64_t) override { return OkStatus(); }
  } failing;
  BudgetLeases leases(failing);
  const LeasedCampaign c = Campaign(1'000'000, 1'000);
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  EXPECT_EQ(leases.ReturnAll().code(), Code::kUnavailable);
  EXPECT_EQ(leases.Held(7), 5'000);
}

TEST(BudgetLeasesTest, AChargeBeyondTheLeaseIsADebtTheNextRefillTakesFirst) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  const LeasedCampaign c = Campaign(1'000'000, 1'000);  // slice 5,000
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  leases.Charge(7, 8'000);  // a click billed after the lease ran low
  EXPECT_EQ(leases.Held(7), -3'000);
  EXPECT_FALSE(leases.TrySpend(7, 1)) << "a debt spends nothing";
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  EXPECT_EQ(leases.Held(7), 5'000);
  // Taken from the authority: 5,000 + 8,000.
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(*authority.Take(7, 100'000'000), 1'000'000 - 8'000);
}

TEST(BudgetLeasesTest, ACreditedChargeGoesBackToTheAuthorityWithTheLease) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  const LeasedCampaign c = Campaign(1'000'000, 1'000);  // slice 5,000
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());
  leases.Charge(7, 3'000);  // a conversion
  ASSERT_TRUE(leases.Refill({&c, 1}).ok());  // 2,000 held: below half a slice, topped up
  leases.Credit(7, 3'000);                   // its block was reorged away
  EXPECT_EQ(leases.Held(7), 8'000);
  leases.Credit(7, 0);
  leases.Credit(7, -5);
  EXPECT_EQ(leases.Held(7), 8'000) << "only positive amounts";
  ASSERT_TRUE(leases.ReturnAll().ok());
  EXPECT_EQ(*authority.Take(7, 100'000'000), 1'000'000) << "nothing spent in the end";
}

TEST(BudgetLeasesTest, ChargeOfNothingChangesNothing) {
  LocalBudgetAuthority authority;
  BudgetLeases leases(authority);
  leases.Charge(7, 0);
  EXPECT_EQ(leases.Held(7), 0);
}

}  // namespace
}  // namespace adserver::decision
