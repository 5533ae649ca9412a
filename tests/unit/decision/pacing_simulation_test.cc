// Even pacing under synthetic traffic, driven by a FakeClock through the real Decide() and
// billing path: daily spend lands within +-5 % of the budget and no hour spends more than
// twice its share (budget / 24).

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/clock.h"
#include "decision/engine.h"
#include "decision/live_state.h"
#include "unit/decision/test_catalog.h"

namespace adserver::decision {
namespace {

constexpr int64_t kDay0 = 1'767'225'600;      // 2026-01-01 00:00 UTC
constexpr Micros kDailyBudget = 100'000'000;  // 100 units a day
constexpr Micros kCpmBid = 10'000'000;        // 10 units CPM = 10 000 micros an impression

struct DayResult {
  Micros spend = 0;
  std::array<Micros, 24> hours{};
  double max_hour_ratio = 0;  // largest hour spend / (budget / 24)
};

class PacingSimulation {
 public:
  PacingSimulation() : live_(LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64}) {
    Campaign& c = t_.AddCampaign(1, {5}, static_cast<double>(kCpmBid) / 1000.0);
    c.pricing_model = PricingModel::kCpm;
    c.bid_micros = kCpmBid;
    c.daily_budget_micros = kDailyBudget;
    c.pacing = PacingMode::kEven;
    t_.AddAd(1, 10);
    Address w;
    w.bytes.fill(1);
    wallet_ = {w};
    activity_.Add(w, {.project_id = 5, .chain_id = 1, .last_seen_day = 0, .count = 1});
    activity_.Finalize();
    t_.Finish();
  }

  // Requests per hour: a diurnal curve between `low` and `high` (peak at 15:00 UTC); hours in
  // `outage` get none.
  DayResult RunDay(int day, int low, int high, std::vector<int> outage = {}) {
    DayResult result;
    clock_.SetMicros((kDay0 + day * 86400) * 1'000'000);
    for (int hour = 0; hour < 24; ++hour) {
      bool down = std::find(outage.begin(), outage.end(), hour) != outage.end();
      double phase = std::cos((hour - 15) * 3.14159265358979 / 12);
      int requests = down ? 0 : static_cast<int>(low + (high - low) * (phase + 1) / 2);
      Micros before = live_.ledger.Read(1, clock_.NowSeconds()).day_spend;
      int64_t hour_start = clock_.NowMicros();
      for (int i = 0; i < requests; ++i) {
        clock_.SetMicros(hour_start + int64_t{3'600'000'000} * i / requests);
        Serve();
      }
      clock_.SetMicros(hour_start + int64_t{3'600'000'000} - 1);
      Micros spent = live_.ledger.Read(1, clock_.NowSeconds()).day_spend - before;
      result.hours[hour] = spent;
      result.spend += spent;
      result.max_hour_ratio =
          std::max(result.max_hour_ratio, static_cast<double>(spent) / (kDailyBudget / 24.0));
      clock_.SetMicros(hour_start + int64_t{3'600'000'000});
    }
    return result;
  }

 private:
  void Serve() {
    int64_t now = clock_.NowSeconds();
    DecisionRequest request{.wallets = wallet_,
                            .format = ImageFormat::kLandscape,
                            .publisher = &t_.catalog.publishers[0],
                            .now_seconds = now,
                            .live = &live_,
                            .options = &options_};
    auto d = Decide(request, t_.catalog, activity_, rng_);
    if (d) RecordImpression(live_, *d->campaign, wallet_, now);
  }

  testing::TestCatalog t_;
  ActivityIndex activity_;
  LiveState live_;
  DecisionOptions options_;
  FakeClock clock_;
  Rng rng_{2026};
  std::vector<Address> wallet_;
};

void Report(const char* name, const DayResult& r) {
  std::printf("[pacing] %s: daily spend %.2f%% of budget, max hour %.2fx its share\n", name,
              100.0 * static_cast<double>(r.spend) / kDailyBudget, r.max_hour_ratio);
}

TEST(PacingSimulationTest, EvenPacingSpendsTheDailyBudgetEvenlyUnderDiurnalTraffic) {
  PacingSimulation sim;
  // 10 000 impressions fit the budget; traffic offers 24 000-72 000 requests a day.
  for (int day = 0; day < 3; ++day) {
    DayResult r = sim.RunDay(day, 1000, 3000);
    Report("diurnal", r);
    EXPECT_NEAR(static_cast<double>(r.spend), kDailyBudget, 0.05 * kDailyBudget) << "day " << day;
    EXPECT_LE(r.max_hour_ratio, 2.0) << "day " << day;
  }
}

TEST(PacingSimulationTest, CatchesUpAfterAnOutageWithoutAnyHourAboveTwiceItsShare) {
  PacingSimulation sim;
  DayResult r = sim.RunDay(0, 1000, 3000, /*outage=*/{6, 7, 8});
  Report("3-hour outage", r);
  EXPECT_NEAR(static_cast<double>(r.spend), kDailyBudget, 0.05 * kDailyBudget);
  EXPECT_LE(r.max_hour_ratio, 2.0);
  EXPECT_EQ(r.hours[7], 0);
}

TEST(PacingSimulationTest, NeverSpendsMoreThanTheDailyBudget) {
  PacingSimulation sim;
  DayResult r = sim.RunDay(0, 5000, 20000);
  Report("heavy traffic", r);
  EXPECT_LE(r.spend, kDailyBudget);
  EXPECT_GE(static_cast<double>(r.spend), 0.95 * kDailyBudget);
  EXPECT_LE(r.max_hour_ratio, 2.0);
}

}  // namespace
}  // namespace adserver::decision
