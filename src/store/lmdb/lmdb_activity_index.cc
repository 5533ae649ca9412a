#include "store/lmdb/lmdb_activity_index.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>
#include <system_error>

#include "common/check.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/lmdb/detail/activity_codec.h"
#include "store/lmdb/detail/block_journal.h"

namespace adserver::store {
namespace {

constexpr int64_t kSecondsPerDay = 86400;

using detail::LmdbError;

MDB_val KeyOf(const Address& wallet) {
  return MDB_val{wallet.bytes.size(), const_cast<uint8_t*>(wallet.bytes.data())};
}

std::span<const uint8_t> Bytes(const MDB_val& v) {
  return {static_cast<const uint8_t*>(v.mv_data), v.mv_size};
}

using detail::Clamp32;
using detail::StoredDay;

using detail::ToInteraction;

ActivityRecord ToRecord(const Address& wallet, const decision::Interaction& i) {
  return ActivityRecord{.wallet = wallet,
                        .project_id = i.project_id,
                        .chain_id = i.chain_id,
                        .last_seen = int64_t{i.last_seen_day} * kSecondsPerDay,
                        .count = i.count};
}

std::atomic<uint64_t> next_instance_id{1};

}  // namespace

decision::Interaction StoredInteraction(const ActivityRecord& row) { return ToInteraction(row); }

namespace {

// The transactions of store/lmdb/detail/lmdb_env.h, by kind.
class WriteTxn : public detail::LmdbTxn {
 public:
  explicit WriteTxn(const detail::LmdbEnv& env) : LmdbTxn(env, Mode::kWrite) {}
};
// A short read transaction for the slow paths (admin reads, scans).
class ReadTxn : public detail::LmdbTxn {
 public:
  explicit ReadTxn(const detail::LmdbEnv& env) : LmdbTxn(env, Mode::kRead) {}
};

}  // namespace

struct LmdbActivityIndex::ThreadReader {
  MDB_txn* txn = nullptr;  // reset between batches; aborted by ~LmdbActivityIndex
  std::vector<decision::Interaction> arena;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (offset, size) per wallet of a batch
  std::vector<uint8_t> from_table;                    // per wallet: answered by the table
  std::vector<std::span<const uint8_t>> values;       // per wallet: the table's value
};

namespace {
// Per-thread cache: index instance id -> its reader on this thread. Entries of destroyed
// indexes are never matched again (ids are not reused).
struct CachedReader {
  uint64_t owner = 0;
  void* reader = nullptr;
};
thread_local std::vector<CachedReader> tl_readers;
}  // namespace

Result<std::shared_ptr<LmdbActivityIndex>> LmdbActivityIndex::Open(const std::string& dir,
                                                                   const LmdbOptions& options) {
  // Named databases: the live indexer's journal and checkpoints, the change log, the replica
  // position.
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<detail::LmdbEnv> env,
                       detail::LmdbEnv::Open(dir, {.map_size_bytes = options.map_size_bytes,
                                                   .max_named_databases = 6,
                                                   .no_sync = options.no_sync}));
  return std::shared_ptr<LmdbActivityIndex>(new LmdbActivityIndex(std::move(env), options));
}

LmdbActivityIndex::LmdbActivityIndex(std::unique_ptr<detail::LmdbEnv> env,
                                     const LmdbOptions& options)
    : env_(std::move(env)),
      dbi_(env_->main()),
      options_(options),
      id_(next_instance_id.fetch_add(1)),
      changes_(*env_),
      wallets_(dbi_, changes_),
      journal_(*env_, wallets_, changes_),
      replica_(*env_),
      cache_(*env_, dbi_, changes_) {}

LmdbActivityIndex::~LmdbActivityIndex() {
  {
    MutexLock lock(readers_mu_);
    for (auto& r : readers_) mdb_txn_abort(r->txn);
    readers_.clear();
  }
}

LmdbActivityIndex::ThreadReader& LmdbActivityIndex::Reader() const {
  for (const CachedReader& c : tl_readers) {
    if (c.owner == id_) return *static_cast<ThreadReader*>(c.reader);
  }
  auto reader = std::make_unique<ThreadReader>();
  int rc = mdb_txn_begin(env_->env(), nullptr, MDB_RDONLY, &reader->txn);
  ADS_CHECK(rc == 0) << "lmdb read transaction: " << mdb_strerror(rc);
  mdb_txn_reset(reader->txn);
  ThreadReader* raw = reader.get();
  {
    MutexLock lock(readers_mu_);
    readers_.push_back(std::move(reader));
  }
  tl_readers.push_back({id_, raw});
  return *raw;
}

