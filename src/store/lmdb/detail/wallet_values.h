#pragma once

// The activity index's wallets as key-value pairs inside a write transaction: key = the 20
// address bytes, value = the wallet's interactions (activity_codec.h). Every write is noted in
// the change log, which the caller writes before committing.

#include <span>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "decision/activity_index.h"
#include "store/lmdb/detail/change_log.h"
#include "store/lmdb/detail/lmdb_handles.h"
#include "store/records.h"

namespace adserver::store::detail {

// `row` as the index stores it: last_seen as its day, ids and count clamped to 32 bits.
decision::Interaction ToInteraction(const ActivityRecord& row);

class WalletValues {
 public:
  WalletValues(MDB_dbi dbi, ChangeLog& changes) : dbi_(dbi), changes_(changes) {}

  // The wallet's stored interactions (empty if none, or if its value is corrupt: it is then
  // rewritten) into `items`.
  Status Read(MDB_txn* txn, const Address& wallet, std::vector<decision::Interaction>& items) const;
  // Stores `items` (sorted) as the wallet's value, or deletes the wallet if empty.
  Status Write(MDB_txn* txn, const Address& wallet, std::span<const decision::Interaction> items);

 private:
  MDB_dbi dbi_;
  ChangeLog& changes_;
};

}  // namespace adserver::store::detail
