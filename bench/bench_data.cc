// adserver-bench-data: writes a benchmark data directory for `adserver serve --data DIR`
// (issue 6): the dataset of bench/dataset.h opened as the server opens it (app::OpenEmbeddedStore:
// inventory in SQLite, wallet activity bulk-loaded into the LMDB index DIR/activity.lmdb in
// ascending wallet order), a live API key (DIR/bench-key.txt), wallet lists for the load script
// (DIR/wallets-known.txt, wallets of the dataset; DIR/wallets-unknown.txt, wallets without
// activity) and, written last, DIR/bench-format.txt (kFormat; bench/load.sh regenerates a cached
// directory whose stamp differs).
// With --database-url (cluster mode, issue 17): the inventory and the activity go to that
// PostgreSQL database instead (which must be empty), and DIR gets only the key and the wallet
// lists, for bench/load.sh --cluster.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "app/data_dir.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/crypto.h"
#include "common/status.h"
#include "dataset.h"
#include "store/lmdb/lmdb_activity_index.h"
#include "store/postgres/postgres_activity_store.h"
#include "store/postgres/postgres_store.h"

namespace adserver::bench {
namespace {

// First line of DIR/bench-format.txt: the layout of the data directory. Bump it (and
// bench/load.sh's data_format) when the layout or the dataset changes, so cached directories
// are regenerated. Format 1 (no stamp file) kept activity in SQLite.
// 3: CPA campaigns have a conversion rule; 4: projects have an owner community (issue 39).
constexpr char kFormat[] = "format 4";

struct Flags {
  std::string data_dir;
  std::string database_url;
  DatasetOptions dataset;
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

template <class Inventory>  // SqliteStore (embedded) or PostgresStore (cluster)
Status WriteInventory(Inventory& store, const store::CatalogData& data, int64_t now) {
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

// Wallet `index` of the dataset and its address, for sorting by address.
struct WalletSlot {
  Address wallet;
  uint32_t index;
};

// Every wallet of the dataset in ascending address order (the LMDB key order): about 24 bytes
// per wallet, 240 MB at 10 M.
std::vector<WalletSlot> WalletsInKeyOrder(const DatasetOptions& o) {
  ADS_CHECK(o.wallets <= int64_t{UINT32_MAX}) << "too many wallets: " << o.wallets;
  std::vector<WalletSlot> slots(static_cast<size_t>(o.wallets));
  for (int64_t i = 0; i < o.wallets; ++i) slots[i] = {WalletAt(o, i), static_cast<uint32_t>(i)};
  std::sort(slots.begin(), slots.end(), [](const WalletSlot& a, const WalletSlot& b) {
    return std::memcmp(a.wallet.bytes.data(), b.wallet.bytes.data(), a.wallet.bytes.size()) < 0;
  });
  return slots;
}

// Bulk-loads the activity into the empty LMDB index in one pass of ascending wallet addresses
// (LoadSorted appends fully packed pages: no page splits, no random writes). Each wallet's rows
// depend only on (dataset, wallet index), so the content is the same as in any other order.
Status WriteActivity(store::LmdbActivityIndex& index, const DatasetOptions& o,
                     int64_t* rows_written) {
  auto start = std::chrono::steady_clock::now();
  std::vector<WalletSlot> slots = WalletsInKeyOrder(o);
  std::fprintf(stderr, "  %zu wallets sorted by address, %.1f s\n", slots.size(), Seconds(start));
  std::vector<store::ActivityRecord> rows;
  size_t next = 0;
  ADS_RETURN_IF_ERROR(
      index.LoadSorted([&](Address& wallet, std::vector<decision::Interaction>& items) {
        if (next == slots.size()) return false;
        rows.clear();
        AppendWalletActivity(o, slots[next].index, rows);
        wallet = slots[next].wallet;
        for (const store::ActivityRecord& r : rows) {
          items.push_back({.project_id = static_cast<uint32_t>(r.project_id),
                           .chain_id = static_cast<uint32_t>(r.chain_id),
                           .last_seen_day = static_cast<uint32_t>(DayOf(r.last_seen)),
                           .count = static_cast<uint32_t>(r.count)});
        }
        *rows_written += static_cast<int64_t>(rows.size());
        if (++next % 1'000'000 == 0) {
          std::fprintf(stderr, "\r  %zu / %zu wallets, %lld rows, %.0f s", next, slots.size(),
                       (long long)*rows_written, Seconds(start));
        }
        return true;
      }));
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

// The activity into PostgreSQL in batches of 100 k rows (one transaction each).
Status WriteActivity(store::PostgresActivityStore& activity, const DatasetOptions& o,
                     int64_t* rows_written) {
  auto start = std::chrono::steady_clock::now();
  std::vector<store::ActivityRecord> rows;
  for (int64_t i = 0; i < o.wallets; ++i) {
    AppendWalletActivity(o, i, rows);
    if (rows.size() >= 100'000 || i + 1 == o.wallets) {
      ADS_RETURN_IF_ERROR(activity.RecordActivity(rows));
      *rows_written += static_cast<int64_t>(rows.size());
      rows.clear();
      std::fprintf(stderr, "\r  %lld / %lld wallets, %lld rows, %.0f s", (long long)(i + 1),
                   (long long)o.wallets, (long long)*rows_written, Seconds(start));
    }
  }
  std::fprintf(stderr, "\n");
  return OkStatus();
}

// Cluster mode: the dataset in PostgreSQL, the key and wallet lists in DIR.
Status RunPostgres(const Flags& flags) {
  std::filesystem::create_directories(flags.data_dir);
  std::filesystem::path dir(flags.data_dir);
  ADS_ASSIGN_OR_RETURN(auto inventory, store::PostgresStore::Open(flags.database_url));
  ADS_ASSIGN_OR_RETURN(auto activity, store::PostgresActivityStore::Open(flags.database_url));
  auto start = std::chrono::steady_clock::now();
  std::string live_key = "spk_" + RandomAlphanumeric(30);
  store::CatalogData data = MakeCatalogData(flags.dataset, live_key);
  ADS_RETURN_IF_ERROR(WriteInventory(*inventory, data, flags.dataset.now));
  std::fprintf(stderr, "inventory in PostgreSQL: %zu projects, %zu campaigns, %.1f s\n",
               data.projects.size(), data.campaigns.size(), Seconds(start));
  int64_t rows = 0;
  ADS_RETURN_IF_ERROR(WriteActivity(*activity, flags.dataset, &rows));
  ADS_RETURN_IF_ERROR(WriteText(dir / "bench-key.txt", live_key + "\n"));
  ADS_RETURN_IF_ERROR(WriteWalletLists(flags));
  std::fprintf(stderr, "activity in PostgreSQL: %lld wallets, %lld rows; total %.1f s\n",
               (long long)flags.dataset.wallets, (long long)rows, Seconds(start));
  std::cout << "live key: " << live_key << "\n";
  return OkStatus();
}

Status Run(const Flags& flags) {
  if (!InitCrypto()) return InternalError("libsodium init failed");
  if (!flags.database_url.empty()) return RunPostgres(flags);
  std::filesystem::create_directories(flags.data_dir);
  std::filesystem::path dir(flags.data_dir);
  if (std::filesystem::exists(dir / "adserver.db"))
    return InvalidArgumentError((dir / "adserver.db").string() + " exists; use an empty directory");
  // Opened as `adserver serve` opens it, so activity lands where the server reads it.
  ADS_ASSIGN_OR_RETURN(app::EmbeddedStore store, app::OpenEmbeddedStore(flags.data_dir));
  auto start = std::chrono::steady_clock::now();
  std::string live_key = "spk_" + RandomAlphanumeric(30);
  store::CatalogData data = MakeCatalogData(flags.dataset, live_key);
  ADS_RETURN_IF_ERROR(WriteInventory(*store.sqlite, data, flags.dataset.now));
  std::fprintf(stderr, "inventory: %zu projects (%d real, %zu synthetic), %zu campaigns, %zu ads, %.1f s\n",
               data.projects.size(), std::min<int>(RealProjectCount(), flags.dataset.projects),
               data.projects.size() - std::min<size_t>(RealProjectCount(), data.projects.size()),
               data.campaigns.size(), data.ads.size(), Seconds(start));
  int64_t rows = 0;
  ADS_RETURN_IF_ERROR(WriteActivity(store.index(), flags.dataset, &rows));
  ADS_RETURN_IF_ERROR(WriteText(dir / "bench-key.txt", live_key + "\n"));
  ADS_RETURN_IF_ERROR(WriteWalletLists(flags));
  // Last: a directory with this stamp is complete.
  ADS_RETURN_IF_ERROR(WriteText(dir / "bench-format.txt",
                                std::string(kFormat) + "\nwallets " +
                                    std::to_string(flags.dataset.wallets) + " campaigns " +
                                    std::to_string(flags.dataset.campaigns) + " seed " +
                                    std::to_string(flags.dataset.seed) + "\n"));
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
  app.add_option("--database-url", flags.database_url,
                 "PostgreSQL database for the dataset (cluster mode; DIR gets the key and lists)");
  app.add_option("--wallets", flags.dataset.wallets, "Wallets with activity")->capture_default_str();
  app.add_option("--projects", flags.dataset.projects,
                 "Projects (the demo registry's real ones, then synthetic)")
      ->capture_default_str();
  app.add_option("--campaigns", flags.dataset.campaigns, "Active campaigns")->capture_default_str();
  app.add_option("--communities", flags.dataset.communities, "Communities")->capture_default_str();
  app.add_option("--seed", flags.dataset.seed, "Seed")->capture_default_str();
  app.add_option("--now", flags.dataset.now, "Dataset time, Unix seconds (default: today 00:00 UTC)");
  app.add_option("--list-wallets", flags.list_wallets, "Wallets per list file")
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
