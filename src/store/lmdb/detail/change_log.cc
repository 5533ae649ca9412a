#include "store/lmdb/detail/change_log.h"

#include <lmdb.h>

#include <array>
#include <cstring>

namespace adserver::store::detail {
namespace {

// Key: the transaction id, 8 bytes big-endian (so the log reads in order); value: the 20-byte
// wallets it changed, or empty for a bulk change. Key 0 holds the newest pruned transaction id
// (8 bytes, little-endian).
std::array<uint8_t, 8> ChangeKey(uint64_t txn_id) {
  std::array<uint8_t, 8> key;
  for (int i = 0; i < 8; ++i) key[i] = static_cast<uint8_t>(txn_id >> (56 - 8 * i));
  return key;
}

uint64_t ChangeTxn(const MDB_val& key) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<const uint8_t*>(key.mv_data)[i];
  return v;
}

static_assert(sizeof(Address) == 20);

// Prunes entries before `keep_from`; remembers the newest pruned one (key 0).
Status PruneChangeLog(MDB_txn* txn, MDB_dbi dbi, uint64_t keep_from) {
  MDB_cursor* cursor = nullptr;
  if (int rc = mdb_cursor_open(txn, dbi, &cursor); rc != 0) return LmdbError("cursor", rc);
  std::array<uint8_t, 8> first = ChangeKey(1);
  MDB_val k{first.size(), first.data()}, v;
  uint64_t pruned = 0;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
  for (; rc == 0 && k.mv_size == 8 && ChangeTxn(k) < keep_from;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    pruned = ChangeTxn(k);
    if (int del = mdb_cursor_del(cursor, 0); del != 0) {
      mdb_cursor_close(cursor);
      return LmdbError("prune change log", del);
    }
  }
  mdb_cursor_close(cursor);
  if (pruned == 0) return OkStatus();
  std::array<uint8_t, 8> meta = ChangeKey(0);
  MDB_val meta_key{meta.size(), meta.data()}, meta_value{sizeof pruned, &pruned};
  if (int put = mdb_put(txn, dbi, &meta_key, &meta_value, 0); put != 0) {
    return LmdbError("put change log", put);
  }
  return OkStatus();
}

}  // namespace

Status ChangeLog::Write(MDB_txn* txn, bool bulk) {
  if (!bulk && pending_.empty()) return OkStatus();
  std::optional<MDB_dbi> dbi = handle();
  if (!dbi) return InternalError("change log written before it was opened");
  const uint64_t txn_id = mdb_txn_id(txn);
  std::array<uint8_t, 8> key_bytes = ChangeKey(txn_id);
  MDB_val key{key_bytes.size(), key_bytes.data()};
  bulk = bulk || pending_.size() > kMaxLoggedWallets;
  MDB_val value{bulk ? 0 : pending_.size() * sizeof(Address), bulk ? nullptr : pending_.data()};
  if (int rc = mdb_put(txn, *dbi, &key, &value, 0); rc != 0) {
    return LmdbError("put change log", rc);
  }
  pending_.clear();
  if (txn_id <= kKeepTxns) return OkStatus();
  return PruneChangeLog(txn, *dbi, txn_id - kKeepTxns);
}

Result<ChangeLog::CatchUp> ChangeLog::ReadSince(uint64_t& covered_txn,
                                                std::unordered_set<Address, AddressHash>& recent) {
  // Another process may have created the log: opened read-only (the handle then stays).
  ADS_ASSIGN_OR_RETURN(std::optional<MDB_dbi> dbi, Open(/*create=*/false));
  LmdbTxn txn(env_, LmdbTxn::Mode::kRead);
  ADS_RETURN_IF_ERROR(txn.status());
  const uint64_t now = txn.id();
  if (now == covered_txn) return CatchUp::kCurrent;
  // Written without a log (a first bulk load).
  if (!dbi) return CatchUp::kLost;
  std::array<uint8_t, 8> meta = ChangeKey(0);
  MDB_val key{meta.size(), meta.data()}, value;
  int rc = mdb_get(txn.get(), *dbi, &key, &value);
  if (rc == 0 && value.mv_size == 8) {
    uint64_t pruned;
    std::memcpy(&pruned, value.mv_data, 8);
    if (pruned > covered_txn) return CatchUp::kLost;
  }
  MDB_cursor* cursor = nullptr;
  if (rc = mdb_cursor_open(txn.get(), *dbi, &cursor); rc != 0) return LmdbError("cursor", rc);
  std::array<uint8_t, 8> from = ChangeKey(covered_txn + 1);
  key = {from.size(), from.data()};
  CatchUp result = CatchUp::kCurrent;
  for (rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (value.mv_size == 0 || value.mv_size % sizeof(Address) != 0) {
      // A bulk change: its wallets are not listed. Later entries still are.
      result = CatchUp::kBulk;
      continue;
    }
    const auto* wallets = static_cast<const uint8_t*>(value.mv_data);
    for (size_t off = 0; off < value.mv_size; off += sizeof(Address)) {
      Address w;
      std::memcpy(w.bytes.data(), wallets + off, sizeof(Address));
      recent.insert(w);
    }
  }
  mdb_cursor_close(cursor);
  covered_txn = now;
  return result;
}

}  // namespace adserver::store::detail
