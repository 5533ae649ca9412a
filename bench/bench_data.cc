// adserver-bench-data: writes a benchmark data directory for `adserver serve --data DIR`
// (issue 6): the dataset of bench/dataset.h through app::OpenStore (SQLite, and the activity
// store the server uses), a live API key
// (DIR/bench-key.txt) and wallet lists for the load script (DIR/wallets-known.txt, wallets of
// the dataset; DIR/wallets-unknown.txt, wallets without activity).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/status.h"
#include "dataset.h"
#include "app/server.h"

namespace adserver::bench {
namespace {

struct Flags {
  std::string data_dir;
  DatasetOptions dataset;
  int64_t batch_rows = 500'000;
  int list_wallets = 20'000;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Creating a record must give it the id the dataset assigned (the store is fresh).
template <typename Record>
Status ExpectId(const Result<Record>& created, store::Id want, const char* what) {
  if (!created.ok()) return created.status();
  if (created->id != want) {
    return InternalError(std::string(what) + " got id " + std::to_string(created->id) +
                         ", expected " + std::to_string(want) + " (data directory not empty?)");
  }
  return OkStatus();
}

Status WriteInventory(store::Store& store, const store::CatalogData& data, int64_t now) {
  for (const auto& r : data.publishers)
    ADS_RETURN_IF_ERROR(ExpectId(store.CreatePublisher(r, now), r.id, "publisher"));
  for (const auto& r : data.api_keys)
    ADS_RETURN_IF_ERROR(ExpectId(store.CreateApiKey(r, now), r.id, "api key"));
  for (const auto& r : data.communities)
    ADS_RETURN_IF_ERROR(ExpectId(store.CreateCommunity(r, now), r.id, "community"));
  for (const auto& r : data.projects)
    ADS_RETURN_IF_ERROR(ExpectId(store.CreateProject(r, now), r.id, "project"));
  for (const auto& r : data.campaigns)
    ADS_RETURN_IF_ERROR(ExpectId(store.CreateCampaign(r, now), r.id, "campaign"));
  for (const auto& r : data.ads) ADS_RETURN_IF_ERROR(ExpectId(store.CreateAd(r, now), r.id, "ad"));
  return OkStatus();
}

Status WriteActivity(store::Store& store, const Flags& flags, int64_t* rows_written) {
  std::vector<store::ActivityRecord> rows;
  rows.reserve(flags.batch_rows + 32);
  auto flush = [&]() -> Status {
    // Sorted batches insert into the (wallet, project, chain) key in order: far fewer page splits.
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.wallet != b.wallet ? a.wallet < b.wallet : a.project_id < b.project_id;
    });
    ADS_RETURN_IF_ERROR(store.RecordActivity(rows));
    *rows_written += static_cast<int64_t>(rows.size());
    rows.clear();
    return OkStatus();
  };
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < flags.dataset.wallets; ++i) {
    AppendWalletActivity(flags.dataset, i, rows);
    if (static_cast<int64_t>(rows.size()) >= flags.batch_rows) {
      ADS_RETURN_IF_ERROR(flush());
      std::fprintf(stderr, "\r  %lld / %lld wallets, %lld rows, %.0f s", (long long)(i + 1),
                   (long long)flags.dataset.wallets, (long long)*rows_written, Seconds(start));
    }
  }
  if (!rows.empty()) ADS_RETURN_IF_ERROR(flush());
  std::fprintf(stderr, "\n");
  return OkStatus();
}

Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return UnavailableError("cannot write " + path.string());
  return OkStatus();
}

