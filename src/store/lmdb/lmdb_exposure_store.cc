#include "store/lmdb/lmdb_exposure_store.h"

#include <lmdb.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace adserver::store {
namespace {

constexpr size_t kKeyBytes = 20 + 8;
using Key = std::array<uint8_t, kKeyBytes>;

Status LmdbError(int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + mdb_strerror(rc);
  if (rc == MDB_MAP_FULL || rc == MDB_READERS_FULL || rc == EAGAIN || rc == EIO) {
    return UnavailableError(std::move(message));
  }
  return InternalError(std::move(message));
}

Key MakeKey(const Address& wallet, Id campaign_id) {
  Key key{};
  std::memcpy(key.data(), wallet.bytes.data(), 20);
  auto id = static_cast<uint64_t>(campaign_id);
  for (int i = 0; i < 8; ++i) key[20 + i] = static_cast<uint8_t>(id >> (8 * (7 - i)));
  return key;
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out += static_cast<char>(v >> (8 * i));
}

uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

void PutText(std::string& out, std::string_view text, size_t max) {
  text = text.substr(0, max);
  out += static_cast<char>(text.size());
  out.append(text);
}

std::string Encode(const ExposureRecord& r) {
  std::string out;
  out.reserve(9 + r.entries.size() * 80);
  PutU64(out, static_cast<uint64_t>(r.prior_last_seen));
  out += static_cast<char>(r.entries.size());
  for (const ExposureEntry& e : r.entries) {
    out.append(reinterpret_cast<const char*>(e.decision_id.data()), e.decision_id.size());
    PutU64(out, static_cast<uint64_t>(e.exposed_at));
    PutU64(out, static_cast<uint64_t>(e.ad_id));
    PutU64(out, static_cast<uint64_t>(e.publisher_id));
    PutU64(out, e.person);
    PutText(out, e.arm, kMaxExposureArmBytes);
    PutText(out, e.ad_unit_id, kMaxExposureAdUnitBytes);
  }
  return out;
}

bool Decode(const MDB_val& v, ExposureRecord& r) {
  const auto* p = static_cast<const uint8_t*>(v.mv_data);
  const uint8_t* end = p + v.mv_size;
  if (end - p < 9) return false;
  r.prior_last_seen = static_cast<int64_t>(GetU64(p));
  size_t n = p[8];
  p += 9;
  r.entries.clear();
  for (size_t i = 0; i < n; ++i) {
    if (end - p < 16 + 32 + 2) return false;
    ExposureEntry e;
    std::memcpy(e.decision_id.data(), p, 16);
    e.exposed_at = static_cast<int64_t>(GetU64(p + 16));
    e.ad_id = static_cast<int64_t>(GetU64(p + 24));
    e.publisher_id = static_cast<int64_t>(GetU64(p + 32));
    e.person = GetU64(p + 40);
    p += 48;
    for (std::string* text : {&e.arm, &e.ad_unit_id}) {
      if (p >= end) return false;
      size_t len = *p++;
      if (static_cast<size_t>(end - p) < len) return false;
      text->assign(reinterpret_cast<const char*>(p), len);
      p += len;
    }
    r.entries.push_back(std::move(e));
  }
  return p == end;
}

// Read-only or write transaction, aborted unless committed.
class Txn : public detail::LmdbTxn {
 public:
  Txn(const detail::LmdbEnv& env, bool write) : LmdbTxn(env, write ? Mode::kWrite : Mode::kRead) {}
};

}  // namespace

Result<std::unique_ptr<LmdbExposureStore>> LmdbExposureStore::Open(
    const std::string& dir, const LmdbExposureOptions& options) {
  // Exposure writes hit random pages (one per new pair): written in place (write_map).
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<detail::LmdbEnv> env,
                       detail::LmdbEnv::Open(dir, {.map_size_bytes = options.map_size_bytes,
                                                   .max_named_databases = 1,
                                                   .no_sync = options.no_sync,
                                                   .write_map = true}));
  ADS_ASSIGN_OR_RETURN(std::optional<MDB_dbi> dbi, env->Named("exposures", /*create=*/true));
  return std::unique_ptr<LmdbExposureStore>(new LmdbExposureStore(std::move(env), *dbi));
}

LmdbExposureStore::~LmdbExposureStore() = default;

