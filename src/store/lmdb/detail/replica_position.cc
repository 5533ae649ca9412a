#include "store/lmdb/detail/replica_position.h"

#include <lmdb.h>

#include <cstring>
#include <string_view>

namespace adserver::store::detail {
namespace {

// The position's key; its value is 8 bytes, little-endian.
constexpr std::string_view kPositionKey = "position";

MDB_val PositionKey() {
  return MDB_val{kPositionKey.size(), const_cast<char*>(kPositionKey.data())};
}

}  // namespace

Status ReplicaPosition::Put(MDB_txn* txn, std::optional<uint64_t> position) {
  std::optional<MDB_dbi> dbi = handle();
  if (!dbi) return InternalError("replica position written before it was opened");
  MDB_val key = PositionKey();
  if (!position) {
    int rc = mdb_del(txn, *dbi, &key, nullptr);
    return rc == 0 || rc == MDB_NOTFOUND ? OkStatus() : LmdbError("del replica position", rc);
  }
  uint64_t v = *position;
  MDB_val value{sizeof v, &v};
  if (int rc = mdb_put(txn, *dbi, &key, &value, 0); rc != 0) {
    return LmdbError("put replica position", rc);
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> ReplicaPosition::Get() {
  ADS_ASSIGN_OR_RETURN(std::optional<MDB_dbi> dbi, Open(/*create=*/false));
  if (!dbi) return std::optional<uint64_t>();
  LmdbTxn txn(env_, LmdbTxn::Mode::kRead);
  ADS_RETURN_IF_ERROR(txn.status());
  MDB_val key = PositionKey(), value;
  int rc = mdb_get(txn.get(), *dbi, &key, &value);
  if (rc == MDB_NOTFOUND) return std::optional<uint64_t>();
  if (rc != 0) return LmdbError("get replica position", rc);
  uint64_t position = 0;
  if (value.mv_size != sizeof position) return InternalError("corrupt replica position");
  std::memcpy(&position, value.mv_data, sizeof position);
  return std::optional<uint64_t>(position);
}

}  // namespace adserver::store::detail