// Known wallets spread over the whole dataset (every k-th), unknown ones past its end.
Status WriteWalletLists(const Flags& flags) {
  const DatasetOptions& o = flags.dataset;
  std::string known, unknown;
  int64_t n = std::min<int64_t>(flags.list_wallets, o.wallets);
  int64_t step = std::max<int64_t>(1, o.wallets / std::max<int64_t>(n, 1));
  for (int64_t j = 0; j < n; ++j) known += FormatAddress(WalletAt(o, j * step)) + "\n";
  for (int64_t j = 0; j < flags.list_wallets; ++j)
    unknown += FormatAddress(WalletAt(o, o.wallets + j)) + "\n";
  std::filesystem::path dir(flags.data_dir);
  ADS_RETURN_IF_ERROR(WriteText(dir / "wallets-known.txt", known));
  return WriteText(dir / "wallets-unknown.txt", unknown);
}

Status Run(const Flags& flags) {
  if (!InitCrypto()) return InternalError("libsodium init failed");
  std::filesystem::create_directories(flags.data_dir);
  std::filesystem::path dir(flags.data_dir);
  if (std::filesystem::exists(dir / "adserver.db"))
    return InvalidArgumentError((dir / "adserver.db").string() + " exists; use an empty directory");
  // Opened as `adserver serve` opens it, so activity lands where the server reads it.
  ADS_ASSIGN_OR_RETURN(auto store, app::OpenStore(flags.data_dir));
  auto start = std::chrono::steady_clock::now();
  std::string live_key = "spk_" + RandomAlphanumeric(30);
  store::CatalogData data = MakeCatalogData(flags.dataset, live_key);
  ADS_RETURN_IF_ERROR(WriteInventory(*store, data, flags.dataset.now));
  std::fprintf(stderr, "inventory: %zu projects (%d real, %zu synthetic), %zu campaigns, %zu ads, %.1f s\n",
               data.projects.size(), std::min<int>(RealProjectCount(), flags.dataset.projects),
               data.projects.size() - std::min<size_t>(RealProjectCount(), data.projects.size()),
               data.campaigns.size(), data.ads.size(), Seconds(start));
  int64_t rows = 0;
  ADS_RETURN_IF_ERROR(WriteActivity(*store, flags, &rows));
  ADS_RETURN_IF_ERROR(WriteText(dir / "bench-key.txt", live_key + "\n"));
  ADS_RETURN_IF_ERROR(WriteWalletLists(flags));
  std::fprintf(stderr, "activity: %lld wallets, %lld rows; total %.1f s\n",
               (long long)flags.dataset.wallets, (long long)rows, Seconds(start));
  std::cout << "live key: " << live_key << "\n";
  return OkStatus();
}

}  // namespace
}  // namespace adserver::bench

int main(int argc, char** argv) {
  adserver::bench::Flags flags;
  CLI::App app("Writes a benchmark data directory for `adserver serve --data DIR`");
  app.add_option("--data", flags.data_dir, "Data directory (created; must not hold a database)")
      ->required();
  app.add_option("--wallets", flags.dataset.wallets, "Wallets with activity")->capture_default_str();
  app.add_option("--projects", flags.dataset.projects,
                 "Projects (the demo registry's real ones, then synthetic)")
      ->capture_default_str();
  app.add_option("--campaigns", flags.dataset.campaigns, "Active campaigns")->capture_default_str();
  app.add_option("--communities", flags.dataset.communities, "Communities")->capture_default_str();
  app.add_option("--seed", flags.dataset.seed, "Seed")->capture_default_str();
  app.add_option("--now", flags.dataset.now, "Dataset time, Unix seconds (default: today 00:00 UTC)");
  app.add_option("--list-wallets", flags.list_wallets, "Wallets per list file")->capture_default_str();
  app.add_option("--batch-rows", flags.batch_rows, "Activity rows per transaction")
      ->capture_default_str();
  flags.dataset.now = 0;
  CLI11_PARSE(app, argc, argv);
  // Default: today 00:00 UTC, so the server's real clock sees recent activity.
  if (flags.dataset.now == 0) flags.dataset.now = adserver::DayOf(std::time(nullptr)) * 86400;
  adserver::Status status = adserver::bench::Run(flags);
  if (!status.ok()) {
    std::cerr << "adserver-bench-data: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
