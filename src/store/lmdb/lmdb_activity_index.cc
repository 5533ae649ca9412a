#include "store/lmdb/lmdb_activity_index.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <limits>
#include <system_error>

#include "common/check.h"
#include "store/lmdb/detail/activity_codec.h"

namespace adserver::store {
namespace {

constexpr int64_t kSecondsPerDay = 86400;

Status LmdbError(const char* what, int rc) {
  return UnavailableError(std::string("lmdb ") + what + ": " + mdb_strerror(rc));
}

MDB_val KeyOf(const Address& wallet) {
  return MDB_val{wallet.bytes.size(), const_cast<uint8_t*>(wallet.bytes.data())};
}

std::span<const uint8_t> Bytes(const MDB_val& v) {
  return {static_cast<const uint8_t*>(v.mv_data), v.mv_size};
}

uint32_t DayOf(int64_t unix_seconds) {
  if (unix_seconds <= 0) return 0;
  return static_cast<uint32_t>(
      std::min<int64_t>(unix_seconds / kSecondsPerDay, detail::kMaxStoredDay));
}

uint32_t Clamp32(int64_t v) {
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, std::numeric_limits<uint32_t>::max()));
}

ActivityRecord ToRecord(const Address& wallet, const decision::Interaction& i) {
  return ActivityRecord{.wallet = wallet,
                        .project_id = i.project_id,
                        .chain_id = i.chain_id,
                        .last_seen = int64_t{i.last_seen_day} * kSecondsPerDay,
                        .count = i.count};
}

std::atomic<uint64_t> next_instance_id{1};

// Aborts a write transaction unless committed.
class WriteTxn {
 public:
  explicit WriteTxn(MDB_env* env) { rc_ = mdb_txn_begin(env, nullptr, 0, &txn_); }
  ~WriteTxn() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  int rc() const { return rc_; }
  MDB_txn* get() { return txn_; }
  int Commit() {
    int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    return rc;
  }

 private:
  MDB_txn* txn_ = nullptr;
  int rc_ = 0;
};

// A short read transaction for the slow paths (admin reads, scans).
class ReadTxn {
 public:
  explicit ReadTxn(MDB_env* env) { rc_ = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn_); }
  ~ReadTxn() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  int rc() const { return rc_; }
  MDB_txn* get() { return txn_; }

 private:
  MDB_txn* txn_ = nullptr;
  int rc_ = 0;
};

}  // namespace

struct LmdbActivityIndex::ThreadReader {
  MDB_txn* txn = nullptr;  // reset between batches; aborted by ~LmdbActivityIndex
  std::vector<decision::Interaction> arena;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (offset, size) per wallet of a batch
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
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError("cannot create " + dir + ": " + ec.message());
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return LmdbError("env_create", rc);
  mdb_env_set_mapsize(env, options.map_size_bytes);
  mdb_env_set_maxreaders(env, 1024);
  // NOTLS: read transactions belong to our per-thread readers, not to LMDB's thread slots.
  // NORDAHEAD: random point lookups; read-ahead would only evict useful pages.
  unsigned flags = MDB_NOTLS | MDB_NORDAHEAD | (options.no_sync ? MDB_NOSYNC : 0u);
  rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  if (rc == 0) rc = mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  if (rc != 0) {
    mdb_env_close(env);
    return LmdbError(("open " + dir).c_str(), rc);
  }
  std::shared_ptr<LmdbActivityIndex> index(new LmdbActivityIndex(env, dbi, options));
  index->path_ = dir;
  return index;
}

LmdbActivityIndex::LmdbActivityIndex(MDB_env* env, MDB_dbi dbi, const LmdbOptions& options)
    : env_(env), dbi_(dbi), options_(options), id_(next_instance_id.fetch_add(1)) {}

LmdbActivityIndex::~LmdbActivityIndex() {
  {
    std::lock_guard<std::mutex> lock(readers_mu_);
    for (auto& r : readers_) mdb_txn_abort(r->txn);
    readers_.clear();
  }
  mdb_env_close(env_);
}

LmdbActivityIndex::ThreadReader& LmdbActivityIndex::Reader() const {
  for (const CachedReader& c : tl_readers) {
    if (c.owner == id_) return *static_cast<ThreadReader*>(c.reader);
  }
  auto reader = std::make_unique<ThreadReader>();
  int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &reader->txn);
  ADS_CHECK(rc == 0) << "lmdb read transaction: " << mdb_strerror(rc);
  mdb_txn_reset(reader->txn);
  ThreadReader* raw = reader.get();
  {
    std::lock_guard<std::mutex> lock(readers_mu_);
    readers_.push_back(std::move(reader));
  }
  tl_readers.push_back({id_, raw});
  return *raw;
}

