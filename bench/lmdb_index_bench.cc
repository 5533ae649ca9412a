// LMDB wallet activity index at scale (issue 5): bytes per (wallet, project) pair on disk,
// lookup latency for 1 and 50 wallets, time from open to the first answered lookup.
//
// The index is generated once (sorted bulk load) and cached:
//   ADSERVER_BENCH_LMDB_DIR  (default /tmp/adserver-bench-lmdb)   where the index lives
//   ADSERVER_BENCH_WALLETS   (default 10000000)                   wallets, 5 projects each
// Run: build-rel/adserver-lmdb-bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "store/lmdb/lmdb_activity_index.h"

namespace {

using adserver::Address;
using adserver::decision::Interaction;
using adserver::store::LmdbActivityIndex;

constexpr int kProjectsPerWallet = 5;
constexpr uint32_t kChains[] = {1, 10, 137, 8453, 42161};

std::string Dir() {
  const char* d = std::getenv("ADSERVER_BENCH_LMDB_DIR");
  return d != nullptr ? d : "/tmp/adserver-bench-lmdb";
}

uint64_t WalletCount() {
  const char* n = std::getenv("ADSERVER_BENCH_WALLETS");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 10'000'000;
}

// Wallet i: the first 8 bytes grow with i (so generation is already sorted) and are spread
// over the whole key space; the other 12 bytes are pseudo-random.
Address WalletAt(uint64_t i, uint64_t n) {
  Address a;
  uint64_t hi = (UINT64_MAX / n) * i;
  for (int b = 0; b < 8; ++b) a.bytes[b] = static_cast<uint8_t>(hi >> (56 - 8 * b));
  std::mt19937_64 rng(i * 0x9E3779B97F4A7C15ull);
  uint64_t r1 = rng(), r2 = rng();
  std::memcpy(a.bytes.data() + 8, &r1, 8);
  std::memcpy(a.bytes.data() + 16, &r2, 4);
  return a;
}

void InteractionsOf(uint64_t i, std::vector<Interaction>& out) {
  std::mt19937 rng(static_cast<uint32_t>(i));
  for (int k = 0; k < kProjectsPerWallet; ++k) {
    out.push_back({.project_id = static_cast<uint32_t>(1 + rng() % 1100),
                   .chain_id = kChains[rng() % 5],
                   .last_seen_day = static_cast<uint32_t>(20000 + rng() % 400),
                   .count = static_cast<uint32_t>(1 + rng() % 50)});
  }
}

std::shared_ptr<LmdbActivityIndex>& Index() {
  static std::shared_ptr<LmdbActivityIndex> index = [] {
    const uint64_t n = WalletCount();
    auto opened = LmdbActivityIndex::Open(Dir(), {.no_sync = true});
    if (!opened.ok()) {
      std::cerr << "cannot open " << Dir() << ": " << opened.status().message() << "\n";
      std::exit(1);
    }
    std::shared_ptr<LmdbActivityIndex> idx = *opened;
    if (idx->wallet_count() == 0) {
      auto start = std::chrono::steady_clock::now();
      uint64_t i = 0;
      adserver::Status st = idx->LoadSorted([&](Address& w, std::vector<Interaction>& items) {
        if (i == n) return false;
        w = WalletAt(i, n);
        InteractionsOf(i, items);
        ++i;
        return true;
      });
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "generated " << n << " wallets in " << s << " s: " << st.message() << "\n";
    }
    return idx;
  }();
  return index;
}

void Counters(benchmark::State& state) {
  auto stats = Index()->GetStats();
  if (!stats.ok()) return;
  double pairs = double(stats->wallets) * kProjectsPerWallet;
  using C = benchmark::Counter;
  state.counters["wallets"] = C(double(stats->wallets), C::kAvgThreads);
  state.counters["file_bytes_per_pair"] = C(double(stats->file_bytes) / pairs, C::kAvgThreads);
  state.counters["page_bytes_per_pair"] =
      C(double(stats->pages * stats->page_size) / pairs, C::kAvgThreads);
}

// Touches every page once (a server that has run for a while has its working set mapped);
// reported time = one full scan of the index.
void BM_WarmUpFullScan(benchmark::State& state) {
  for (auto _ : state) {
    uint64_t rows = 0;
    adserver::Status st = Index()->Scan([&](const adserver::store::ActivityRecord&) { ++rows; });
    benchmark::DoNotOptimize(rows);
    state.counters["pairs"] = double(rows);
  }
}
BENCHMARK(BM_WarmUpFullScan)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_LookupWallets(benchmark::State& state) {
  const auto& idx = Index();
  const uint64_t n = idx->wallet_count();
  const auto batch = static_cast<size_t>(state.range(0));
  std::mt19937_64 rng(42);
  // Precomputed request sets so address generation is not timed.
  std::vector<std::vector<Address>> requests(256);
  for (auto& r : requests) {
    for (size_t k = 0; k < batch; ++k) r.push_back(WalletAt(rng() % n, n));
  }
  size_t found = 0, next = 0;
  for (auto _ : state) {
    const auto& wallets = requests[next++ & 255];
    idx->LookupAll(wallets, [&](std::span<const Interaction> s) { found += s.size(); });
    benchmark::DoNotOptimize(found);
  }
  state.counters["interactions_per_lookup"] = benchmark::Counter(
      double(found) / double(state.iterations()) / double(batch), benchmark::Counter::kAvgThreads);
  Counters(state);
}
BENCHMARK(BM_LookupWallets)->Arg(1)->Arg(50)->ThreadRange(1, 2)->UseRealTime();

// 50 random (unknown) wallets, looked up over and over by whatever path Index() answers from.
void LookupUnknownWallets50(benchmark::State& state) {
  const auto& idx = Index();
  std::mt19937_64 rng(7);
  std::vector<Address> wallets(50);
  for (Address& a : wallets) {
    for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
  }
  size_t found = 0;
  for (auto _ : state) {
    idx->LookupAll(wallets, [&](std::span<const Interaction> s) { found += s.size(); });
    benchmark::DoNotOptimize(found);
  }
}
void BM_LookupUnknownWallets50(benchmark::State& state) { LookupUnknownWallets50(state); }
BENCHMARK(BM_LookupUnknownWallets50);

// Serving readiness with the index on disk: open the environment and answer one lookup.
void BM_OpenToFirstLookup(benchmark::State& state) {
  const uint64_t n = Index()->wallet_count();
  Address w = WalletAt(n / 2, n);
  for (auto _ : state) {
    state.PauseTiming();
    Index().reset();  // LMDB allows one environment per process and path
    state.ResumeTiming();
    auto opened = LmdbActivityIndex::Open(Dir(), {.no_sync = true});
    size_t got = (*opened)->Lookup(w).size();
    benchmark::DoNotOptimize(got);
    state.PauseTiming();
    Index() = *opened;
    state.ResumeTiming();
  }
}
BENCHMARK(BM_OpenToFirstLookup)->Unit(benchmark::kMicrosecond)->Iterations(20);

// --- the serving read cache: the same lookups answered by the wallet table ---------------------

// Turns the read cache on for Index() and builds the table once (kept next to the index).
void EnsureTable() {
  auto& idx = Index();
  if (idx->read_cache().GetStatus().table) return;
  (void)idx->read_cache().Enable();
  if (!idx->read_cache().GetStatus().table) {
    auto start = std::chrono::steady_clock::now();
    adserver::Status st = idx->read_cache().Rebuild();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "built the wallet table in " << s << " s: " << st.message() << "\n";
  }
  // Maps the table's pages in (as a server that has run for a while has them): 2 M random
  // lookups touch nearly every page of slots and records once.
  const uint64_t n = idx->wallet_count();
  std::mt19937_64 rng(99);
  std::vector<Address> batch(50);
  size_t found = 0;
  for (int i = 0; i < 40'000; ++i) {
    for (Address& a : batch) a = WalletAt(rng() % n, n);
    idx->LookupAll(batch, [&](std::span<const Interaction> s) { found += s.size(); });
  }
  benchmark::DoNotOptimize(found);
}

void BM_TableLookupWallets(benchmark::State& state) {
  EnsureTable();
  const auto& idx = Index();
  const uint64_t n = idx->wallet_count();
  const auto batch = static_cast<size_t>(state.range(0));
  std::mt19937_64 rng(43);
  // Fresh random wallets per iteration (from a large pool), so nothing stays cached.
  std::vector<Address> pool(1 << 20);
  for (Address& a : pool) a = WalletAt(rng() % n, n);
  size_t found = 0, next = 0;
  for (auto _ : state) {
    if (next + batch > pool.size()) next = 0;
    std::span<const Address> wallets(pool.data() + next, batch);
    next += batch;
    idx->LookupAll(wallets, [&](std::span<const Interaction> s) { found += s.size(); });
    benchmark::DoNotOptimize(found);
  }
  state.counters["interactions_per_lookup"] = benchmark::Counter(
      double(found) / double(state.iterations()) / double(batch), benchmark::Counter::kAvgThreads);
  auto status = idx->read_cache().GetStatus();
  state.counters["table_bytes_per_pair"] =
      benchmark::Counter(double(std::filesystem::file_size(Dir() + "/wallets.table")) /
                         (double(status.table_wallets) * kProjectsPerWallet));
}
BENCHMARK(BM_TableLookupWallets)->Arg(1)->Arg(3)->Arg(50);

void BM_TableLookupUnknownWallets50(benchmark::State& state) {
  EnsureTable();
  LookupUnknownWallets50(state);
}
BENCHMARK(BM_TableLookupUnknownWallets50);

// Serving readiness with index and table on disk: open, enable the read cache (maps the table,
// reads the change log), answer one lookup from the table.
void BM_OpenWithTableToFirstLookup(benchmark::State& state) {
  EnsureTable();
  const uint64_t n = Index()->wallet_count();
  Address w = WalletAt(n / 3, n);
  for (auto _ : state) {
    state.PauseTiming();
    Index().reset();
    state.ResumeTiming();
    auto opened = LmdbActivityIndex::Open(Dir(), {.no_sync = true});
    (void)(*opened)->read_cache().Enable();
    size_t got = (*opened)->Lookup(w).size();
    benchmark::DoNotOptimize(got);
    state.PauseTiming();
    if (!(*opened)->read_cache().GetStatus().table) state.SkipWithError("table not opened");
    Index() = *opened;
    state.ResumeTiming();
  }
}
BENCHMARK(BM_OpenWithTableToFirstLookup)->Unit(benchmark::kMicrosecond)->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
