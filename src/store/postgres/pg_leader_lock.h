#pragma once

// Leadership of one job across the nodes of a cluster (issue 17 item 4: the live indexer runs
// once per chain), held as a session-level PostgreSQL advisory lock on a connection of its own.
// The server releases the lock when that session ends: at once when the leader's process dies
// (its socket closes), and after the server's TCP keepalive gives up on a machine that vanished
// (this session sets 2 s idle, 1 s interval, 3 probes: about 5 s). A node that wants the job
// calls TryLead() every second or so; the holder calls it too, which checks the session is
// still alive: false means leadership is lost (the session ended, a partition) and the job must
// stop at once. Between the server ending a session and its holder noticing, two nodes may
// both believe they lead for up to one check interval; the indexer's writes are idempotent
// (unique keys) for that reason.

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "store/leader_lock.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}

class PgLeaderLock final : public LeaderLock {
 public:
  // `key`: the job's advisory lock key (e.g. a fixed prefix and the chain id).
  static Result<std::unique_ptr<PgLeaderLock>> Open(const std::string& url, int64_t key);
  ~PgLeaderLock() override;
  PgLeaderLock(const PgLeaderLock&) = delete;
  PgLeaderLock& operator=(const PgLeaderLock&) = delete;

  // True while this node leads: takes the lock when free, or confirms the session holding it is
  // alive. False when another node leads or leadership was just lost. Unavailable when
  // PostgreSQL cannot be reached (then this node does not lead). Not thread-safe.
  Result<bool> TryLead() override;
  bool leading() const { return leading_; }
  // Gives leadership up (graceful shutdown: another node takes over at its next TryLead).
  void Release() override;

 private:
  PgLeaderLock(std::string url, int64_t key);
  Status Connect();

  const std::string url_;
  const int64_t key_;
  std::unique_ptr<pg_detail::PgConnection> conn_;
  bool leading_ = false;
};

}  // namespace adserver::store
