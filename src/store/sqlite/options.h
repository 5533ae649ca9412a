#pragma once

#include <chrono>

namespace adserver::store {

// Options of the SQLite store adapter (SqliteStore::Open).
struct SqliteOptions {
  // How long a statement waits for a lock held by another connection or process (the CLI and
  // the server share one file) before the call fails with Unavailable.
  std::chrono::milliseconds busy_timeout{5000};
  // Create the database file (and apply every migration) if it does not exist yet. When false,
  // opening a missing file is Unavailable.
  bool create_if_missing = true;
  // Page cache per connection, in KiB. SQLite's default is 2000 KiB.
  int cache_size_kib = 8192;
  // Idle read connections kept open for reuse. Reads run on their own connections so they do
  // not wait behind writes (WAL); more are opened on demand when all are busy.
  int max_idle_read_connections = 4;
};

}  // namespace adserver::store
