#include "store/lmdb/wallet_read_cache.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <span>

#include "common/log.h"

namespace adserver::store {
namespace {

constexpr const char* kTableFileName = "wallets.table";

using detail::LmdbError;

}  // namespace

IndexIdentity WalletReadCache::Identity() const {
  struct stat st {};
  if (stat((env_.dir() + "/data.mdb").c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

std::string WalletReadCache::TablePath() const { return env_.dir() + "/" + kTableFileName; }

Result<WalletReadCache::CatchUpResult> WalletReadCache::CatchUp(View& view) {
  return changes_.ReadSince(view.covered_txn, view.recent);
}

Status WalletReadCache::Enable(const ReadCacheOptions& options, const Clock& clock) {
  {
    MutexLock lock(cache_mu_);
    policy_.Configure(options, clock);
    enabled_ = true;
    Result<std::shared_ptr<const WalletTable>> table = WalletTable::Open(TablePath());
    if (!table.ok()) {
      if (table.status().code() != Code::kNotFound) {
        ADS_LOG(warn, "wallet table unusable; rebuilding", "status", table.status());
      }
      return OkStatus();
    }
    if ((*table)->identity() != Identity() || (*table)->txn_id() > env_.LastTxnId()) {
      ADS_LOG(info, "wallet table is of another index; rebuilding");
      return OkStatus();
    }
    auto view = std::make_shared<View>();
    view->table = *table;
    view->covered_txn = (*table)->txn_id();
    // A table that lacks a bulk change is not taken at start-up: LMDB answers until the
    // rebuild (which starts at once), so an import made while the server was down is served.
    ADS_ASSIGN_OR_RETURN(CatchUpResult caught_up, CatchUp(*view));
    if (caught_up != CatchUpResult::kCurrent) return OkStatus();
    policy_.OnOpened(view->recent.size());
    ADS_LOG(info, "wallet table opened", "wallets", (*table)->wallet_count(), "recent",
            view->recent.size());
    PublishView(std::move(view));
  }
  return OkStatus();
}

void WalletReadCache::PublishView(std::shared_ptr<const View> view) {
  // The replaced view may hold the last reference to a wallet table (hundreds of MB): freed
  // here, on the maintenance thread, rather than by the lookup that held it last.
  ReleaseWhenUnused(view_.Exchange(std::move(view)), std::chrono::milliseconds(50));
}

Status WalletReadCache::Refresh() {
  MutexLock lock(cache_mu_);
  std::shared_ptr<const View> current = view_.Current();
  const uint64_t counter = env_.LastTxnId();
  if (current == nullptr || current->table == nullptr) {
    // No table: only watch for the index to go quiet (NeedsRebuild).
    policy_.OnChangeWithoutTable(counter);
    return OkStatus();
  }
  if (counter == current->covered_txn) return OkStatus();
  // Writes go on while a bulk change waits for its rebuild: the quiet period restarts.
  policy_.OnChangeWithTable(counter);
  auto next = std::make_shared<View>(*current);
  ADS_ASSIGN_OR_RETURN(CatchUpResult caught_up, CatchUp(*next));
  if (caught_up == CatchUpResult::kBulk &&
      current->table->wallet_count() < policy_.options().min_wallets_kept_through_bulk) {
    caught_up = CatchUpResult::kLost;  // small: LMDB answers until the rebuild
  }
  if (caught_up == CatchUpResult::kLost) {
    // Lookups read LMDB until the next table: correct, only slower.
    PublishView(std::make_shared<View>());
    policy_.OnDropped(counter);
    ADS_LOG(info, "wallet table behind the change log; reading LMDB until rebuilt");
    return OkStatus();
  }
  if (caught_up == CatchUpResult::kBulk) {
    if (!policy_.bulk_pending()) {
      ADS_LOG(info, "bulk change: the wallet table keeps answering until it is rebuilt");
    }
    policy_.OnBulkChange(counter);
  }
  policy_.OnRecent(next->recent.size());
  PublishView(std::move(next));
  return OkStatus();
}

Status WalletReadCache::LoadIntoMemory() {
  if (!enabled_ || !policy_.options().in_memory) return OkStatus();
  std::shared_ptr<const View> current = view_.Current();
  if (current == nullptr || current->table == nullptr || current->table->in_memory() ||
      load_failed_.lock() == current->table) {
    return OkStatus();
  }
  const auto start = std::chrono::steady_clock::now();
  Result<std::shared_ptr<const WalletTable>> copy = current->table->LoadIntoMemory();
  if (!copy.ok()) {
    load_failed_ = current->table;  // not retried for this table: it stays mapped
    return copy.status();
  }
  std::shared_ptr<const WalletTable> loaded = *std::move(copy);
  MutexLock lock(cache_mu_);
  std::shared_ptr<const View> now = view_.Current();
  // Refreshed meanwhile: the same table with more recent wallets, taken over as it is.
  // Replaced or dropped meanwhile: the copy is of no use.
  if (now == nullptr || now->table != current->table) return OkStatus();
  auto next = std::make_shared<View>(*now);
  next->table = std::move(loaded);
  PublishView(std::move(next));
  ADS_LOG(info, "wallet table loaded into memory", "bytes", current->table->file_bytes(), "ms",
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                start)
              .count());
  return OkStatus();
}

bool WalletReadCache::NeedsRebuild() const { return enabled_ && policy_.NeedsRebuild(); }

Status WalletReadCache::Rebuild(const std::atomic<bool>* cancel) {
  MutexLock rebuild(rebuild_mu_);
  const auto start = std::chrono::steady_clock::now();
  // Counted from the attempt: a build that keeps failing (a full disk, a read-only directory)
  // is retried every min_rebuild_interval, not at every poll.
  policy_.OnRebuildAttempt();
  uint64_t txn_id = 0;
  {
    detail::LmdbTxn txn(env_, detail::LmdbTxn::Mode::kRead);
    ADS_RETURN_IF_ERROR(txn.status());
    txn_id = txn.id();
    MDB_stat stat;
    if (int rc = mdb_stat(txn.get(), wallets_, &stat); rc != 0) return LmdbError("stat", rc);
    ADS_ASSIGN_OR_RETURN(auto builder, WalletTableBuilder::Create(TablePath(), stat.ms_entries));
    MDB_cursor* cursor = nullptr;
    if (int rc = mdb_cursor_open(txn.get(), wallets_, &cursor); rc != 0)
      return LmdbError("cursor", rc);
    MDB_val key, value;
    Status status;
    for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0 && status.ok();
         rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      if (key.mv_size != sizeof(Address)) continue;  // a named database
      if (cancel != nullptr && (builder->wallet_count() & 0xffff) == 0 && cancel->load()) {
        status = UnavailableError("wallet table build cancelled");
        break;
      }
      Address wallet;
      std::memcpy(wallet.bytes.data(), key.mv_data, sizeof(Address));
      status = builder->Add(wallet, std::span<const uint8_t>(
                                        static_cast<const uint8_t*>(value.mv_data), value.mv_size));
    }
    mdb_cursor_close(cursor);
    ADS_RETURN_IF_ERROR(status);
    ADS_RETURN_IF_ERROR(builder->Finish(txn_id, Identity()));
  }
  policy_.OnRebuildAttempt();  // the interval starts when the table is there
  ADS_ASSIGN_OR_RETURN(std::shared_ptr<const WalletTable> table, WalletTable::Open(TablePath()));
  MutexLock lock(cache_mu_);
  auto view = std::make_shared<View>();
  view->table = table;
  view->covered_txn = txn_id;
  ADS_ASSIGN_OR_RETURN(CatchUpResult caught_up, CatchUp(*view));
  if (caught_up == CatchUpResult::kBulk &&
      table->wallet_count() < policy_.options().min_wallets_kept_through_bulk) {
    caught_up = CatchUpResult::kLost;
  }
  const bool current = caught_up == CatchUpResult::kCurrent;
  policy_.OnRebuilt(current, view->recent.size());
  if (caught_up != CatchUpResult::kLost) {
    // A bulk change that landed while building: this table is still the freshest; it answers
    // until the next one, built when the writes pause again.
    if (!current) policy_.OnBulkChange(env_.LastTxnId());
    PublishView(std::move(view));
    policy_.OnPublished();
  } else {
    // Whatever the view holds may lack that change too: LMDB answers until the next build.
    PublishView(std::make_shared<View>());
    policy_.OnDropped(env_.LastTxnId());
  }
  ADS_LOG(info, "wallet table built", "wallets", table->wallet_count(), "bytes",
          table->file_bytes(), "ms",
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                start)
              .count(),
          "current", current);
  return OkStatus();
}

ReadCacheStatus WalletReadCache::GetStatus() const {
  ReadCacheStatus out;
  std::shared_ptr<const View> view = view_.Current();
  if (view == nullptr) return out;
  out.covered_txn = view->covered_txn;
  out.recent_wallets = view->recent.size();
  out.bulk_pending = policy_.bulk_pending();
  if (view->table != nullptr) {
    out.table = true;
    out.table_txn = view->table->txn_id();
    out.table_wallets = view->table->wallet_count();
    out.table_in_memory = view->table->in_memory();
  }
  return out;
}

}  // namespace adserver::store