void LmdbActivityIndex::LookupAll(std::span<const Address> wallets, const Sink& sink) const {
  ThreadReader& r = Reader();
  r.arena.clear();
  r.ranges.clear();
  bool renewed = mdb_txn_renew(r.txn) == 0;
  for (const Address& wallet : wallets) {
    auto begin = static_cast<uint32_t>(r.arena.size());
    MDB_val key = KeyOf(wallet), value;
    if (renewed && mdb_get(r.txn, dbi_, &key, &value) == 0 &&
        !detail::DecodeInteractions(Bytes(value), r.arena)) {
      r.arena.resize(begin);  // a corrupt value reads as no activity
    }
    r.ranges.emplace_back(begin, static_cast<uint32_t>(r.arena.size()) - begin);
  }
  if (renewed) mdb_txn_reset(r.txn);
  // Spans are made only now: the arena no longer grows, so they stay valid.
  for (const auto& [offset, size] : r.ranges) {
    sink(std::span<const decision::Interaction>(r.arena.data() + offset, size));
  }
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
    WriteTxn txn(env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    ADS_RETURN_IF_ERROR(WriteWallets(txn.get(), sorted, begin, end));
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
    begin = end;
  }
  return OkStatus();
}

Status LmdbActivityIndex::WriteWallets(MDB_txn* txn, const std::vector<ActivityRecord>& sorted,
                                       size_t begin, size_t end) {
  std::vector<decision::Interaction> merged;
  std::string encoded;
  for (size_t i = begin; i < end;) {
    const Address wallet = sorted[i].wallet;
    merged.clear();
    MDB_val key = KeyOf(wallet), value;
    int rc = mdb_get(txn, dbi_, &key, &value);
    if (rc == 0) {
      if (!detail::DecodeInteractions(Bytes(value), merged)) merged.clear();
    } else if (rc != MDB_NOTFOUND) {
      return LmdbError("get", rc);
    }
    for (; i < end && sorted[i].wallet == wallet; ++i) {
      merged.push_back({.project_id = Clamp32(sorted[i].project_id),
                        .chain_id = Clamp32(sorted[i].chain_id),
                        .last_seen_day = DayOf(sorted[i].last_seen),
                        .count = Clamp32(sorted[i].count)});
    }
    detail::NormalizeInteractions(merged);
    encoded.clear();
    detail::EncodeInteractions(merged, encoded);
    MDB_val data{encoded.size(), encoded.data()};
    if (rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) return LmdbError("put", rc);
  }
  return OkStatus();
}

Status LmdbActivityIndex::LoadSorted(
    const std::function<bool(Address&, std::vector<decision::Interaction>&)>& next) {
  if (wallet_count() != 0) return ConflictError("LoadSorted needs an empty index");
  Address wallet;
  std::vector<decision::Interaction> items;
  std::string encoded;
  bool more = true;
  while (more) {
    // Commits every 20x wallets_per_commit wallets: appends dirty few pages per wallet.
    WriteTxn txn(env_);
    if (txn.rc() != 0) return LmdbError("begin write", txn.rc());
    MDB_cursor* cursor = nullptr;
    if (int rc = mdb_cursor_open(txn.get(), dbi_, &cursor); rc != 0) return LmdbError("cursor", rc);
    Status status;
    for (size_t n = 0; status.ok() && n < 20 * options_.wallets_per_commit; ++n) {
      items.clear();
      if (!next(wallet, items)) {
        more = false;
        break;
      }
      detail::NormalizeInteractions(items);
      encoded.clear();
      detail::EncodeInteractions(items, encoded);
      MDB_val key = KeyOf(wallet), data{encoded.size(), encoded.data()};
      int rc = mdb_cursor_put(cursor, &key, &data, MDB_APPEND);
      if (rc == MDB_KEYEXIST)
        status = ConflictError("LoadSorted: wallets out of order");
      else if (rc != 0)
        status = LmdbError("append", rc);
    }
    mdb_cursor_close(cursor);
    if (!status.ok()) return status;
    if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  }
  return OkStatus();
}

Result<std::vector<ActivityRecord>> LmdbActivityIndex::ForWallet(const Address& wallet) const {
  ReadTxn txn(env_);
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
  ReadTxn txn(env_);
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

uint64_t LmdbActivityIndex::ChangeCounter() const {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  return info.me_last_txnid;
}

Result<LmdbActivityIndex::Stats> LmdbActivityIndex::GetStats() const {
  ReadTxn txn(env_);
  if (txn.rc() != 0) return LmdbError("begin read", txn.rc());
  MDB_stat stat;
  if (int rc = mdb_stat(txn.get(), dbi_, &stat); rc != 0) return LmdbError("stat", rc);
  Stats s;
  s.wallets = stat.ms_entries;
  s.pages = stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
  s.page_size = stat.ms_psize;
  std::error_code ec;
  auto size = std::filesystem::file_size(std::filesystem::path(path_) / "data.mdb", ec);
  s.file_bytes = ec ? 0 : size;
  return s;
}

}  // namespace adserver::store
