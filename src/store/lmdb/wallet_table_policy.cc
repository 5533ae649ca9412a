#include "store/lmdb/wallet_table_policy.h"

namespace adserver::store {

void WalletTablePolicy::Configure(const ReadCacheOptions& options, const Clock& clock) {
  options_ = options;
  clock_ = &clock;
}

void WalletTablePolicy::OnOpened(size_t recent) {
  table_stale_ = recent > options_.max_recent_wallets;
  table_in_view_ = true;
}

void WalletTablePolicy::OnChangeWithoutTable(uint64_t counter) {
  if (counter != last_counter_.exchange(counter)) last_change_ms_ = NowMillis();
}

void WalletTablePolicy::OnChangeWithTable(uint64_t counter) {
  if (!bulk_pending_.load()) return;
  last_counter_ = counter;
  last_change_ms_ = NowMillis();
}

void WalletTablePolicy::OnBulkChange(uint64_t counter) {
  const int64_t now = NowMillis();
  if (!bulk_pending_.exchange(true)) stale_since_ms_ = now;
  table_stale_ = true;
  last_counter_ = counter;
  last_change_ms_ = now;
}

void WalletTablePolicy::OnRecent(size_t recent) {
  if (recent > options_.max_recent_wallets) table_stale_ = true;
}

void WalletTablePolicy::OnDropped(uint64_t counter) {
  table_in_view_ = false;
  table_stale_ = true;
  last_counter_ = counter;
  const int64_t now = NowMillis();
  stale_since_ms_ = now;
  last_change_ms_ = now;
}

void WalletTablePolicy::OnRebuildAttempt() { last_rebuild_ms_ = NowMillis(); }

void WalletTablePolicy::OnRebuilt(bool current, size_t recent) {
  bulk_pending_ = false;
  table_stale_ = !current || recent > options_.max_recent_wallets;
}

bool WalletTablePolicy::NeedsRebuild() const {
  if (!table_stale_.load()) return false;
  const int64_t now = NowMillis();
  if (now - last_rebuild_ms_.load() < options_.min_rebuild_interval.count()) return false;
  // After a bulk change (with the table answering meanwhile, or without a table), wait for the
  // writes to pause (or for max_stale); a table that has only too many recent wallets is
  // replaced at once.
  const bool quiet = now - last_change_ms_.load() >= options_.quiet_period.count() ||
                     now - stale_since_ms_.load() >= options_.max_stale.count();
  if (bulk_pending_.load()) return quiet;
  return table_in_view_.load() || quiet;
}

}  // namespace adserver::store
