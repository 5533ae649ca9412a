// Google Benchmark of decision::Decide() (issue 4) on the 10k-campaign synthetic catalog of
// bench/dataset.h, with the live state of a serving process: budgets (half the campaigns have
// daily budgets, even pacing), frequency caps on a third, learned CTR/CVR counters and
// per-publisher factors, a publisher floor of 0. Reports the median time per decision for 1, 3 and
// 50 wallets of known people.
//
//   cmake -B build-bench -DCMAKE_BUILD_TYPE=Release -DADSERVER_BUILD_BENCH=ON
//   cmake --build build-bench --target adserver-decide-bench
//   build-bench/adserver-decide-bench            # ADSERVER_BENCH_WALLETS=100000 by default
//   ADSERVER_BENCH_EXPLORE=0 build-bench/adserver-decide-bench   # the greedy rule (issue 36)

#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "common/crypto.h"
#include "dataset.h"
#include "decision/engine.h"
#include "decision/live_state.h"
#include "decision/rate_tracker.h"
#include "decision/walk_order.h"
#include "ingest/catalog_builder.h"

namespace adserver::bench {
namespace {

constexpr int kRequests = 1024;
// The placement every benchmarked request names (its factor is learned, as the load mix's are).
constexpr const char* kAdUnit = "top";

struct World {
  DatasetOptions options;
  std::shared_ptr<const decision::Catalog> catalog;
  std::unique_ptr<decision::ActivityIndex> activity;
  std::unique_ptr<decision::LiveState> live;
  decision::DecisionOptions decision_options;
};

// Budgets, pacing and caps on the dataset's campaigns, so every rule of the auction runs.
void AddDecisionControls(store::CatalogData& data) {
  for (size_t i = 0; i < data.campaigns.size(); ++i) {
    store::CampaignRecord& c = data.campaigns[i];
    if (i % 2 == 0) c.daily_budget_micros = 50'000'000;
    if (i % 5 == 0) c.total_budget_micros = 1'000'000'000;
    if (i % 3 == 0) c.frequency_cap = store::FrequencyCap{.count = 3, .hours = 24};
    if (i % 7 == 0) c.pacing = "asap";
  }
}

const World& GetWorld() {
  static const World* world = [] {
    ADS_CHECK(InitCrypto());
    auto* w = new World;
    w->options.wallets = 100'000;
    if (const char* n = std::getenv("ADSERVER_BENCH_WALLETS")) w->options.wallets = std::atoll(n);
    store::CatalogData data = MakeCatalogData(w->options, "spk_" + std::string(30, 'D'));
    AddDecisionControls(data);
    auto catalog = ingest::BuildCatalog(data, {});
    ADS_CHECK(catalog.ok()) << catalog.status().message();
    w->catalog = *catalog;
    w->activity = std::make_unique<decision::ActivityIndex>(MakeActivityIndex(w->options));
    // ADSERVER_BENCH_EXPLORE=0: the greedy rule (issue 36's "off"), to compare with sampling.
    decision::DecisionOptions decision_options;
    if (const char* e = std::getenv("ADSERVER_BENCH_EXPLORE")) {
      decision_options.explore = std::string_view(e) != "0";
    }
    w->live = std::make_unique<decision::LiveState>(decision::LiveStateOptions{}, decision_options);
    // Some history: impressions and clicks on every campaign, a little spend.
    int64_t now = w->options.now + 12 * 3600;
    for (const decision::Campaign& c : w->catalog->campaigns) {
      for (int k = 0; k < 20; ++k) w->live->ledger.RecordImpression(c.id, 1000, now);
      if (c.id % 4 == 0) w->live->ledger.RecordClick(c.id, 0, now);
      // Per-placement learning (issue 36 item 5): the same history split over the request's
      // publisher and three others, so each CPC/CPA candidate looks its factor up.
      const int64_t publisher = w->catalog->publishers[0].id;
      for (int64_t p : {publisher, publisher + 1, publisher + 2, publisher + 3}) {
        w->live->placement_feed.Add({c.id, p}, 5, c.id % 4 == 0 && p == publisher ? 1 : 0);
      }
      // ... and per placement of the request's publisher: the request's adUnitId and another,
      // so each candidate looks its unit factor up too.
      for (const char* unit : {kAdUnit, "sidebar"}) {
        w->live->placement_feed.Add({c.id, publisher, decision::AdUnitKey(unit)}, 5,
                                    c.id % 8 == 0 && unit == kAdUnit ? 1 : 0);
      }
    }
    // Lift ceilings and the walk order, as `serve` computes them after restoring counters.
    decision::RecomputeRateLift(*w->live, *w->catalog, now);
    return w;
  }();
  return *world;
}

std::vector<std::vector<Address>> KnownWalletSets(int n) {
  const World& w = GetWorld();
  std::vector<std::vector<Address>> sets(kRequests);
  uint64_t x = 4242;
  for (auto& set : sets) {
    for (int j = 0; j < n; ++j) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      set.push_back(WalletAt(w.options, static_cast<int64_t>((x >> 33) % w.options.wallets)));
    }
  }
  return sets;
}

void BM_DecideLive(benchmark::State& state) {
  const World& w = GetWorld();
  auto sets = KnownWalletSets(static_cast<int>(state.range(0)));
  decision::Rng rng(7);
  size_t i = 0;
  int64_t filled = 0;
  std::array<int64_t, 3> by_model{};
  for (auto _ : state) {
    size_t r = i++ % sets.size();
    decision::DecisionRequest request{.wallets = sets[r],
                                      .format = ImageFormat::kLandscape,
                                      .publisher = &w.catalog->publishers[0],
                                      .now_seconds = w.options.now + 12 * 3600,
                                      .ad_unit_id = kAdUnit,
                                      .live = w.live.get(),
                                      .options = &w.decision_options};
    auto decision = decision::Decide(request, *w.catalog, *w.activity, rng);
    filled += decision.has_value();
    if (decision) ++by_model[static_cast<size_t>(decision->campaign->pricing_model)];
    benchmark::DoNotOptimize(decision);
  }
  const auto share = [&](int64_t n) {
    return benchmark::Counter(static_cast<double>(n) / static_cast<double>(state.iterations()));
  };
  state.counters["fill"] = share(filled);
  // Which pricing models win (exploration shifts the winners towards CPC/CPA campaigns).
  state.counters["cpc"] = share(by_model[static_cast<size_t>(PricingModel::kCpc)]);
  state.counters["cpa"] = share(by_model[static_cast<size_t>(PricingModel::kCpa)]);
}
BENCHMARK(BM_DecideLive)
    ->ArgName("wallets")
    ->Arg(1)
    ->Arg(3)
    ->Arg(50)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// The background work of the counter flusher's tick (every second), which shares the serving
// core: the recompute of every lift ceiling, and building a walk order when one is due.
void BM_RecomputeRateLift(benchmark::State& state) {
  const World& w = GetWorld();
  for (auto _ : state) {
    decision::RecomputeRateLift(*w.live, *w.catalog, w.options.now + 12 * 3600);
  }
}
BENCHMARK(BM_RecomputeRateLift)->Unit(benchmark::kMicrosecond);

// Exploration's effective counts of 10,000 CPC campaigns that all had new impressions and
// clicks since the last recompute (the worst case of the tick: every campaign's windows are
// tested). Arg: change detection on (1, the default threshold) or off (0).
void BM_RateTrackerUpdate(benchmark::State& state) {
  constexpr int kCampaigns = 10'000;
  decision::DecisionOptions options;
  if (state.range(0) == 0) options.change_threshold = 0;
  std::vector<decision::Campaign> campaigns(kCampaigns);
  for (int i = 0; i < kCampaigns; ++i) {
    campaigns[i].id = i;
    campaigns[i].pricing_model = PricingModel::kCpc;
    campaigns[i].bid_micros = 500'000;
    campaigns[i].value_micros = 5'000;
  }
  decision::RateTracker tracker(kCampaigns);
  int64_t tick = 0;
  for (auto _ : state) {
    ++tick;
    for (int i = 0; i < kCampaigns; ++i) {
      // 50 impressions and a click every tick: a full ring of windows after 16 ticks.
      const decision::BudgetLedger::View counts{
          .tracked = true, .impressions = tick * 50, .clicks = tick + (i % 7)};
      benchmark::DoNotOptimize(tracker.Update(campaigns[i], counts, 1'767'225'600 + tick, options));
    }
  }
  state.SetItemsProcessed(state.iterations() * kCampaigns);
}
BENCHMARK(BM_RateTrackerUpdate)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

// Late conversions (issue 36 item 4): 10,000 CPA campaigns with new impressions and a
// conversion of known delay every tick; the tick fits the mean delay over all of them
// (FitDelay: kFitSteps EM steps over each campaign's 32 age slots), then updates each.
void BM_CpaDelayFitAndUpdate(benchmark::State& state) {
  constexpr int kCampaigns = 10'000;
  decision::DecisionOptions options;
  decision::Catalog catalog;
  for (int i = 1; i <= kCampaigns; ++i) {
    decision::Campaign c;
    c.id = i;
    c.pricing_model = PricingModel::kCpa;
    c.bid_micros = 5'000'000;
    c.value_micros = 5'000;
    c.conversion = decision::ConversionRule{.window_days = 14};
    catalog.campaigns.push_back(c);
  }
  decision::RateTracker tracker(kCampaigns + 1);
  int64_t tick = 0;
  std::vector<decision::DelayFeed::Delta> delays;
  for (auto _ : state) {
    ++tick;
    // An hour a tick, so the age slots fill over the window.
    const int64_t now = 1'767'225'600 + tick * 3600;
    delays.clear();
    for (int i = 1; i <= kCampaigns; ++i) {
      delays.push_back({.campaign_id = i, .conversions = 1, .seconds = 86400});
    }
    tracker.AddDelays(delays);
    tracker.FitDelay(catalog, now, options);
    for (const decision::Campaign& c : catalog.campaigns) {
      const decision::BudgetLedger::View counts{
          .tracked = true, .impressions = tick * 500, .conversions = tick};
      benchmark::DoNotOptimize(tracker.Update(c, counts, now, options));
    }
  }
  state.SetItemsProcessed(state.iterations() * kCampaigns);
}
BENCHMARK(BM_CpaDelayFitAndUpdate)->Unit(benchmark::kMicrosecond);

void BM_BuildWalkOrder(benchmark::State& state) {
  const World& w = GetWorld();
  std::vector<double> ceilings(w.catalog->campaigns.size());
  for (size_t c = 0; c < ceilings.size(); ++c) {
    ceilings[c] = w.live->LiftCeiling(w.catalog->campaigns[c].id);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(decision::WalkOrder::Build(*w.catalog, ceilings, 0));
  }
}
BENCHMARK(BM_BuildWalkOrder)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace adserver::bench

BENCHMARK_MAIN();
