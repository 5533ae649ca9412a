// Exposure writes (LmdbExposureStore::AddExposures), the cost the exposures thread pays per
// wallet of a CPA impression (docs/BENCHMARKS.md, "Exposures"). A store of
// ADSERVER_BENCH_EXPOSURES (default 1,000,000) (wallet, campaign) records is built once in
// ADSERVER_BENCH_EXPOSURE_DIR (default /tmp/adserver-bench-exposures); each iteration writes one
// flush: `batch` exposures of new (wallet, campaign) pairs, 50 wallets per served ad (the load
// mix's multi-wallet requests) or one.
// Run: build/adserver-exposure-bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_exposure_store.h"

namespace {

using adserver::Address;
using adserver::store::ExposureWrite;
using adserver::store::LmdbExposureStore;

std::string Dir() {
  const char* d = std::getenv("ADSERVER_BENCH_EXPOSURE_DIR");
  return d != nullptr ? d : "/tmp/adserver-bench-exposures";
}

size_t RecordCount() {
  const char* n = std::getenv("ADSERVER_BENCH_EXPOSURES");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 1'000'000;
}

Address RandomWallet(std::mt19937_64& rng) {
  Address a;
  for (int i = 0; i < 20; i += 4) {
    uint32_t r = static_cast<uint32_t>(rng());
    std::memcpy(a.bytes.data() + i, &r, 4);
  }
  return a;
}

// `count` writes: groups of `wallets_per_ad` wallets sharing one served ad's entry.
std::vector<ExposureWrite> Writes(std::mt19937_64& rng, size_t count, size_t wallets_per_ad,
                                  int64_t now) {
  std::vector<ExposureWrite> writes;
  writes.reserve(count);
  adserver::store::ExposureEntry entry;
  for (size_t i = 0; i < count; ++i) {
    if (i % wallets_per_ad == 0) {
      for (auto& b : entry.decision_id) b = static_cast<uint8_t>(rng());
      entry.exposed_at = now;
      entry.ad_id = static_cast<int64_t>(rng() % 20'000) + 1;
      entry.publisher_id = 7;
      entry.person = rng();
      entry.ad_unit_id = "sidebar";
    }
    writes.push_back(ExposureWrite{.wallet = RandomWallet(rng),
                                   .campaign_id = static_cast<int64_t>(rng() % 300) + 1,
                                   .entry = entry,
                                   .prior_last_seen = 0});
  }
  return writes;
}

LmdbExposureStore& Store() {
  static std::unique_ptr<LmdbExposureStore> store = [] {
    const std::string dir = Dir();
    const bool fresh = !std::filesystem::exists(std::filesystem::path(dir) / "data.mdb");
    auto opened = LmdbExposureStore::Open(dir);
    if (!opened.ok()) std::abort();
    if (fresh) {
      std::mt19937_64 rng(1);
      for (size_t done = 0; done < RecordCount(); done += 100'000) {
        if (!(*opened)->AddExposures(Writes(rng, 100'000, 1, 1'767'225'600)).ok()) std::abort();
      }
    }
    return std::move(opened).value();
  }();
  return *store;
}

void BM_AddExposures(benchmark::State& state) {
  LmdbExposureStore& store = Store();
  std::mt19937_64 rng(state.range(1) * 7919 + 17);
  const size_t batch = static_cast<size_t>(state.range(0));
  const size_t per_ad = static_cast<size_t>(state.range(1));
  int64_t written = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<ExposureWrite> writes = Writes(rng, batch, per_ad, 1'767'225'600);
    state.ResumeTiming();
    if (!store.AddExposures(writes).ok()) state.SkipWithError("AddExposures failed");
    written += static_cast<int64_t>(batch);
  }
  state.counters["us_per_write"] =
      benchmark::Counter(static_cast<double>(written),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert,
                         benchmark::Counter::kIs1000);
}
// One flush of the load mix: ~4k writes; 50 wallets per ad, and one.
BENCHMARK(BM_AddExposures)->Args({4096, 50})->Args({4096, 1})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
