#pragma once

// Synthetic benchmark dataset (issue 6): projects, communities, campaigns with ads in every
// format, and wallet activity with Zipf-distributed project popularity. Everything is a pure
// function of DatasetOptions (the seed included), so the SQLite data directory written by
// adserver-bench-data and the in-memory catalogs of the micro-benchmarks hold the same data.
// Thread-safe: no shared mutable state.

#include <cstdint>
#include <string>
#include <vector>

#include "common/address.h"
#include "decision/activity_index.h"
#include "store/records.h"

namespace adserver::bench {

struct DatasetOptions {
  // Distinct wallets with activity.
  int64_t wallets = 1'000'000;
  // Projects: the real ones of the demo registry first, then synthetic ones ("synth-NNNN").
  int projects = 200;
  // Active campaigns (1 to 3 ads each).
  int campaigns = 10'000;
  // Communities (advertisers) the campaigns belong to.
  int communities = 100;
  uint64_t seed = 42;
  // "Now" of the dataset (Unix seconds); activity is dated up to a year before it.
  int64_t now = 1'767'225'600;  // 2026-01-01
};

// The real projects available (from the demo registry, src/app/demo.cc).
int RealProjectCount();

// Inventory with store ids already assigned (1..n in creation order, as a fresh store assigns
// them): one publisher (id 1, any origin) with one live key whose hash is Sha256(live_key).
store::CatalogData MakeCatalogData(const DatasetOptions& options, const std::string& live_key);

// Wallet number `i` (0 <= i < wallets) of the dataset; unknown wallets use i >= wallets.
Address WalletAt(const DatasetOptions& options, int64_t i);

// Appends the activity rows of wallet `i`: 1 to 20 distinct projects, Zipf popularity.
// Depends only on (options, i), so wallets can be generated in any order or in parallel.
void AppendWalletActivity(const DatasetOptions& options, int64_t i,
                          std::vector<store::ActivityRecord>& out);

// The in-memory activity index of the first `wallets` wallets (micro-benchmarks).
decision::ActivityIndex MakeActivityIndex(const DatasetOptions& options);

}  // namespace adserver::bench
