#pragma once

// Where a replica of PostgreSQL's activity stands in the cluster's change log (cluster mode,
// cluster/activity_replica.h): one 8-byte position, written in the same write transaction as
// the changes it covers, so the index never claims a position its rows do not reflect.

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "store/lmdb/detail/lmdb_env.h"

namespace adserver::store::detail {

// The position is in its named database (NamedDb: Create before the first write transaction
// that puts).
class ReplicaPosition : public NamedDb {
 public:
  // Its named database (a key of the main database too: not 20 bytes long).
  static constexpr const char* kDbName = "activity_replica";

  explicit ReplicaPosition(LmdbEnv& env) : NamedDb(env, kDbName), env_(env) {}

  // Sets (or, with nullopt, clears) the position inside the write transaction `txn`.
  // REQUIRES: Create succeeded.
  Status Put(MDB_txn* txn, std::optional<uint64_t> position);
  // The recorded position; nullopt if none (never a replica, or a load cut short).
  Result<std::optional<uint64_t>> Get();

 private:
  LmdbEnv& env_;
};

}  // namespace adserver::store::detail