void LmdbActivityIndex::LookupLmdb(MDB_txn* txn, const Address& wallet,
                                   std::vector<decision::Interaction>& out, bool renewed) const {
  const size_t begin = out.size();
  MDB_val key = KeyOf(wallet), value;
  if (renewed && mdb_get(txn, dbi_, &key, &value) == 0 &&
      !detail::DecodeInteractions(Bytes(value), out)) {
    out.resize(begin);  // a corrupt value reads as no activity
  }
}

void LmdbActivityIndex::LookupAll(std::span<const Address> wallets, const Sink& sink) const {
  ThreadReader& r = Reader();
  r.arena.clear();
  r.ranges.clear();
  std::shared_ptr<const WalletReadCache::View> view = cache_.Current();
  const WalletTable* table = view != nullptr ? view->table.get() : nullptr;
  bool need_lmdb = table == nullptr;
  if (table != nullptr) {
    r.from_table.assign(wallets.size(), 1);
    r.values.resize(wallets.size());
    if (!view->recent.empty()) {
      for (size_t i = 0; i < wallets.size(); ++i) {
        if (view->recent.contains(wallets[i])) r.from_table[i] = 0, need_lmdb = true;
      }
    }
    table->FindAll(wallets, r.from_table, r.values);
  }
  const bool renewed = need_lmdb && mdb_txn_renew(r.txn) == 0;
  for (size_t i = 0; i < wallets.size(); ++i) {
    auto begin = static_cast<uint32_t>(r.arena.size());
    if (table != nullptr && r.from_table[i] != 0) {
      if (!detail::DecodeInteractions(r.values[i], r.arena)) r.arena.resize(begin);
    } else {
      LookupLmdb(r.txn, wallets[i], r.arena, renewed);
    }
    r.ranges.emplace_back(begin, static_cast<uint32_t>(r.arena.size()) - begin);
  }
  if (renewed) mdb_txn_reset(r.txn);
  // Spans are made only now: the arena no longer grows, so they stay valid.
  for (const auto& [offset, size] : r.ranges) {
    sink(std::span<const decision::Interaction>(r.arena.data() + offset, size));
  }
}

void LmdbActivityIndex::Prefetch(std::span<const Address> wallets) const {
  std::shared_ptr<const WalletReadCache::View> view = cache_.Current();
  if (view != nullptr && view->table != nullptr) view->table->Prefetch(wallets);
}

std::span<const decision::Interaction> LmdbActivityIndex::Lookup(const Address& wallet) const {
  std::span<const decision::Interaction> out;
  LookupAll(std::span<const Address>(&wallet, 1),
            [&out](std::span<const decision::Interaction> found) { out = found; });
  return out;
}

size_t LmdbActivityIndex::wallet_count() const {
  Result<Stats> stats = GetStats();
  return stats.ok() ? static_cast<size_t>(stats->wallets) : 0;
}

Status LmdbActivityIndex::Record(const std::vector<ActivityRecord>& rows) {
  for (const ActivityRecord& row : rows) {
    if (row.project_id <= 0 || row.chain_id <= 0) {
      return InvalidArgumentError("activity rows need positive project and chain ids");
    }
  }
  if (rows.empty()) return OkStatus();
  ADS_RETURN_IF_ERROR(changes_.Create());
  std::vector<ActivityRecord> sorted = rows;
  std::sort(sorted.begin(), sorted.end(),
            [](const ActivityRecord& a, const ActivityRecord& b) { return a.wallet < b.wallet; });
  size_t begin = 0;
  while (begin < sorted.size()) {
    // Whole wallets per transaction, at most wallets_per_commit of them.
    size_t end = begin, wallets = 0;
    while (end < sorted.size() && wallets < options_.wallets_per_commit) {
      Address w = sorted[end].wallet;
      while (end < sorted.size() && sorted[end].wallet == w) ++end;
      ++wallets;
    }
    WriteTxn txn(*env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    changes_.Clear();
    ADS_RETURN_IF_ERROR(WriteWallets(txn.get(), sorted, begin, end));
    ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/false));
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
    begin = end;
  }
  return OkStatus();
}

