#pragma once

// The click outbox (store/click_outbox.h) in a SQLite file of its own in the node's data
// directory (DATA_DIR/click-outbox.db): WAL, synchronous=FULL (an appended click survives a
// power loss, not only a process crash).

#include <memory>
#include <mutex>
#include <string>

#include "store/click_outbox.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

class SqliteClickOutbox final : public ClickOutbox {
 public:
  static Result<std::unique_ptr<SqliteClickOutbox>> Open(const std::string& path);
  ~SqliteClickOutbox() override;

  Status Append(std::span<ClickRecord> rows) override;
  Result<std::vector<ClickRecord>> Oldest(size_t limit) override;
  Status Remove(Id through) override;
  Result<int64_t> Count() override;

 private:
  explicit SqliteClickOutbox(std::unique_ptr<sqlite_detail::Connection> conn);

  std::mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_;  // guarded by mu_
};

}  // namespace adserver::store
