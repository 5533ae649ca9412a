#pragma once

// Wallet activity in PostgreSQL (cluster mode, issue 17 item 4): the source of truth that every
// node's local LMDB index replicates (cluster/activity_replica.h). Besides the ActivityStore
// contract it serves what a replica needs: an ordered change log (ChangesAfter), a consistent
// snapshot to bootstrap from (OpenSnapshot), absolute writes (PutActivityValues) and log
// pruning (PruneChangesBefore).
//
// The log (migration 6, detail/pg_migrations.cc) is written by triggers in the writer's own
// transaction with each changed row's resulting values, under a transaction advisory lock, so
// seqs commit in order and a follower never misses one; every change of wallet_activity is
// logged, whoever made it (a project's deletion cascading into activity included).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/address.h"
#include "common/mutex.h"
#include "common/status.h"
#include "store/activity_store.h"
#include "store/chain_ledger.h"
#include "store/records.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
class PgTransaction;
}  // namespace pg_detail

// One change log entry: the entry's value after the change.
struct ActivityChange {
  int64_t seq = 0;
  ActivityValue value;
};

struct ActivityChanges {
  std::vector<ActivityChange> changes;  // seq order
  // The seq a follower is at once it applied `changes` (the last one's, or the seq asked for).
  int64_t position = 0;
};

// A consistent read of all of wallet_activity, on a connection and REPEATABLE READ transaction
// of its own (server-side cursor), so a long bootstrap holds up no other caller. Not
// thread-safe.
class PgActivitySnapshot {
 public:
  ~PgActivitySnapshot();
  PgActivitySnapshot(const PgActivitySnapshot&) = delete;
  PgActivitySnapshot& operator=(const PgActivitySnapshot&) = delete;

  // The change log seq this snapshot reflects: every change up to it and none after.
  int64_t position() const { return position_; }
  // Replaces `rows` by the next rows in (wallet, project_id, chain_id) order; empty at the end.
  // Unavailable if the connection broke (the snapshot is then unusable: open another).
  Status Next(std::vector<ActivityRecord>& rows);

 private:
  friend class PostgresActivityStore;
  PgActivitySnapshot(std::unique_ptr<pg_detail::PgConnection> conn, size_t batch);
  Status Begin();

  std::unique_ptr<pg_detail::PgConnection> conn_;
  std::unique_ptr<pg_detail::PgTransaction> txn_;  // declared after conn_: ends first
  const size_t batch_;
  int64_t position_ = 0;
  bool done_ = false;
};

// Thread-safe: one connection behind a mutex (store calls run on background and admin threads).
// A lost connection answers Unavailable and is re-established by the next call.
//
// As a ChainLedger it holds the live indexer's checkpoint, block journal and undo values of
// each chain (migration 8), written in the transaction of the blocks' activity: whichever node
// leads a chain's indexer continues from them, a block committed here is never applied twice
// (ApplyBlocks moves the checkpoint only from the block it expects), and a reorg right after a
// failover is undone with the previous leader's journal. Every node's replica follows the
// activity written (increments for blocks, restored absolute values for an undo) through the
// change log.
class PostgresActivityStore final : public ActivityStore, public ChainLedger {
 public:
  // Connects to `url` and applies the schema migrations (as PostgresStore::Open). Unavailable
  // if the server cannot be reached.
  static Result<std::unique_ptr<PostgresActivityStore>> Open(const std::string& url);
  ~PostgresActivityStore() override;

  // ActivityStore. RecordActivity upserts in one transaction (last_seen = max, count = sum);
  // Conflict if a project does not exist, InvalidArgument for a non-positive project or chain
  // id (the LMDB index cannot hold them); either way nothing of the batch is written.
  Status RecordActivity(const std::vector<ActivityRecord>& rows) override;
  Result<std::vector<ActivityRecord>> ActivityForWallet(const Address& wallet) override;
  // Ordered by (wallet, project_id, chain_id), from one snapshot (OpenSnapshot).
  Status ScanActivity(const std::function<void(const ActivityRecord&)>& fn) override;
  // The change log's position (the newest seq committed): moves with every committed change.
  Result<uint64_t> ActivityChangeCounter() override;

  // Writes absolute values in one transaction: present ones are upserted as they are, removed
  // ones deleted (absent ones stay absent). Values equal to the stored ones are not rewritten
  // (nor logged). When a key appears more than once, the last value wins. Conflict and
  // InvalidArgument as RecordActivity (nothing written).
  Status PutActivityValues(const std::vector<ActivityValue>& values);

  // Up to `limit` log entries with seq > `after`, in seq order. NotFound if the log was pruned
  // past `after` (entries the caller needs are gone: it bootstraps again from a snapshot).
  Result<ActivityChanges> ChangesAfter(int64_t after, size_t limit);

  // Opens a snapshot (a connection of its own) that returns `batch` rows per Next.
  Result<std::unique_ptr<PgActivitySnapshot>> OpenSnapshot(size_t batch = 50'000);

  // ChainLedger. ApplyBlocks is also Conflict (nothing written) when the first block's parent
  // hash is not the journal's newest block's hash (another leader followed another branch), or
  // a row names a project that does not exist. UndoBlocksAfter restores no value of a project
  // deleted since (its activity is gone). Both take the activity writers' lock, so the undo
  // values journaled are exactly those the block's upsert found.
  Result<ChainCheckpoint> LoadCheckpoint(int64_t chain_id) override;
  Status ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint) override;
  Status ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) override;
  Status UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) override;

  // Deletes the log entries written before `cutoff` (Unix seconds, PostgreSQL's clock) and
  // returns how many. A follower whose position is older than what is pruned re-bootstraps
  // (ChangesAfter answers NotFound): the cutoff is the retention promised to followers.
  Result<int64_t> PruneChangesBefore(int64_t cutoff);

 private:
  PostgresActivityStore(std::unique_ptr<pg_detail::PgConnection> conn, std::string url);
  // Inside a transaction: the block's row, its undo values, its upsert.
  Status ApplyBlock(int64_t chain_id, const IndexedBlock& block) ADS_REQUIRES(mu_);
  // Inside a transaction: the chain's next block, locked until commit; nullopt if the chain
  // has no checkpoint.
  Result<std::optional<uint64_t>> LockCheckpoint(int64_t chain_id) ADS_REQUIRES(mu_);

  const std::string url_;
  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store
