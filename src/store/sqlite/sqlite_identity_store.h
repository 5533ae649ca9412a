#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "store/identity_store.h"
#include "store/sqlite/options.h"

namespace adserver::store {

namespace sqlite_detail {
class Connection;
}  // namespace sqlite_detail

// IdentityStore on the same SQLite file as SqliteStore (tables `identities` and
// `identity_wallets`, migration 2). Uses its own connection, serialised by a mutex: identity
// calls come from one background flusher/sweeper and from admin workers, never from an event
// loop, so one connection is enough and it never holds up inventory writes for long.
class SqliteIdentityStore final : public IdentityStore {
 public:
  // Opens the database at `path` and applies pending migrations (as SqliteStore::Open does).
  static Result<std::unique_ptr<SqliteIdentityStore>> Open(const std::string& path,
                                                           const SqliteOptions& options = {});
  ~SqliteIdentityStore() override;
  SqliteIdentityStore(const SqliteIdentityStore&) = delete;
  SqliteIdentityStore& operator=(const SqliteIdentityStore&) = delete;

  Status PutIdentities(const std::vector<IdentityRecord>& identities) override;
  Status ScanIdentities(int64_t min_last_seen,
                        const std::function<void(IdentityRecord&&)>& fn) override;
  Result<std::vector<IdentityRecord>> IdentitiesForWallet(const Address& wallet) override;
  Result<int64_t> EraseWallet(const Address& wallet) override;
  Result<int64_t> DeleteIdentitiesBefore(int64_t cutoff) override;

 private:
  explicit SqliteIdentityStore(std::unique_ptr<sqlite_detail::Connection> conn);

  std::mutex mu_;
  std::unique_ptr<sqlite_detail::Connection> conn_;  // guarded by mu_
};

}  // namespace adserver::store
