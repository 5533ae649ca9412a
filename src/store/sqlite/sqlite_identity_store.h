#pragma once

#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "store/identity_store.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

// IdentityStore on the same SQLite file as SqliteStore (tables `identity_erasures` and
// `identity_meta`, migration 4). Uses its own connection, serialised by a mutex: calls come
// from the erasure-list sync thread and from admin workers, never from an event loop, and each
// is one short statement.
class SqliteIdentityStore final : public IdentityStore {
 public:
  // Opens the database at `path` and applies pending migrations (as SqliteStore::Open does).
  static Result<std::unique_ptr<SqliteIdentityStore>> Open(const std::string& path,
                                                           const SqliteOptions& options = {});
  ~SqliteIdentityStore() override;
  SqliteIdentityStore(const SqliteIdentityStore&) = delete;
  SqliteIdentityStore& operator=(const SqliteIdentityStore&) = delete;

  Result<ErasureDigestKey> DigestKey(const ErasureDigestKey& candidate) override;
  Result<ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) override;
  Status ScanErasures(int64_t after_seq,
                      const std::function<void(const ErasureRecord&)>& fn) override;
  Result<int64_t> DeleteErasuresBefore(int64_t cutoff) override;

 private:
  explicit SqliteIdentityStore(std::unique_ptr<sqlite_detail::Connection> conn);

  Mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::store
