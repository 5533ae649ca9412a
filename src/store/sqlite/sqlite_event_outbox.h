#pragma once

// The event outbox (store/event_outbox.h: clicks and advertiser events) in a SQLite file of its
// own in the node's data directory (DATA_DIR/event-outbox.db): WAL, synchronous=FULL (an
// appended event survives a power loss, not only a process crash).

#include <memory>
#include <string>

#include "common/mutex.h"
#include "store/event_outbox.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

class SqliteEventOutbox final : public ClickOutbox, public AdvertiserEventOutbox {
 public:
  static Result<std::unique_ptr<SqliteEventOutbox>> Open(const std::string& path);
  ~SqliteEventOutbox() override;

  Status Append(std::span<ClickRecord> rows) override;
  Result<std::vector<ClickRecord>> Oldest(size_t limit) override;
  Status Remove(Id through) override;
  Result<int64_t> Count() override;

  Status AppendEvent(AdvertiserEventRecord& event) override;
  Result<std::vector<AdvertiserEventRecord>> OldestEvents(size_t limit) override;
  Status RemoveEvent(Id id) override;
  Result<int64_t> EventCount() override;

 private:
  explicit SqliteEventOutbox(std::unique_ptr<sqlite_detail::Connection> conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store