Status LmdbActivityIndex::WriteWallets(MDB_txn* txn, const std::vector<ActivityRecord>& sorted,
                                       size_t begin, size_t end) {
  std::vector<decision::Interaction> merged;
  for (size_t i = begin; i < end;) {
    const Address wallet = sorted[i].wallet;
    ADS_RETURN_IF_ERROR(wallets_.Read(txn, wallet, merged));
    for (; i < end && sorted[i].wallet == wallet; ++i) merged.push_back(ToInteraction(sorted[i]));
    detail::NormalizeInteractions(merged);
    ADS_RETURN_IF_ERROR(wallets_.Write(txn, wallet, merged));
  }
  return OkStatus();
}

Status LmdbActivityIndex::LoadSorted(const SortedSource& next) {
  return LoadSortedImpl(
      [&](Address& wallet, std::vector<decision::Interaction>& items) -> Result<bool> {
        return next(wallet, items);
      },
      std::nullopt);
}

Status LmdbActivityIndex::LoadSorted(const FallibleSortedSource& next, uint64_t position) {
  return LoadSortedImpl(next, position);
}

Status LmdbActivityIndex::LoadSortedImpl(const FallibleSortedSource& next,
                                         std::optional<uint64_t> replica_position) {
  if (wallet_count() != 0) return ConflictError("LoadSorted needs an empty index");
  Address wallet, previous;
  bool first = true;
  std::vector<decision::Interaction> items;
  std::string encoded;
  bool more = true;
  while (more) {
    // Commits every 20x wallets_per_commit wallets: appends dirty few pages per wallet.
    WriteTxn txn(*env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    // The journal's database names are keys of the main database too: MDB_APPEND would reject
    // wallets sorting before them, so an index that has them gets ordinary puts.
    unsigned put_flags = NamedDatabaseCount(txn.get()) == 0 ? MDB_APPEND : MDB_NOOVERWRITE;
    MDB_cursor* cursor = nullptr;
    if (int rc = mdb_cursor_open(txn.get(), dbi_, &cursor); rc != 0) return LmdbError("cursor", rc);
    Status status;
    for (size_t n = 0; status.ok() && n < 20 * options_.wallets_per_commit; ++n) {
      items.clear();
      Result<bool> got = next(wallet, items);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      if (!*got) {
        more = false;
        break;
      }
      if (!first && !(previous < wallet)) {
        status = ConflictError("LoadSorted: wallets out of order");
        break;
      }
      first = false;
      previous = wallet;
      detail::NormalizeInteractions(items);
      encoded.clear();
      detail::EncodeInteractions(items, encoded);
      MDB_val key = KeyOf(wallet), data{encoded.size(), encoded.data()};
      int rc = mdb_cursor_put(cursor, &key, &data, put_flags);
      if (rc == MDB_KEYEXIST)
        status = ConflictError("LoadSorted: wallets out of order");
      else if (rc != 0)
        status = LmdbError("append", rc);
    }
    mdb_cursor_close(cursor);
    // The change log is created only at the end (its name, a key of the main database, would
    // end MDB_APPEND); a log that exists already gets a bulk marker with every transaction.
    if (status.ok() && changes_.opened()) status = changes_.Write(txn.get(), /*bulk=*/true);
    if (!status.ok()) return status;
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  }
  const bool logged = changes_.opened();
  if (logged && !replica_position) return OkStatus();
  // Named databases are created only now, after the appends (see above).
  if (!logged) ADS_RETURN_IF_ERROR(changes_.Create());
  if (replica_position) ADS_RETURN_IF_ERROR(replica_.Create());
  WriteTxn txn(*env_);
  if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
  if (!logged) ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/true));
  if (replica_position) ADS_RETURN_IF_ERROR(replica_.Put(txn.get(), replica_position));
  if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  return OkStatus();
}

Result<std::vector<ActivityRecord>> LmdbActivityIndex::ForWallet(const Address& wallet) const {
  ReadTxn txn(*env_);
  if (txn.rc() != 0) return LmdbError("begin read", txn.rc());
  MDB_val key = KeyOf(wallet), value;
  std::vector<ActivityRecord> out;
  int rc = mdb_get(txn.get(), dbi_, &key, &value);
  if (rc == MDB_NOTFOUND) return out;
  if (rc != 0) return LmdbError("get", rc);
  std::vector<decision::Interaction> items;
  if (!detail::DecodeInteractions(Bytes(value), items)) return InternalError("corrupt activity");
  for (const decision::Interaction& i : items) out.push_back(ToRecord(wallet, i));
  return out;
}

