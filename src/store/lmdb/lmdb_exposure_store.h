#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "store/exposure_store.h"
#include "store/lmdb/detail/lmdb_env.h"

namespace adserver::store {

struct LmdbExposureOptions {
  // Upper bound of the file (LMDB map size): the store's size cap. Writes beyond it fail with
  // Unavailable (and are dropped by the caller) until expiry frees pages.
  size_t map_size_bytes = size_t{4} << 30;
  // Skip fsync on commit: a process crash loses nothing, an operating-system crash may lose
  // the last exposures (which only weakens attribution; nothing billed depends on them).
  bool no_sync = true;
};

// ExposureStore in its own LMDB environment (DATA_DIR/exposures.lmdb). Key: wallet (20) |
// campaign id (8, big-endian); value: prior_last_seen (8) | n (1) | n x entry (decision id 16,
// exposed_at 8, ad 8, publisher 8, person 8, arm and adUnitId each as length byte + bytes).
class LmdbExposureStore final : public ExposureStore {
 public:
  static Result<std::unique_ptr<LmdbExposureStore>> Open(const std::string& dir,
                                                         const LmdbExposureOptions& options = {});
  ~LmdbExposureStore() override;
  LmdbExposureStore(const LmdbExposureStore&) = delete;
  LmdbExposureStore& operator=(const LmdbExposureStore&) = delete;

  Status AddExposures(std::span<const ExposureWrite> writes) override;
  Result<std::optional<ExposureRecord>> Get(const Address& wallet, Id campaign_id) override;
  Result<ExpiryStep> ExpireStep(int64_t cutoff, std::string_view after,
                                size_t max_records) override;
  Result<ExposureStats> Stats() override;

 private:
  LmdbExposureStore(std::unique_ptr<detail::LmdbEnv> env, MDB_dbi dbi)
      : env_(std::move(env)), dbi_(dbi) {}
  std::unique_ptr<detail::LmdbEnv> env_;
  MDB_dbi dbi_;
};

}  // namespace adserver::store
