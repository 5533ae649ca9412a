#include "store/lmdb/detail/wallet_values.h"

#include <lmdb.h>

#include <string>

#include "store/lmdb/detail/activity_codec.h"
#include "store/lmdb/detail/lmdb_env.h"

namespace adserver::store::detail {

decision::Interaction ToInteraction(const ActivityRecord& row) {
  return {.project_id = Clamp32(row.project_id),
          .chain_id = Clamp32(row.chain_id),
          .last_seen_day = StoredDay(row.last_seen),
          .count = Clamp32(row.count)};
}

Status WalletValues::Read(MDB_txn* txn, const Address& wallet,
                          std::vector<decision::Interaction>& items) const {
  items.clear();
  MDB_val key{wallet.bytes.size(), const_cast<uint8_t*>(wallet.bytes.data())}, value;
  int rc = mdb_get(txn, dbi_, &key, &value);
  if (rc == MDB_NOTFOUND) return OkStatus();
  if (rc != 0) return LmdbError("get", rc);
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(value.mv_data), value.mv_size);
  if (!DecodeInteractions(bytes, items)) items.clear();  // corrupt: rewritten
  return OkStatus();
}

Status WalletValues::Write(MDB_txn* txn, const Address& wallet,
                           std::span<const decision::Interaction> items) {
  MDB_val key{wallet.bytes.size(), const_cast<uint8_t*>(wallet.bytes.data())};
  changes_.Note(wallet);
  if (items.empty()) {
    int rc = mdb_del(txn, dbi_, &key, nullptr);
    return rc == 0 || rc == MDB_NOTFOUND ? OkStatus() : LmdbError("del", rc);
  }
  thread_local std::string encoded;  // reused: no allocation per wallet once warm
  encoded.clear();
  EncodeInteractions(items, encoded);
  MDB_val data{encoded.size(), encoded.data()};
  if (int rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) return LmdbError("put", rc);
  return OkStatus();
}

}  // namespace adserver::store::detail