Status LmdbActivityIndex::Scan(const std::function<void(const ActivityRecord&)>& fn) const {
  ReadTxn txn(*env_);
  if (txn.rc() != 0) return LmdbError("begin read", txn.rc());
  MDB_cursor* cursor = nullptr;
  if (int rc = mdb_cursor_open(txn.get(), dbi_, &cursor); rc != 0) return LmdbError("cursor", rc);
  MDB_val key, value;
  std::vector<decision::Interaction> items;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (key.mv_size != 20) continue;
    Address wallet;
    std::memcpy(wallet.bytes.data(), key.mv_data, 20);
    items.clear();
    if (!detail::DecodeInteractions(Bytes(value), items)) continue;
    for (const decision::Interaction& i : items) fn(ToRecord(wallet, i));
  }
  mdb_cursor_close(cursor);
  return OkStatus();
}

// Replica of PostgreSQL's activity (cluster mode).

namespace {

// Sets `value`'s (project, chain) entry of `items` (sorted) as given.
void SetEntry(const ActivityValue& value, std::vector<decision::Interaction>& items) {
  const decision::Interaction entry = ToInteraction(value.row);
  auto it = std::find_if(items.begin(), items.end(), [&](const decision::Interaction& i) {
    return i.project_id == entry.project_id && i.chain_id == entry.chain_id;
  });
  if (value.removed) {
    if (it != items.end()) items.erase(it);
  } else if (it != items.end()) {
    *it = entry;
  } else {
    items.push_back(entry);
    detail::NormalizeInteractions(items);
  }
}

}  // namespace

Result<std::optional<uint64_t>> LmdbActivityIndex::ReplicaPosition() { return replica_.Get(); }

Status LmdbActivityIndex::PutReplicaValues(std::span<const ActivityValue> values,
                                           uint64_t position) {
  for (const ActivityValue& v : values) {
    if (v.row.project_id <= 0 || v.row.chain_id <= 0) {
      return InvalidArgumentError("activity rows need positive project and chain ids");
    }
  }
  ADS_RETURN_IF_ERROR(changes_.Create());
  ADS_RETURN_IF_ERROR(replica_.Create());
  // By wallet; a wallet's values keep their order, so the last one of a key wins.
  std::vector<const ActivityValue*> sorted;
  sorted.reserve(values.size());
  for (const ActivityValue& v : values) sorted.push_back(&v);
  std::stable_sort(sorted.begin(), sorted.end(), [](const ActivityValue* a, const ActivityValue* b) {
    return a->row.wallet < b->row.wallet;
  });
  WriteTxn txn(*env_);
  if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
  changes_.Clear();
  std::vector<decision::Interaction> items;
  for (size_t begin = 0, end = 0; begin < sorted.size(); begin = end) {
    const Address wallet = sorted[begin]->row.wallet;
    while (end < sorted.size() && sorted[end]->row.wallet == wallet) ++end;
    ADS_RETURN_IF_ERROR(wallets_.Read(txn.get(), wallet, items));
    for (size_t i = begin; i < end; ++i) SetEntry(*sorted[i], items);
    ADS_RETURN_IF_ERROR(wallets_.Write(txn.get(), wallet, items));
  }
  ADS_RETURN_IF_ERROR(replica_.Put(txn.get(), position));
  ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/false));
  if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  return OkStatus();
}

Status LmdbActivityIndex::ReplaceSorted(const FallibleSortedSource& next, uint64_t position) {
  ADS_RETURN_IF_ERROR(changes_.Create());
  ADS_RETURN_IF_ERROR(replica_.Create());
  {
    WriteTxn txn(*env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    ADS_RETURN_IF_ERROR(replica_.Put(txn.get(), std::nullopt));
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  }
  std::optional<Address> low;  // the stored wallets up to here are done
  std::vector<std::pair<Address, std::string>> chunk;
  std::vector<decision::Interaction> items;
  Address wallet;
  const size_t per_commit = std::max<size_t>(options_.wallets_per_commit, 1);
  for (bool more = true; more;) {
    chunk.clear();
    while (chunk.size() < per_commit) {
      items.clear();
      ADS_ASSIGN_OR_RETURN(bool got, next(wallet, items));
      if (!got) {
        more = false;
        break;
      }
      const Address* previous = !chunk.empty() ? &chunk.back().first : low ? &*low : nullptr;
      if (previous != nullptr && !(*previous < wallet)) {
        return ConflictError("ReplaceSorted: wallets out of order");
      }
      if (items.empty()) continue;  // a wallet without activity is not stored
      detail::NormalizeInteractions(items);
      std::string encoded;
      detail::EncodeInteractions(items, encoded);
      chunk.emplace_back(wallet, std::move(encoded));
    }
    WriteTxn txn(*env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    changes_.Clear();
    ADS_RETURN_IF_ERROR(ReplaceRange(txn.get(), low, more ? &chunk.back().first : nullptr, chunk));
    if (!more) ADS_RETURN_IF_ERROR(replica_.Put(txn.get(), position));
    ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/false));
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
    if (more) low = chunk.back().first;
  }
  return OkStatus();
}

