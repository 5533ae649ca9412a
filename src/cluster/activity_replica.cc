#include "cluster/activity_replica.h"

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "common/log.h"

namespace adserver::cluster {
namespace {

// Feeds a snapshot's rows (in wallet order) to the index one wallet at a time.
class SnapshotWallets {
 public:
  explicit SnapshotWallets(store::PgActivitySnapshot& snapshot) : snapshot_(snapshot) {}

  Result<bool> operator()(Address& wallet, std::vector<decision::Interaction>& items) {
    ADS_ASSIGN_OR_RETURN(bool more, Fill());
    if (!more) return false;
    wallet = rows_[next_].wallet;
    // A wallet's rows may continue in the next fetch.
    for (;;) {
      for (; next_ < rows_.size() && rows_[next_].wallet == wallet; ++next_) {
        items.push_back(store::StoredInteraction(rows_[next_]));
        ++rows_read_;
      }
      if (next_ < rows_.size()) break;
      ADS_ASSIGN_OR_RETURN(more, Fill());
      if (!more || rows_[next_].wallet != wallet) break;
    }
    return true;
  }
  uint64_t rows_read() const { return rows_read_; }

 private:
  // True if an unread row is buffered (fetching the next batch when needed).
  Result<bool> Fill() {
    if (next_ < rows_.size()) return true;
    ADS_RETURN_IF_ERROR(snapshot_.Next(rows_));
    next_ = 0;
    return !rows_.empty();
  }

  store::PgActivitySnapshot& snapshot_;
  std::vector<store::ActivityRecord> rows_;
  size_t next_ = 0;
  uint64_t rows_read_ = 0;
};

int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace

ActivityReplica::ActivityReplica(store::PostgresActivityStore& source,
                                 store::LmdbActivityIndex& index,
                                 const ActivityReplicaOptions& options)
    : source_(source), index_(index), options_(options) {}

ActivityReplica::Stats ActivityReplica::stats() const {
  return {.bootstraps = bootstraps_.load(), .changes_applied = changes_applied_.load()};
}

Status ActivityReplica::Step() {
  if (!started_) {
    ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> stored, index_.ReplicaPosition());
    if (!stored) {
      ADS_RETURN_IF_ERROR(Bootstrap());
    } else {
      position_ = static_cast<int64_t>(*stored);
    }
    started_ = true;
  }
  Status followed = FollowLog();
  if (followed.code() != Code::kNotFound) return followed;
  ADS_LOG(warn, "activity replica behind the pruned change log; bootstrapping again", "position",
          position());
  ADS_RETURN_IF_ERROR(Bootstrap());
  return FollowLog();
}

Status ActivityReplica::FollowLog() {
  std::vector<store::ActivityValue> values;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(store::ActivityChanges batch,
                         source_.ChangesAfter(position(), options_.changes_per_batch));
    if (batch.changes.empty()) return OkStatus();
    values.clear();
    for (const store::ActivityChange& change : batch.changes) values.push_back(change.value);
    ADS_RETURN_IF_ERROR(index_.PutReplicaValues(values, static_cast<uint64_t>(batch.position)));
    position_ = batch.position;
    changes_applied_ += batch.changes.size();
    if (batch.changes.size() < options_.changes_per_batch) return OkStatus();
  }
}

Status ActivityReplica::Bootstrap() {
  const auto start = std::chrono::steady_clock::now();
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<store::PgActivitySnapshot> snapshot,
                       source_.OpenSnapshot(options_.snapshot_rows_per_fetch));
  const int64_t position = snapshot->position();
  SnapshotWallets wallets(*snapshot);
  store::LmdbActivityIndex::FallibleSortedSource next = std::ref(wallets);
  // An empty index takes the packed append; otherwise only what differs is written.
  const bool empty = index_.wallet_count() == 0;
  ADS_RETURN_IF_ERROR(empty ? index_.LoadSorted(next, static_cast<uint64_t>(position))
                            : index_.ReplaceSorted(next, static_cast<uint64_t>(position)));
  position_ = position;
  ++bootstraps_;
  ADS_LOG(info, "activity replica bootstrapped", "position", position, "rows", wallets.rows_read(),
          "wallets", index_.wallet_count(), "into_empty", empty, "ms", MillisSince(start));
  return OkStatus();
}

}  // namespace adserver::cluster
