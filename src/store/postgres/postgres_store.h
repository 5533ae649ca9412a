#pragma once

// The PostgreSQL adapter (cluster mode, issue 17): the store interfaces that PostgreSQL holds
// for every node of a cluster. So far the decision counters (CampaignCounterStore) and the
// identity erasure list (IdentityStore); the other interfaces follow. Thread-safe: one
// connection behind a mutex (these calls run on background and admin threads, never on an
// event loop). A lost connection answers Unavailable and is re-established by the next call.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/campaign_counter_store.h"
#include "store/identity_store.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}

class PostgresStore final : public CampaignCounterStore, public IdentityStore {
 public:
  // Connects to `url` (postgresql://user@host:port/db or libpq's key=value form) and applies
  // the schema migrations. Unavailable if the server cannot be reached.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url);
  ~PostgresStore() override;

  // CampaignCounterStore: rows upserted in one transaction.
  Status SaveCampaignCounters(const std::vector<CampaignCountersRecord>& rows) override;
  Result<std::vector<CampaignCountersRecord>> LoadCampaignCounters() override;

  // IdentityStore. Erasures are written under a transaction-scoped advisory lock, so sequence
  // numbers commit in order and a node following the list (ScanErasures after the last seq it
  // saw) never skips one that commits late.
  Result<ErasureDigestKey> DigestKey(const ErasureDigestKey& candidate) override;
  Result<ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) override;
  Status ScanErasures(int64_t after_seq,
                      const std::function<void(const ErasureRecord&)>& fn) override;
  Result<int64_t> DeleteErasuresBefore(int64_t cutoff) override;

 private:
  explicit PostgresStore(std::unique_ptr<pg_detail::PgConnection> conn);

  std::mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_;  // guarded by mu_
};

}  // namespace adserver::store
