#pragma once

// Exposures in PostgreSQL (cluster mode, issue 17): every node writes the exposures it serves
// to one table, so the node that leads a chain's indexer (or takes an upload with transaction
// hashes) attributes a conversion to the ad a person saw on any node, not only on its own.
//
// Rows are appended, one per (wallet, campaign, decision) with INSERT ... ON CONFLICT DO
// NOTHING from arrays (no read-modify-write: a merged jsonb row per pair cost PostgreSQL several
// times the CPU under load); Get reads a pair's kMaxExposuresPerRecord newest rows, and the
// prior interaction fixed by its oldest row kept. A pair gets at most one row per node per
// coalescing interval of the recorder (10 min) and loses them to expiry after the window, so
// its rows stay bounded (at most 2,016 per node over 14 days, typically a few).
//
// Expiry sweeps run on every node's recorder but once per `min_sweep_interval_seconds` across
// the cluster: a sweep starts only if it claims the exposure_sweeps row (migration 9).
// Thread-safe (one connection behind a mutex).

#include <cstdint>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "store/exposure_store.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}  // namespace pg_detail

struct PostgresExposureOptions {
  // A node starts a sweep only when no node started one for this long (the recorders start
  // one an hour).
  int64_t min_sweep_interval_seconds = 1800;
};

class PostgresExposureStore final : public ExposureStore {
 public:
  static Result<std::unique_ptr<PostgresExposureStore>> Open(
      const std::string& url, const PostgresExposureOptions& options = {});
  ~PostgresExposureStore() override;
  PostgresExposureStore(const PostgresExposureStore&) = delete;
  PostgresExposureStore& operator=(const PostgresExposureStore&) = delete;

  Status AddExposures(std::span<const ExposureWrite> writes) override;
  Result<std::optional<ExposureRecord>> Get(const Address& wallet, Id campaign_id) override;
  // `after` is the last key visited ("<wallet hex>:<campaign id>"). A step that starts a sweep
  // (`after` empty) while another node's sweep is recent visits nothing and reports done.
  Result<ExpiryStep> ExpireStep(int64_t cutoff, std::string_view after,
                                size_t max_records) override;
  Result<ExposureStats> Stats() override;

 private:
  PostgresExposureStore(std::unique_ptr<pg_detail::PgConnection> conn,
                        const PostgresExposureOptions& options);
  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
  const PostgresExposureOptions options_;
};

}  // namespace adserver::store
