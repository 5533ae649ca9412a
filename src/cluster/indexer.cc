#include "cluster/indexer.h"

#include "common/check.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::cluster {
namespace {

// "adsx": the prefix of the indexer leadership keys (other advisory locks use "adsr...").
constexpr int64_t kLeaderKeyPrefix = 0x61647378;

}  // namespace

int64_t ClusterIndexer::LeaderKey(int64_t chain_id) {
  return static_cast<int64_t>((static_cast<uint64_t>(kLeaderKeyPrefix) << 32) |
                              (static_cast<uint64_t>(chain_id) & 0xffffffffu));
}

Status ClusterIndexer::FencedLedger::CheckLeading() const {
  if (leading_.load(std::memory_order_acquire)) return OkStatus();
  return UnavailableError("this node no longer leads the indexer of chain " +
                          std::to_string(chain_id_));
}

Status ClusterIndexer::FencedLedger::ResetCheckpoint(int64_t chain_id,
                                                     const store::ChainCheckpoint& checkpoint) {
  ADS_RETURN_IF_ERROR(CheckLeading());
  return ledger_.ResetCheckpoint(chain_id, checkpoint);
}

Status ClusterIndexer::FencedLedger::ApplyBlocks(int64_t chain_id,
                                                 std::span<const store::IndexedBlock> blocks) {
  ADS_RETURN_IF_ERROR(CheckLeading());
  return ledger_.ApplyBlocks(chain_id, blocks);
}

Status ClusterIndexer::FencedLedger::UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) {
  ADS_RETURN_IF_ERROR(CheckLeading());
  return ledger_.UndoBlocksAfter(chain_id, ancestor);
}

ClusterIndexer::ClusterIndexer(store::ChainLedger& ledger, int64_t chain_id, IndexerPorts ports,
                               ClusterIndexerOptions cluster)
    : chain_id_(chain_id),
      ports_(std::move(ports)),
      cluster_(cluster),
      ledger_(ledger, leading_, chain_id) {
  ADS_CHECK(ports_.open_lock && ports_.make_indexer);
}

ClusterIndexer::~ClusterIndexer() { Stop(); }

void ClusterIndexer::Start() {
  ADS_CHECK(!contender_.joinable()) << "ClusterIndexer started twice";
  contender_ = std::thread([this] {
    NameThisThread("indexer-lead");
    Contend();
  });
}

void ClusterIndexer::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  stop_cv_.NotifyAll();
  if (contender_.joinable()) contender_.join();
}

std::optional<ingest::chain::ChainIndexer::Progress> ClusterIndexer::progress() const {
  std::shared_ptr<TermIndexer> indexer;
  {
    MutexLock lock(mu_);
    indexer = indexer_;
  }
  if (!indexer) return std::nullopt;
  return indexer->progress();
}

bool ClusterIndexer::WaitUnlessStopped(std::chrono::milliseconds duration) {
  MutexLock lock(mu_);
  return stop_cv_.WaitFor(mu_, duration, [this]() ADS_REQUIRES(mu_) { return stop_; });
}

void ClusterIndexer::Contend() {
  std::unique_ptr<store::LeaderLock> lock;
  for (bool stopped = false; !stopped; stopped = WaitUnlessStopped(cluster_.lead_check)) {
    bool lead = CheckLeadership(lock);
    if (lead && !leading()) {
      ADS_LOG(info, "indexer leadership taken: this node indexes the chain", "chain", chain_id_);
      terms_.fetch_add(1, std::memory_order_relaxed);
      StartIndexer();
    } else if (!lead && leading()) {
      StopIndexer();
      ADS_LOG(warn, "indexer leadership lost: indexer stopped", "chain", chain_id_);
    } else if (lead && ended_.load() && !fatal_.load()) {
      StopIndexer();  // joins the ended run
      StartIndexer();
    }
  }
  // The indexer stops before the lock goes: no other node leads while this one still writes.
  if (leading()) StopIndexer();
  if (lock) lock->Release();
}

bool ClusterIndexer::CheckLeadership(std::unique_ptr<store::LeaderLock>& lock) {
  if (!lock) {
    Result<std::unique_ptr<store::LeaderLock>> opened = ports_.open_lock(LeaderKey(chain_id_));
    if (!opened.ok()) return false;  // PostgreSQL unreachable: nobody can lead through it
    lock = std::move(*opened);
  }
  Result<bool> lead = lock->TryLead();
  return lead.ok() && *lead;
}

void ClusterIndexer::StartIndexer() {
  // Before the first write: the ledger checks it.
  leading_.store(true, std::memory_order_release);
  ended_ = false;
  fatal_ = false;
  Result<std::unique_ptr<TermIndexer>> created = ports_.make_indexer(ledger_);
  if (!created.ok()) {
    // Retried at the next leadership check (as a run that ended).
    ADS_LOG(warn, "indexer not started; retried at the next leadership check", "chain", chain_id_,
            "status", created.status());
    ended_ = true;
    return;
  }
  std::shared_ptr<TermIndexer> indexer = std::move(*created);
  {
    MutexLock lock(mu_);
    indexer_ = indexer;
  }
  worker_ = std::thread([this, indexer] {
    NameThisThread("indexer");
    LowerThisThreadPriority();
    Status status = indexer->Run();
    if (status.code() == Code::kConflict) {
      fatal_ = true;
      ADS_LOG(error, "indexer stopped; serving goes on", "chain", chain_id_, "status", status);
    } else if (!status.ok()) {
      ADS_LOG(warn, "indexer ended; restarted at the next leadership check", "status", status);
    }
    ended_ = true;
  });
}

void ClusterIndexer::StopIndexer() {
  // The ledger refuses writes from here on, whatever step the indexer is in.
  leading_.store(false, std::memory_order_release);
  std::shared_ptr<TermIndexer> indexer;
  {
    MutexLock lock(mu_);
    indexer = std::move(indexer_);
  }
  if (indexer) indexer->Stop();
  if (worker_.joinable()) worker_.join();
}

}  // namespace adserver::cluster