Status LmdbActivityIndex::ReplaceRange(MDB_txn* txn, const std::optional<Address>& low,
                                       const Address* high,
                                       const std::vector<std::pair<Address, std::string>>& chunk) {
  // Compare first (no writes under the cursor), then write the differences.
  std::vector<Address> stale;
  std::vector<bool> same(chunk.size(), false);
  MDB_cursor* cursor = nullptr;
  if (int rc = mdb_cursor_open(txn, dbi_, &cursor); rc != 0) return LmdbError("cursor", rc);
  MDB_val key, value;
  if (low) key = KeyOf(*low);
  int rc = mdb_cursor_get(cursor, &key, &value, low ? MDB_SET_RANGE : MDB_FIRST);
  for (size_t i = 0; rc == 0; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (key.mv_size != sizeof(Address)) continue;  // a named database
    Address stored;
    std::memcpy(stored.bytes.data(), key.mv_data, sizeof(Address));
    if (low && !(*low < stored)) continue;
    if (high != nullptr && *high < stored) break;
    while (i < chunk.size() && chunk[i].first < stored) ++i;
    if (i < chunk.size() && chunk[i].first == stored) {
      same[i] = std::string_view(static_cast<const char*>(value.mv_data), value.mv_size) ==
                chunk[i].second;
    } else {
      stale.push_back(stored);
    }
  }
  mdb_cursor_close(cursor);
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbError("cursor", rc);
  for (const Address& w : stale) {
    changes_.Note(w);
    MDB_val k = KeyOf(w);
    if (rc = mdb_del(txn, dbi_, &k, nullptr); rc != 0) return LmdbError("del", rc);
  }
  for (size_t i = 0; i < chunk.size(); ++i) {
    if (same[i]) continue;
    changes_.Note(chunk[i].first);
    MDB_val k = KeyOf(chunk[i].first);
    MDB_val data{chunk[i].second.size(), const_cast<char*>(chunk[i].second.data())};
    if (rc = mdb_put(txn, dbi_, &k, &data, 0); rc != 0) return LmdbError("put", rc);
  }
  return OkStatus();
}

uint64_t LmdbActivityIndex::ChangeCounter() const { return env_->LastTxnId(); }

Result<LmdbActivityIndex::Stats> LmdbActivityIndex::GetStats() const {
  ReadTxn txn(*env_);
  if (txn.rc() != 0) return LmdbError("begin read", txn.rc());
  MDB_stat stat;
  if (int rc = mdb_stat(txn.get(), dbi_, &stat); rc != 0) return LmdbError("stat", rc);
  Stats s;
  s.wallets = stat.ms_entries - NamedDatabaseCount(txn.get());
  s.pages = stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
  s.page_size = stat.ms_psize;
  std::error_code ec;
  auto size = std::filesystem::file_size(std::filesystem::path(env_->dir()) / "data.mdb", ec);
  s.file_bytes = ec ? 0 : size;
  return s;
}

uint64_t LmdbActivityIndex::NamedDatabaseCount(MDB_txn* txn) const {
  uint64_t n = 0;
  for (const char* name :
       {detail::ChainJournal::kJournalDbName, detail::ChainJournal::kCheckpointDbName,
        detail::ChangeLog::kDbName, detail::ReplicaPosition::kDbName}) {
    MDB_val key{std::strlen(name), const_cast<char*>(name)}, value;
    if (mdb_get(txn, dbi_, &key, &value) == 0) ++n;
  }
  return n;
}

}  // namespace adserver::store
