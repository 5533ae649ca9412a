#include "store/lmdb/lmdb_activity_store.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "store/lmdb/detail/activity_codec.h"

namespace adserver::store {
namespace {

// LoadSorted commits every 20 x LmdbOptions::wallets_per_commit wallets (1 M by default): up to
// this many wallets it writes in one transaction, so a failure leaves nothing behind.
constexpr size_t kMaxAppendWallets = 1'000'000;

// Rows are converted as LmdbActivityIndex::Record converts them.
using detail::Clamp32;
using detail::StoredDay;

// Rows in ascending wallet order with valid ids (what Record accepts), at most
// kMaxAppendWallets wallets.
bool AppendableToEmptyIndex(const std::vector<ActivityRecord>& rows) {
  size_t wallets = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].project_id <= 0 || rows[i].chain_id <= 0) return false;
    if (i == 0 || rows[i - 1].wallet != rows[i].wallet) {
      if (i > 0 && !(rows[i - 1].wallet < rows[i].wallet)) return false;
      if (++wallets > kMaxAppendWallets) return false;
    }
  }
  return !rows.empty();
}

}  // namespace

// Project ids are checked against the inventory so the contract (Conflict on
// an unknown project, nothing written) holds.
Status LmdbActivityStore::RecordActivity(const std::vector<ActivityRecord>& rows) {
  std::set<Id> projects;
  for (const ActivityRecord& row : rows) projects.insert(row.project_id);
  for (Id id : projects) {
    Result<ProjectRecord> p = projects_->GetProject(id);
    if (p.status().code() == Code::kNotFound) {
      return ConflictError("project " + std::to_string(id) + " does not exist");
    }
    if (!p.ok()) return p.status();
  }
  // The first load of an empty index (a bulk import) appends fully packed pages in one pass.
  // If that fails (e.g. another writer got there first) nothing was written: merge instead.
  if (activity_->wallet_count() == 0 && AppendableToEmptyIndex(rows) &&
      AppendToEmptyIndex(rows).ok()) {
    return OkStatus();
  }
  return activity_->Record(rows);
}

Status LmdbActivityStore::AppendToEmptyIndex(const std::vector<ActivityRecord>& rows) {
  size_t next = 0;
  return activity_->LoadSorted([&](Address& wallet, std::vector<decision::Interaction>& items) {
    if (next == rows.size()) return false;
    wallet = rows[next].wallet;
    for (; next < rows.size() && rows[next].wallet == wallet; ++next) {
      const ActivityRecord& r = rows[next];
      items.push_back({.project_id = Clamp32(r.project_id),
                       .chain_id = Clamp32(r.chain_id),
                       .last_seen_day = StoredDay(r.last_seen),
                       .count = Clamp32(r.count)});
    }
    return true;
  });
}

Result<std::vector<ActivityRecord>> LmdbActivityStore::ActivityForWallet(const Address& wallet) {
  return activity_->ForWallet(wallet);
}

Status LmdbActivityStore::ScanActivity(const std::function<void(const ActivityRecord&)>& fn) {
  return activity_->Scan(fn);
}

Result<uint64_t> LmdbActivityStore::ActivityChangeCounter() { return activity_->ChangeCounter(); }

Status MigrateActivity(ActivityStore& from, LmdbActivityIndex& to) {
  if (to.wallet_count() != 0) return OkStatus();
  std::vector<ActivityRecord> rows;
  ADS_RETURN_IF_ERROR(from.ScanActivity([&rows](const ActivityRecord& r) { rows.push_back(r); }));
  if (rows.empty()) return OkStatus();
  return to.Record(rows);
}

}  // namespace adserver::store