Status LmdbExposureStore::AddExposures(std::span<const ExposureWrite> writes) {
  Txn txn(*env_, true);
  if (txn.rc() != 0) return LmdbError(txn.rc(), "begin exposures write");
  ExposureRecord record;
  for (const ExposureWrite& w : writes) {
    Key key = MakeKey(w.wallet, w.campaign_id);
    MDB_val k{key.size(), key.data()};
    MDB_val v;
    int rc = mdb_get(txn.get(), dbi_, &k, &v);
    if (rc == 0 && Decode(v, record)) {
      // A decision already recorded (the same exposure twice) is not repeated.
      bool seen =
          std::any_of(record.entries.begin(), record.entries.end(),
                      [&](const ExposureEntry& e) { return e.decision_id == w.entry.decision_id; });
      if (seen) continue;
    } else if (rc == 0 || rc == MDB_NOTFOUND) {
      record = ExposureRecord{.prior_last_seen = w.prior_last_seen};
    } else {
      return LmdbError(rc, "read exposure");
    }
    record.entries.insert(record.entries.begin(), w.entry);
    std::stable_sort(
        record.entries.begin(), record.entries.end(),
        [](const ExposureEntry& a, const ExposureEntry& b) { return a.exposed_at > b.exposed_at; });
    if (record.entries.size() > kMaxExposuresPerRecord) {
      record.entries.resize(kMaxExposuresPerRecord);
    }
    std::string value = Encode(record);
    MDB_val out{value.size(), value.data()};
    rc = mdb_put(txn.get(), dbi_, &k, &out, 0);
    if (rc != 0) return LmdbError(rc, "write exposure");
  }
  int rc = txn.Commit();
  if (rc != 0) return LmdbError(rc, "commit exposures");
  return OkStatus();
}

Result<std::optional<ExposureRecord>> LmdbExposureStore::Get(const Address& wallet,
                                                             Id campaign_id) {
  Txn txn(*env_, false);
  if (txn.rc() != 0) return LmdbError(txn.rc(), "begin exposures read");
  Key key = MakeKey(wallet, campaign_id);
  MDB_val k{key.size(), key.data()};
  MDB_val v;
  int rc = mdb_get(txn.get(), dbi_, &k, &v);
  if (rc == MDB_NOTFOUND) return std::optional<ExposureRecord>();
  if (rc != 0) return LmdbError(rc, "read exposure");
  ExposureRecord record;
  if (!Decode(v, record)) return InternalError("exposure record does not decode");
  return std::optional<ExposureRecord>(std::move(record));
}

Result<ExpiryStep> LmdbExposureStore::ExpireStep(int64_t cutoff, std::string_view after,
                                                size_t max_records) {
  Txn txn(*env_, true);
  if (txn.rc() != 0) return LmdbError(txn.rc(), "begin exposures expiry");
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn.get(), dbi_, &cursor);
  if (rc != 0) return LmdbError(rc, "open exposures cursor");
  ExpiryStep step;
  max_records = std::max<size_t>(max_records, 1);
  std::string start(after);
  MDB_val k{start.size(), start.data()};
  MDB_val v;
  if (start.empty()) {
    rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  } else {
    // The first key at or after `after`; `after` itself was visited by the previous step.
    rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && k.mv_size == start.size() &&
        std::memcmp(k.mv_data, start.data(), k.mv_size) == 0) {
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    }
  }
  ExposureRecord record;
  size_t visited = 0;
  for (; rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    if (visited == max_records) break;  // resume after the last key visited
    ++visited;
    // Copied before a delete can invalidate the key's memory.
    step.resume.assign(static_cast<const char*>(k.mv_data), k.mv_size);
    if (!Decode(v, record)) continue;
    size_t before = record.entries.size();
    std::erase_if(record.entries, [&](const ExposureEntry& e) { return e.exposed_at < cutoff; });
    if (record.entries.empty()) {
      rc = mdb_cursor_del(cursor, 0);
      ++step.deleted;
    } else if (record.entries.size() != before) {
      std::string value = Encode(record);
      MDB_val out{value.size(), value.data()};
      rc = mdb_cursor_put(cursor, &k, &out, MDB_CURRENT);
    }
    if (rc != 0) break;
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND && rc != 0) return LmdbError(rc, "expire exposures");
  step.done = rc == MDB_NOTFOUND;
  if (step.done) step.resume.clear();
  rc = txn.Commit();
  if (rc != 0) return LmdbError(rc, "commit exposure expiry");
  return step;
}

Result<ExposureStats> LmdbExposureStore::Stats() {
  Txn txn(*env_, false);
  if (txn.rc() != 0) return LmdbError(txn.rc(), "begin exposures read");
  MDB_stat stat;
  int rc = mdb_stat(txn.get(), dbi_, &stat);
  if (rc != 0) return LmdbError(rc, "exposure stats");
  int64_t pages =
      static_cast<int64_t>(stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages);
  return ExposureStats{.records = static_cast<int64_t>(stat.ms_entries),
                       .bytes = pages * static_cast<int64_t>(stat.ms_psize)};
}

}  // namespace adserver::store
