#pragma once

// How nodes learn that something they follow changed (issue 17 item 3: a write on any node
// reaches every node's serving snapshot within 1 s). A writer bumps the version of what it
// changed (`BumpChangeVersion`, inside its own transaction, which NOTIFYs adserver_changes at
// commit); a follower waits on a session that LISTENs to that channel and reads the version.
// NOTIFY is fast but not replayed after a reconnect, so the version is also read at every poll
// interval: a change whose notification was lost (a failover, a dropped session) is seen at the
// next poll. Versions only grow; a follower compares them with the one its snapshot was built
// from.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/change_feed.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}

// In the writer's open transaction on `conn`: version of `name` + 1, and a notification to
// every follower once the transaction commits (none if it rolls back).
Status BumpChangeVersion(pg_detail::PgConnection& conn, std::string_view name);

class PgChangeFeed final : public ChangeFeed {
 public:
  // A session of its own that LISTENs; `name` is what this feed follows.
  static Result<std::unique_ptr<PgChangeFeed>> Open(const std::string& url, std::string name);
  ~PgChangeFeed() override;
  PgChangeFeed(const PgChangeFeed&) = delete;
  PgChangeFeed& operator=(const PgChangeFeed&) = delete;

  // The current version of `name` (0 before the first bump).
  Result<int64_t> Version();
  // Waits until `name`'s version differs from `seen`, at most `timeout`, and returns the
  // version then (equal to `seen` after a quiet timeout). Wakes on a notification at once;
  // reads the version at least every `poll`. A lost session is opened again (and the version
  // read) before waiting on. Unavailable while PostgreSQL cannot be reached. Not thread-safe.
  Result<int64_t> WaitForChange(
      int64_t seen, std::chrono::milliseconds timeout,
      std::chrono::milliseconds poll = std::chrono::milliseconds(500)) override;

 private:
  PgChangeFeed(std::string url, std::string name);
  Status Connect();

  const std::string url_;
  const std::string name_;
  std::unique_ptr<pg_detail::PgConnection> conn_;
};

}  // namespace adserver::store
