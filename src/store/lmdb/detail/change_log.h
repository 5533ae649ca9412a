#pragma once

// The activity index's change log (the serving read cache's source): every write transaction
// that changes wallets logs them, in the same transaction, under its LMDB transaction id; a
// bulk write (or one changing more than kMaxLoggedWallets) logs "any wallet may have changed".
// The log keeps the last kKeepTxns transactions, so a reader of any process catches up from
// where its view was, or learns that it cannot.

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "store/lmdb/detail/lmdb_env.h"

namespace adserver::store::detail {

// The log is its named database (NamedDb: Create before the first write transaction that logs).
class ChangeLog : public NamedDb {
 public:
  // Its named database (a key of the main database too: not 20 bytes long).
  static constexpr const char* kDbName = "activity_changes";
  // A transaction changing more wallets logs a bulk marker instead of the list.
  static constexpr size_t kMaxLoggedWallets = 4096;
  // Log entries kept: a reader more than this many transactions behind rebuilds its table.
  static constexpr uint64_t kKeepTxns = 4096;

  explicit ChangeLog(LmdbEnv& env) : NamedDb(env, kDbName), env_(env) {}

  // True once this process opened the log (Create, or ReadSince found it).
  bool opened() const { return handle().has_value(); }

  // Write side. REQUIRES: inside a write transaction (LMDB's writer lock serialises them,
  // across processes too, so the pending wallets need no mutex of ours).
  void Clear() { pending_.clear(); }
  void Note(const Address& wallet) { pending_.push_back(wallet); }
  // Writes the entry of this transaction's noted wallets (or a bulk marker; nothing if neither)
  // and prunes entries older than kKeepTxns. Right before committing `txn`.
  Status Write(MDB_txn* txn, bool bulk);

  // Read side: how far CatchUp brought a reader.
  enum class CatchUp {
    kCurrent,  // every change is in the reader's set
    kBulk,     // likewise, except bulk changes (no wallet list): their wallets are stale
    kLost,     // the log cannot tell (pruned past the reader, or none)
  };
  // Adds the wallets logged after `covered_txn` to `recent`; unless kLost, `covered_txn` is
  // then the newest transaction. Opens the log read-only if another process created it.
  Result<CatchUp> ReadSince(uint64_t& covered_txn,
                            std::unordered_set<Address, AddressHash>& recent);

 private:
  LmdbEnv& env_;
  std::vector<Address> pending_;  // the write transaction's noted wallets
};

}  // namespace adserver::store::detail
